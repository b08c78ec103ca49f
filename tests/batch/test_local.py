"""Batch runs on the local engine: results in row order, errors as data, resume,
the manifest and 1,000 concurrent sessions."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from skillkit.batch import (
    AgentRowTask,
    LocalEngine,
    RateLimiter,
    Row,
    RowResult,
    Template,
    canonical_hash,
    manifest_path,
    run_batch,
    run_to_file,
)
from skillkit.batch.results import ResultsFile
from tests.batch.agents import make_agent


def words(count: int) -> list[dict[str, str]]:
    return [{"word": f"w{'x' * (i % 7)}{i}"} for i in range(count)]


async def test_results_come_back_in_row_order_with_usage() -> None:
    rows = words(20)
    results = await run_batch(
        rows, make_agent, prompt="Count the letters of {word}", engine=LocalEngine(5)
    )
    assert [r.row for r in results] == list(range(20))
    for row, result in zip(rows, results, strict=True):
        assert result.error is None
        assert result.text == f"{row['word']} has {len(row['word'])} letters"
        assert result.stop_reason == "stop"
        assert result.usage is not None and result.usage.output > 0


async def test_a_failing_agent_and_bad_rows_are_recorded_as_data() -> None:
    rows: list[dict[str, str] | Row] = [
        {"word": "fine"},
        {"word": "boom"},
        {"other": "x"},
        Row(3, error="invalid JSON: expected value"),
    ]
    results = await run_batch(rows, make_agent, prompt="Count the letters of {word}")
    assert results[0].error is None
    assert results[1].stop_reason == "error" and "the model fell over" in (results[1].error or "")
    assert results[2].error == "row has no field 'word'"
    assert results[3].error == "invalid JSON: expected value"


async def test_an_agent_that_cannot_be_made_is_a_row_error() -> None:
    def broken() -> object:
        raise RuntimeError("no key for this provider")

    [result] = await run_batch([{"prompt": "hi"}], broken)  # type: ignore[arg-type]
    assert result.error == "RuntimeError: no key for this provider"


async def test_without_a_template_the_prompt_field_is_the_prompt() -> None:
    results = await run_batch([{"prompt": "Count the letters of abc"}, {"word": "x"}], make_agent)
    assert results[0].text == "abc has 3 letters"
    assert results[1].error == "row has no string field 'prompt' (and no template was given)"


async def test_the_limiter_paces_model_calls_across_the_run() -> None:
    limiter = RateLimiter(rate=1000.0, burst=2)
    calls: list[float] = []
    original = limiter.delay

    def counting() -> float:
        wait = original()
        calls.append(wait)
        return wait

    limiter.delay = counting  # type: ignore[method-assign]
    results = await run_batch(
        words(6), make_agent, prompt="Count the letters of {word}", limiter=limiter
    )
    assert all(r.error is None for r in results)
    assert len(calls) == 12  # two model calls per row, every one through the bucket
    assert any(wait > 0 for wait in calls)  # the burst of 2 ran out


def write_dataset(path: Path, rows: list[dict[str, str]], *, bad: bool = False) -> None:
    lines = [json.dumps(row) for row in rows]
    if bad:
        lines.insert(3, "{oops")
    path.write_text("\n".join(lines) + "\n")


async def test_run_to_file_writes_results_and_a_manifest(tmp_path: Path) -> None:
    data, out = tmp_path / "data.jsonl", tmp_path / "out" / "results.jsonl"
    write_dataset(data, words(12), bad=True)
    seen: list[int] = []
    task = AgentRowTask(make_agent, Template("Count the letters of {word}"))
    summary = await run_to_file(
        data,
        out,
        task,
        engine=LocalEngine(4),
        settings={"prompt": task.template.source if task.template else None},
        on_progress=lambda progress, result: seen.append(progress.done),
    )
    assert summary.total == 13 and summary.ran == 13 and summary.errors == 1
    assert summary.complete
    assert seen == list(range(14))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["row"] for line in lines) == list(range(13))
    assert next(line for line in lines if line["row"] == 3)["error"].startswith("invalid JSON")
    manifest = json.loads(manifest_path(out).read_text())
    assert manifest["results_sha256"] == summary.results_sha256
    assert manifest["complete"] is True and manifest["rows"] == 13 and manifest["errors"] == 1
    assert manifest["settings"] == {"prompt": "Count the letters of {word}"}
    with ResultsFile(out) as reread:
        assert canonical_hash(reread.done.values()) == summary.results_sha256


async def test_a_second_run_skips_recorded_rows_and_cuts_a_torn_line(tmp_path: Path) -> None:
    data, out = tmp_path / "data.jsonl", tmp_path / "results.jsonl"
    write_dataset(data, words(10))
    task = AgentRowTask(make_agent, Template("Count the letters of {word}"))
    first = await run_to_file(data, out, task)
    lines = out.read_bytes().splitlines(keepends=True)
    # keep five rows and half of a sixth, as a killed process would leave them
    out.write_bytes(b"".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    second = await run_to_file(data, out, task)
    assert second.skipped == 5 and second.ran == 5 and second.complete
    rows = [json.loads(line)["row"] for line in out.read_text().splitlines()]
    assert sorted(rows) == list(range(10))
    assert second.results_sha256 == first.results_sha256


async def test_the_hash_ignores_order_and_volatile_fields() -> None:
    a = [RowResult(row=1, text="b", duration_ms=5.0), RowResult(row=0, text="a", attempts=2)]
    b = [RowResult(row=0, text="a", worker="ray-1:7"), RowResult(row=1, text="b")]
    assert canonical_hash(a) == canonical_hash(b)
    assert canonical_hash(a) != canonical_hash([RowResult(row=0, text="A"), a[0]])


@pytest.mark.timeout(300)
async def test_a_thousand_concurrent_sessions_in_one_process() -> None:
    rows = words(1000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    results = await run_batch(
        rows, make_agent, prompt="Count the letters of {word}", engine=LocalEngine(1000)
    )
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert len(results) == 1000
    for row, result in zip(rows, results, strict=True):
        # each answer names its own row's word: no event or message crossed sessions
        assert result.text == f"{row['word']} has {len(row['word'])} letters", result
    print(f"peak RSS grew {(after - before) / 1000:.0f} KiB per session over 1,000")


async def test_structured_output_per_row() -> None:
    from skillkit import AgentConfig, AgentRunner
    from skillkit.adapters.scripted import FunctionAdapter, Reply
    from skillkit.models import LLMRequest, message_text

    def answer(request: LLMRequest) -> Reply:
        word = message_text(request.messages[-1]).split()[-1]
        return Reply(output={"word": word, "length": len(word)})

    def agent() -> AgentRunner:
        return AgentRunner(AgentConfig(model="scripted"), adapter=FunctionAdapter(answer))

    schema = {
        "type": "object",
        "properties": {"word": {"type": "string"}, "length": {"type": "integer"}},
        "required": ["word", "length"],
    }
    results = await run_batch(
        [{"w": "abc"}, {"w": "hello"}], agent, prompt="Measure {w}", output_type=schema
    )
    assert [r.output for r in results] == [
        {"word": "abc", "length": 3},
        {"word": "hello", "length": 5},
    ]
