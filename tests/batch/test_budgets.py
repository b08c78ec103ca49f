"""``skillkit batch --max-cost`` (per row) and ``--max-total-cost`` (the whole batch), as a
real process against a local server speaking OpenAI's format for a catalog model with
prices (gpt-4o: a reply of 100,000 input and 10,000 output tokens costs $0.35)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.wire_formats import chat_chunk, chat_text, chat_tool_call, chat_usage
from tests.adapters.wire_server import SSE, SSEReply, WireServer

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(120)

EXPENSIVE = chat_usage(100_000, 10_000)  # $0.35 at gpt-4o's prices


class Server:
    """A `WireServer` on its own event loop in a thread (the command is another process)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.wire = self.call(WireServer().start())

    def call(self, coroutine: object) -> WireServer:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)  # type: ignore[arg-type]

    def reply(self, *replies: SSEReply) -> None:
        self.loop.call_soon_threadsafe(self.wire.reply, *replies)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.wire.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    (work / "docs").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (work / "docs" / "a.txt").write_text("alpha\n")
    lines = [json.dumps({"topic": f"item {i}"}) for i in range(5)]
    (work / "data.jsonl").write_text("\n".join(lines) + "\n")
    return work


def batch(project: Path, server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(SKILLKIT), "batch", "data.jsonl", "--prompt", "About {topic}",
            "--model", "openai:gpt-4o", "--base-url", server.wire.base_url + "/v1",
            "--api-key-env", "SKILLKIT_TEST_KEY", "--out", "results.jsonl",
            "--concurrency", "1", *args,
        ],
        cwd=project,
        env={**os.environ, "HOME": str(project.parent / "home"), "SKILLKIT_TEST_KEY": "sk-test"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )  # fmt: skip


def results(project: Path) -> dict[int, dict[str, object]]:
    lines = [json.loads(line) for line in (project / "results.jsonl").read_text().splitlines()]
    found = {line["row"]: line for line in lines}
    assert len(found) == len(lines), "a row was recorded twice"
    return found


def manifest(project: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((project / "results.jsonl.manifest.json").read_text())
    return loaded


def tool_turn() -> SSEReply:
    return SSEReply(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_tool_call(0, "call_1", "ls", '{"path": "docs"}'),
            chat_chunk({}, "tool_calls"),
            chat_chunk(usage=EXPENSIVE),
            SSE("[DONE]"),
        ]
    )


def test_max_cost_stops_each_rows_run_before_the_call_that_would_pass_it(
    project: Path, server: Server
) -> None:
    # each row: an expensive tool turn ($0.35), then a second call that --max-cost 0.30
    # refuses; one row has a cheap first turn and is answered
    (project / "data.jsonl").write_text(
        "\n".join(json.dumps({"topic": t}) for t in ("costly", "cheap")) + "\n"
    )
    server.reply(tool_turn())
    server.reply(
        SSEReply(
            [
                chat_chunk({"role": "assistant", "content": ""}),
                chat_tool_call(0, "call_1", "ls", '{"path": "docs"}'),
                chat_chunk({}, "tool_calls"),
                chat_chunk(usage=chat_usage(100, 10)),
                SSE("[DONE]"),
            ]
        ),
        SSEReply(chat_text("Listed.", usage=chat_usage(120, 5))),
    )
    run = batch(project, server, "--max-cost", "0.30")
    assert run.returncode == 0, run.stderr
    found = results(project)
    assert found[0]["stop_reason"] == "budget"
    assert found[0]["cost"] == pytest.approx(0.35)
    assert "max_cost_usd" in str(found[0]["error"])
    assert found[1]["stop_reason"] == "stop" and found[1]["text"] == "Listed."
    assert len(server.wire.requests) == 3  # the refused call was never sent
    assert manifest(project)["settings"]["max_cost"] == 0.30  # type: ignore[index]


def test_max_total_cost_holds_back_rows_and_a_higher_limit_resumes_them(
    project: Path, server: Server
) -> None:
    server.reply(*[SSEReply(chat_text(f"Answer {i}.", usage=EXPENSIVE)) for i in range(5)])
    run = batch(project, server, "--max-total-cost", "1")
    assert run.returncode == 1, run.stderr
    assert sorted(results(project)) == [0, 1, 2]  # $0.35 + $0.35 + $0.35 passes $1
    assert len(server.wire.requests) == 3
    assert "2 rows not started: the batch spent $1.0500, reaching --max-total-cost $1" in run.stderr
    first = manifest(project)
    assert first["complete"] is False
    assert first["not_started"] == {
        "rows": [3, 4],
        "reason": "the batch spent $1.0500, reaching --max-total-cost $1",
    }

    again = batch(project, server, "--max-total-cost", "1")  # the same limit: nothing to run
    assert again.returncode == 1 and len(server.wire.requests) == 3

    resumed = batch(project, server, "--max-total-cost", "2")
    assert resumed.returncode == 0, resumed.stderr
    found = results(project)
    assert sorted(found) == [0, 1, 2, 3, 4]
    assert [found[i]["text"] for i in range(5)] == [f"Answer {i}." for i in range(5)]
    final = manifest(project)
    assert final["complete"] is True and final["not_started"] is None


def test_unknown_prices_hold_back_the_rest_of_the_batch(project: Path) -> None:
    script = project / "script.yaml"
    script.write_text("replies:\n  - text: done\n")
    run = subprocess.run(
        [
            str(SKILLKIT), "batch", "data.jsonl", "--prompt", "About {topic}",
            "--model", f"scripted:{script}", "--out", "results.jsonl", "--concurrency", "1",
            "--max-total-cost", "5",
        ],
        cwd=project,
        env={**os.environ, "HOME": str(project.parent / "home")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )  # fmt: skip
    # a scripted model has no prices but reports (estimated) usage: row 0's cost is
    # unknown, so the batch's spending cannot be bounded and no further row starts
    found = results(project)
    assert sorted(found) == [0] and found[0]["cost"] is None
    assert run.returncode == 1
    assert "4 rows not started: the cost of row 0 is unknown" in run.stderr
