"""Checks: each expectation of a case judged against one `EvalRun`.

Every check gives a `CheckResult` (passed or not, a one-line reason, for the judge its
score and reasoning). A check never raises: a ``python`` function that raises, a judge
whose model fails, a file that cannot be read — each is a failed check whose reason
says why (an evaluation that cannot decide does not pass).

The judge is its own agent: ``make_judge(model)`` makes it, it is given the rubric, the
prompt and the answer, and asked for structured output (`JUDGE_SCHEMA`): ``passed``,
``score`` (0 to 1) and ``reasoning``, all kept in the result.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from skillkit.evals.record import EvalRun
from skillkit.evals.suite import Check

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner

__all__ = [
    "JUDGE_SCHEMA",
    "CheckResult",
    "JudgeFactory",
    "judge_prompt",
    "run_check",
    "run_checks",
]

JudgeFactory: TypeAlias = "Callable[[str], AgentRunner | Awaitable[AgentRunner]]"
"""Makes the judge agent for a model name (a fresh agent per verdict)."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "why, in a few sentences"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "passed": {"type": "boolean"},
    },
    "required": ["reasoning", "score", "passed"],
    "additionalProperties": False,
}
"""What the judge answers with."""

_JUDGE_SYSTEM = (
    "You grade the answer of an AI agent against a rubric. Read the task, the rubric and "
    "the answer; reason briefly; then give a score from 0 (fails the rubric) to 1 (fully "
    "meets it) and whether it passes."
)


class CheckResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The verdict of one check. ``score`` and ``reasoning`` come from a judge."""

    check: str
    kind: str
    passed: bool
    reason: str = ""
    score: float | None = None
    reasoning: str | None = None
    judge_model: str | None = None


async def run_checks(
    checks: tuple[Check, ...],
    run: EvalRun,
    *,
    judge_model: str | None = None,
    make_judge: JudgeFactory | None = None,
    base: str = ".",
) -> list[CheckResult]:
    """Every check of a case on ``run``, in order."""
    return [
        await run_check(check, run, judge_model=judge_model, make_judge=make_judge, base=base)
        for check in checks
    ]


async def run_check(
    check: Check,
    run: EvalRun,
    *,
    judge_model: str | None = None,
    make_judge: JudgeFactory | None = None,
    base: str = ".",
) -> CheckResult:
    """One check on ``run``; never raises (except for cancellation)."""
    try:
        if check.kind == "judge":
            return await _judge(check, run, judge_model, make_judge)
        if check.kind == "python":
            return await _python(check, run, base)
        passed, reason = _plain(check, run)
    except Exception as exc:
        from skillkit.errors import describe_exception

        passed, reason = False, f"the check failed to run: {describe_exception(exc)}"
    return CheckResult(check=check.label, kind=check.kind, passed=passed, reason=reason)


def _plain(check: Check, run: EvalRun) -> tuple[bool, str]:
    value = check.value
    text = run.text
    match check.kind:
        case "exact":
            ok = text.strip() == value.strip()
            return ok, "" if ok else f"the answer is {_quote(text)}, not {_quote(value)}"
        case "contains":
            ok = value in text
            return ok, "" if ok else f"the answer does not contain {_quote(value)}"
        case "not_contains":
            ok = value not in text
            return ok, "" if ok else f"the answer contains {_quote(value)}"
        case "regex":
            ok = re.search(value, text) is not None
            return ok, "" if ok else f"no match for /{value}/ in the answer"
        case "json_schema":
            return _schema_verdict(value, _answer_json(text))
        case "skill_loaded":
            loaded = run.skills_loaded
            ok = value in loaded
            return ok, "" if ok else f"skill '{value}' was not loaded (loaded: {_names(loaded)})"
        case "skill_not_loaded":
            ok = value not in run.skills_loaded
            return ok, "" if ok else f"skill '{value}' was loaded"
        case "tool_called":
            return _called(run, value["name"], value.get("args", {}))
        case "action_called":
            from skillkit.skills.runner import action_tool_name

            name = action_tool_name(value["skill"], value["action"])
            return _called(run, name, value.get("args", {}), ran=True)
        case "tool_not_called":
            count = sum(1 for call in run.tool_calls if call.name == value)
            return count == 0, "" if count == 0 else f"'{value}' was called {count} times"
        case "max_turns":
            ok = run.turns <= value
            return ok, "" if ok else f"{run.turns} turns, more than {value}"
        case "max_cost":
            if run.cost is None:
                return False, "the run's cost is unknown (the model has no prices)"
            ok = run.cost <= value
            return ok, "" if ok else f"cost ${run.cost:.6f}, more than ${value}"
        case "file":
            return _file(run.workspace, value)
    return False, f"unknown check kind '{check.kind}'"


def _called(
    run: EvalRun, name: str, args: Mapping[str, Any], *, ran: bool = False
) -> tuple[bool, str]:
    """A call of ``name`` whose arguments contain ``args``; with ``ran``, one that also
    ran to success (not blocked by the permission gate, not failed)."""
    calls = [call for call in run.tool_calls if call.name == name]
    if not calls:
        called = _names(sorted({call.name for call in run.tool_calls}))
        return False, f"'{name}' was never called (called: {called})"
    matching = [call for call in calls if _subset(args, call.args)]
    if not matching:
        seen = json.dumps(calls[0].args, sort_keys=True)[:200]
        return False, f"'{name}' was called, never with {json.dumps(dict(args))} (e.g. {seen})"
    if not ran or any(not call.is_error for call in matching):
        return True, ""
    output = " ".join(matching[0].output.split())
    return False, f"'{name}' was called with those arguments but failed: {_quote(output)}"


def _subset(want: Any, got: Any) -> bool:
    """``want`` is in ``got``: every key of a mapping matches, other values are equal."""
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(
            key in got and _subset(value, got[key]) for key, value in want.items()
        )
    return bool(want == got)


def _file(workspace: Path, spec: Mapping[str, Any]) -> tuple[bool, str]:
    path = workspace / spec["path"]
    resolved = path.resolve()
    if workspace.resolve() not in resolved.parents:
        return False, f"'{spec['path']}' leaves the workspace"
    exists = resolved.is_file()
    if spec.get("exists") is False:
        return (not exists), "" if not exists else f"'{spec['path']}' exists"
    if not exists:
        return False, f"'{spec['path']}' does not exist"
    text = resolved.read_text(encoding="utf-8", errors="replace")
    if "exact" in spec and text.strip() != spec["exact"].strip():
        return False, f"'{spec['path']}' holds {_quote(text)}, not {_quote(spec['exact'])}"
    if "contains" in spec and spec["contains"] not in text:
        return False, f"'{spec['path']}' does not contain {_quote(spec['contains'])}"
    if "regex" in spec and re.search(spec["regex"], text) is None:
        return False, f"no match for /{spec['regex']}/ in '{spec['path']}'"
    if "json_schema" in spec:
        ok, reason = _schema_verdict(spec["json_schema"], _answer_json(text))
        if not ok:
            return False, f"'{spec['path']}': {reason}"
    return True, ""


_MISSING = object()


def _answer_json(text: str) -> Any:
    """The answer parsed as JSON (a fenced block's content too), or `_MISSING`."""
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*\n(.*?)\n?```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body)
    except ValueError:
        return _MISSING


def _schema_verdict(schema: dict[str, Any], value: Any) -> tuple[bool, str]:
    import jsonschema

    if value is _MISSING:
        return False, "the answer is not JSON"
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return True, ""
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return False, f"at {where}: {error.message}"


async def _python(check: Check, run: EvalRun, base: str) -> CheckResult:
    """``module:function`` (the module found from the suite's folder too), called with
    the run; it returns a bool, ``(bool, reason)``, a number 0..1 (passes at 0.5) or a
    mapping with ``passed`` (and ``reason``, ``score``); it may be async."""
    module_name, _, name = check.value.partition(":")
    if base not in sys.path:
        sys.path.append(base)
    function = getattr(importlib.import_module(module_name), name)
    verdict = function(run)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    passed, reason, score = _verdict(verdict)
    return CheckResult(
        check=check.label, kind=check.kind, passed=passed, reason=reason, score=score
    )


def _verdict(value: Any) -> tuple[bool, str, float | None]:
    if isinstance(value, bool):
        return value, "" if value else "the function said no", None
    if isinstance(value, int | float):
        score = float(value)
        return score >= 0.5, "" if score >= 0.5 else f"score {score:g} below 0.5", score
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        return value[0], str(value[1]), None
    if isinstance(value, Mapping) and isinstance(value.get("passed"), bool):
        given = value.get("score")
        return (
            value["passed"],
            str(value.get("reason", "")),
            float(given) if isinstance(given, int | float) else None,
        )
    raise TypeError(f"a check function returned {type(value).__name__}, not a verdict")


def judge_prompt(rubric: str, run: EvalRun) -> str:
    """What the judge is asked: the task, the rubric and the answer (with the tools the
    agent called, by name)."""
    tools = ", ".join(call.name for call in run.tool_calls) or "none"
    return (
        f"{_JUDGE_SYSTEM}\n\n<task>\n{run.prompt}\n</task>\n\n<rubric>\n{rubric}\n</rubric>\n\n"
        f"<answer>\n{run.text}\n</answer>\n\n<tools_called>{tools}</tools_called>\n\n"
        "Grade the answer against the rubric."
    )


async def _judge(
    check: Check, run: EvalRun, default_model: str | None, make_judge: JudgeFactory | None
) -> CheckResult:
    model = check.value.get("model") or default_model
    label, kind = check.label, check.kind
    if model is None:
        return CheckResult(
            check=label, kind=kind, passed=False, reason="no judge model (suite 'judge: MODEL')"
        )
    if make_judge is None:
        return CheckResult(check=label, kind=kind, passed=False, reason="no judge was given")
    made = make_judge(model)
    judge: AgentRunner = await made if inspect.isawaitable(made) else made
    try:
        response = await judge.chat(
            judge_prompt(check.value["rubric"], run), output_type=JUDGE_SCHEMA
        )
    finally:
        await judge.aclose()
    verdict = response.output
    if not isinstance(verdict, dict):
        reason = response.error or "the judge gave no verdict"
        return CheckResult(
            check=label, kind=kind, passed=False, reason=f"judge: {reason}", judge_model=model
        )
    score = float(verdict["score"])
    threshold = float(check.value.get("threshold", 0.5))
    passed = bool(verdict["passed"]) and score >= threshold
    reason = "" if passed else f"the judge said no (score {score:g}, threshold {threshold:g})"
    return CheckResult(
        check=label,
        kind=kind,
        passed=passed,
        reason=reason,
        score=score,
        reasoning=str(verdict["reasoning"]),
        judge_model=model,
    )


def _quote(text: str, limit: int = 80) -> str:
    text = text.strip()
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "none"
