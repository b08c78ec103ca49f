"""The two check kinds a scripted model cannot show, through the real ``skillkit eval``:
``max_cost`` on a catalog model with prices (``openai:gpt-4o-mini``) whose requests go
(``OPENAI_BASE_URL``) to a local Chat Completions server reporting the tokens used, the
cost priced from the catalog; and ``action_called`` on a skill with a deterministic
action, copied into the case's workspace, called by a scripted model with the right
arguments or others."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skillkit.model_registry import default_registry
from skillkit.skills.runner import action_tool_name
from tests.adapters.wire_formats import chat_text, chat_usage
from tests.adapters.wire_server import SSEReply, WireServer
from tests.evals.conftest import SKILLKIT, environment, make_project, skillkit
from tests.evals.test_cli import checks_by_kind, outcomes

pytestmark = pytest.mark.timeout(120)

FAKE_KEY = "sk-test-not-a-real-key"

PRICED_SUITE = """\
name: priced
models: [openai:gpt-4o-mini]
cases:
  - name: answer
    prompt: Say hi
    expect:
      - contains: Hi there
      - max_cost: {limit}
"""


def catalog_price(prompt_tokens: int, completion_tokens: int) -> float:
    """What ``gpt-4o-mini`` costs for these tokens at the catalog's prices (USD per
    million tokens), no cached tokens."""
    definition = default_registry().get("openai:gpt-4o-mini")
    assert definition is not None
    assert definition.cost.input > 0 and definition.cost.output > 0
    million = 1_000_000
    return (
        prompt_tokens * definition.cost.input + completion_tokens * definition.cost.output
    ) / million


async def priced_run(
    project: Path, home: Path, out: str, prompt_tokens: int, completion_tokens: int
) -> tuple[int, str, str, list[dict[str, object]]]:
    """``skillkit eval priced.yaml`` with ``OPENAI_BASE_URL`` on the server (and a fake
    ``OPENAI_API_KEY``), the server answering once, reporting the tokens given; the exit
    code, the output and the requests' bodies."""
    env = {
        key: value
        for key, value in environment(home).items()
        if not key.endswith(("_API_KEY", "_BASE_URL")) and not key.startswith("SKILLKIT_")
    }
    async with WireServer() as server:
        env["OPENAI_API_KEY"] = FAKE_KEY
        env["OPENAI_BASE_URL"] = server.base_url + "/v1"
        server.reply(
            SSEReply(chat_text("Hi there!", usage=chat_usage(prompt_tokens, completion_tokens)))
        )
        process = await asyncio.create_subprocess_exec(
            str(SKILLKIT),
            "eval", "priced.yaml", "--out", out, "--concurrency", "1",
            cwd=project, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        stdout, stderr = await asyncio.wait_for(process.communicate(), 90)
        requests = list(server.requests)
    assert process.returncode is not None
    for request in requests:
        assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    bodies = [request.json() for request in requests]
    return process.returncode, stdout.decode(), stderr.decode(), bodies


async def test_max_cost_passes_a_cheap_run_and_fails_a_dear_one_at_catalog_prices(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    limit = 0.01
    (project / "priced.yaml").write_text(PRICED_SUITE.format(limit=limit))
    cheap = catalog_price(1200, 30)
    dear = catalog_price(100_000, 2_000)
    assert cheap < limit < dear  # the catalog's prices put the two runs either side

    code, stdout, stderr, bodies = await priced_run(project, home, "runs/cheap", 1200, 30)
    assert code == 0, stderr
    assert [body["model"] for body in bodies] == ["gpt-4o-mini"]  # one model call, here
    [row] = [json.loads(line) for line in (project / "runs/cheap/results.jsonl").open()]
    assert row["cost"] == pytest.approx(cheap, rel=1e-9)
    outcome = row["output"]
    assert outcome["passed"] and outcome["model"] == "openai:gpt-4o-mini"
    assert checks_by_kind(outcome)["max_cost"] == [
        {"check": f"max_cost: {limit}", "kind": "max_cost", "passed": True}
    ]
    assert "openai:gpt-4o-mini: 1/1 passed" in stdout

    code, stdout, stderr, bodies = await priced_run(project, home, "runs/dear", 100_000, 2_000)
    assert code == 0, stderr  # every row has a result: a failed check is not a failed run
    assert len(bodies) == 1
    [row] = [json.loads(line) for line in (project / "runs/dear/results.jsonl").open()]
    assert row["cost"] == pytest.approx(dear, rel=1e-9)
    outcome = row["output"]
    assert not outcome["passed"]
    kinds = checks_by_kind(outcome)
    assert kinds["contains"][0]["passed"]  # the answer is right; only the cost fails
    assert kinds["max_cost"] == [
        {
            "check": f"max_cost: {limit}",
            "kind": "max_cost",
            "passed": False,
            "reason": f"cost ${dear:.6f}, more than ${limit}",
        }
    ]
    assert "openai:gpt-4o-mini: 0/1 passed" in stdout


ADD = action_tool_name("arithmetic", "add")


@pytest.mark.parametrize(
    ("script", "allow", "reason"),
    [
        ("adds.yaml", True, None),
        (
            "adds_wrong.yaml",
            True,
            f'\'{ADD}\' was called, never with {{"a": 2, "b": 3}} (e.g. {{"a": 2, "b": 4}})',
        ),
        # the right arguments, but nobody allowed the action: it never ran
        ("adds.yaml", False, f"'{ADD}' was called with those arguments but failed: "),
    ],
    ids=["right-arguments", "other-arguments", "blocked"],
)
def test_action_called_through_the_real_command(
    tmp_path: Path, script: str, allow: bool, reason: str | None
) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    args = ["eval", "actions.yaml", "--models", f"scripted:scripts/{script}", "--out", "run"]
    if allow:
        args += ["--allow", ADD]
    result = skillkit(*args, cwd=project, home=home)
    assert result.returncode == 0, result.stderr
    [outcome] = outcomes(project / "run")
    kinds = checks_by_kind(outcome)
    assert outcome["skills_loaded"] == ["arithmetic"]
    assert outcome["tools"] == ["skill", ADD]
    [check] = kinds["action_called"]
    if reason is None:
        assert outcome["passed"] and check["passed"]
        assert kinds["python"][0]["passed"]  # the answer is what the action printed
        return
    assert not outcome["passed"] and not check["passed"]
    assert str(check["reason"]).startswith(reason), check["reason"]
    transcript = outcome["transcript"]
    [result_item] = [item for item in transcript if item.get("tool") == ADD]
    if allow:  # the action ran, on the wrong numbers: its own output says so
        assert not result_item["is_error"]
        assert result_item["text"] == "arithmetic/add: exit code 0\n--- stdout ---\n6"
    else:
        assert result_item["is_error"] and "Permission denied" in result_item["text"]
        assert "Permission denied" in str(check["reason"])
