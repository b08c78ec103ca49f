"""Every check passes where it should and fails where it should, with a reason; a check
that cannot decide (a function that raises, a judge that fails) fails closed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.evals import Check, EvalRun, ToolCallRecord, parse_suite, run_eval
from skillkit.evals.checks import run_check
from skillkit.models import LLMRequest, message_text
from skillkit.skills.runner import action_tool_name
from tests.evals import agents

pytestmark = pytest.mark.timeout(60)


def a_run(workspace: Path, **changes: Any) -> EvalRun:
    values: dict[str, Any] = {
        "case": "c",
        "model": "m",
        "prompt": "Greet Ada",
        "text": '{"greeting": "Hello, Ada!"}',
        "stop_reason": "stop",
        "turns": 3,
        "tool_calls": [
            ToolCallRecord("skill", {"name": "greeting"}),
            ToolCallRecord("skill", {"name": "farewell"}, is_error=True),
            ToolCallRecord("write", {"path": "out.txt", "content": "Hello"}),
            ToolCallRecord(action_tool_name("convert", "run"), {"file": "a.pdf", "pages": 2}),
        ],
        "workspace": workspace,
        "cost": 0.002,
    }
    values.update(changes)
    return EvalRun(**values)


def verdict(check: Check, run: EvalRun, **options: Any) -> tuple[bool, str]:
    result = asyncio.run(run_check(check, run, **options))
    return result.passed, result.reason


CASES: list[tuple[str, Any, Any]] = [
    # kind, a value that passes on the run, a value that fails
    ("exact", ' {"greeting": "Hello, Ada!"}\n', "Hello, Ada!"),
    ("contains", "Hello, Ada", "Goodbye"),
    ("not_contains", "Goodbye", "Hello"),
    ("regex", r"Hel+o, \w+!", r"^Hello"),
    ("json_schema", {"type": "object", "required": ["greeting"]}, {"type": "array"}),
    ("skill_loaded", "greeting", "farewell"),  # a failed load is no load
    ("skill_not_loaded", "farewell", "greeting"),
    ("tool_called", {"name": "write", "args": {"path": "out.txt"}}, {"name": "bash"}),
    ("tool_called", {"name": "write"}, {"name": "write", "args": {"path": "other.txt"}}),
    (
        "action_called",
        {"skill": "convert", "action": "run", "args": {"pages": 2}},
        {"skill": "convert", "action": "run", "args": {"pages": 3}},
    ),
    ("tool_not_called", "bash", "write"),
    ("max_turns", 3, 2),
    ("max_cost", 0.01, 0.001),
    ("file", {"path": "out.txt", "exact": "Hello, Ada!"}, {"path": "out.txt", "contains": "Bye"}),
    ("file", {"path": "gone.txt", "exists": False}, {"path": "gone.txt"}),
    (
        "file",
        {"path": "data.json", "json_schema": {"type": "object"}},
        {"path": "data.json", "regex": "^x"},
    ),
]


@pytest.mark.parametrize(("kind", "good", "bad"), CASES)
def test_each_check_passes_and_fails_where_it_should(
    tmp_path: Path, kind: str, good: Any, bad: Any
) -> None:
    (tmp_path / "out.txt").write_text("Hello, Ada!\n")
    (tmp_path / "data.json").write_text('{"a": 1}')
    run = a_run(tmp_path)
    assert verdict(Check(kind, good), run) == (True, "")
    passed, reason = verdict(Check(kind, bad), run)
    assert not passed and reason


def test_an_answer_in_a_json_fence_is_json(tmp_path: Path) -> None:
    run = a_run(tmp_path, text='```json\n{"greeting": "hi"}\n```')
    assert verdict(Check("json_schema", {"type": "object"}), run)[0]
    assert verdict(Check("json_schema", {"type": "object"}), a_run(tmp_path, text="hi")) == (
        False,
        "the answer is not JSON",
    )


def test_an_unknown_cost_fails_a_cost_limit(tmp_path: Path) -> None:
    assert verdict(Check("max_cost", 1.0), a_run(tmp_path, cost=None)) == (
        False,
        "the run's cost is unknown (the model has no prices)",
    )


def test_an_action_that_was_blocked_or_failed_was_not_called(tmp_path: Path) -> None:
    name = action_tool_name("convert", "run")
    denied = ToolCallRecord(name, {"pages": 2}, is_error=True, output="Permission\ndenied")
    check = Check("action_called", {"skill": "convert", "action": "run", "args": {"pages": 2}})
    assert verdict(check, a_run(tmp_path, tool_calls=[denied])) == (
        False,
        f"'{name}' was called with those arguments but failed: \"Permission denied\"",
    )
    ran = ToolCallRecord(name, {"pages": 2}, output="ok")
    assert verdict(check, a_run(tmp_path, tool_calls=[denied, ran])) == (True, "")
    # a tool call is a call, run or not (the permission gate's verdict is its own matter)
    tool = Check("tool_called", {"name": name, "args": {"pages": 2}})
    assert verdict(tool, a_run(tmp_path, tool_calls=[denied])) == (True, "")


def test_a_file_check_cannot_leave_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("x")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    passed, reason = verdict(Check("file", {"path": "link.txt"}), a_run(workspace))
    assert not passed and "leaves the workspace" in reason


def write_module(folder: Path, body: str) -> str:
    (folder / "evalfns.py").write_text(body)
    return str(folder)


def test_a_python_check_gets_the_run_and_may_be_async(tmp_path: Path) -> None:
    base = write_module(
        tmp_path,
        "async def ada(run):\n    return {'passed': 'Ada' in run.text, 'reason': 'no Ada'}\n"
        "def score(run):\n    return 0.25\n"
        "def boom(run):\n    raise RuntimeError('the check broke')\n"
        "def odd(run):\n    return 'yes'\n",
    )
    run = a_run(tmp_path)
    assert verdict(Check("python", "evalfns:ada"), run, base=base) == (True, "no Ada")
    assert verdict(Check("python", "evalfns:score"), run, base=base) == (
        False,
        "score 0.25 below 0.5",
    )
    passed, reason = verdict(Check("python", "evalfns:boom"), run, base=base)
    assert not passed and "the check broke" in reason
    passed, reason = verdict(Check("python", "evalfns:odd"), run, base=base)
    assert not passed and "not a verdict" in reason


def judge_maker(requests: list[str], verdicts: dict[str, Any]) -> Any:
    """Judges whose verdict depends on the answer they are shown."""

    def reply(request: LLMRequest) -> Reply:
        prompt = message_text(request.messages[-1])
        requests.append(prompt)
        for needle, value in verdicts.items():
            if needle in prompt:
                return value if isinstance(value, Reply) else Reply(output=value)
        return Reply(output={"reasoning": "no rule", "score": 0, "passed": False})

    def make(model: str) -> AgentRunner:
        return AgentRunner(AgentConfig(model="scripted"), adapter=FunctionAdapter(reply))

    return make


def test_the_judge_sees_rubric_and_answer_and_its_reasoning_is_kept(tmp_path: Path) -> None:
    asked: list[str] = []
    make = judge_maker(
        asked,
        {
            "Hello, Ada": {"reasoning": "It greets Ada.", "score": 0.8, "passed": True},
            "Goodbye": {"reasoning": "It says goodbye.", "score": 0.1, "passed": False},
            "Meh": {"reasoning": "Half way.", "score": 0.6, "passed": True},
        },
    )
    check = Check("judge", {"rubric": "Greets Ada by name", "threshold": 0.7})

    def judged(text: str) -> Any:
        return asyncio.run(
            run_check(check, a_run(tmp_path, text=text), judge_model="j", make_judge=make)
        )

    good, bad, weak = judged("Hello, Ada!"), judged("Goodbye"), judged("Meh")
    assert good.passed and good.reasoning == "It greets Ada." and good.score == 0.8
    assert good.judge_model == "j"
    assert not bad.passed and bad.reasoning == "It says goodbye." and "score 0.1" in bad.reason
    assert not weak.passed and "threshold 0.7" in weak.reason  # under the case's threshold
    assert "<rubric>\nGreets Ada by name\n</rubric>" in asked[0]
    assert "<answer>\nHello, Ada!\n</answer>" in asked[0]


def test_a_judge_that_fails_or_is_missing_fails_the_check(tmp_path: Path) -> None:
    make = judge_maker([], {"Hello": Reply(error="the judge fell over")})
    check = Check("judge", {"rubric": "r"})
    run = a_run(tmp_path, text="Hello")
    passed, reason = verdict(check, run, judge_model="j", make_judge=make)
    assert not passed and reason.startswith("judge:")
    assert verdict(check, run, make_judge=make) == (
        False,
        "no judge model (suite 'judge: MODEL')",
    )


SUITE = """
name: sdk
cases:
  - name: shout
    prompt: hello there
    n: 3
    expect:
      - contains: HELLO THERE
      - tool_called: {name: shout, args: {text: hello there}}
      - max_turns: 2
  - name: wrong
    prompt: quiet please
    expect:
      - exact: quiet please
      - tool_not_called: shout
"""


def test_run_eval_gives_pass_rates_with_intervals_and_a_stable_hash() -> None:
    suite = parse_suite(SUITE)
    first = asyncio.run(run_eval(suite, agents.make_agent, models=["m1", "m2"]))
    again = asyncio.run(run_eval(suite, agents.make_agent, models=["m1", "m2"]))
    assert first.results_sha256 == again.results_sha256
    shout = first.case("shout", "m1")
    wrong = first.case("wrong", "m2")
    assert shout is not None and (shout.passed, shout.total) == (3, 3)
    assert wrong is not None and (wrong.passed, wrong.total) == (0, 1)
    assert shout.interval == pytest.approx((0.4385, 1.0), abs=1e-4)
    assert [(m.model, m.passed, m.total) for m in first.models] == [("m1", 3, 4), ("m2", 3, 4)]
    outcome = first.results[-1].output
    assert [c["passed"] for c in outcome["checks"]] == [False, False]
    assert outcome["transcript"][0] == {"role": "user", "text": "quiet please"}
    assert json.dumps(outcome)  # plain JSON data
