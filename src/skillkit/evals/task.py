"""One eval row: a case, run once by one model, in its own scratch workspace, judged.

`EvalTask` is a batch row task (`skillkit.batch.RowTask`): each row names a case, a
model and a repeat; the task places the case's files (and the suite's skill folders)
in an empty scratch folder of its own, makes the agent for that model there, runs the
prompt while recording its trajectory, runs the case's checks, empties the folder for a
later row (`ScratchFolders`: reused, never shared while a row runs) and returns a
`RowResult` whose ``output`` is the outcome (`outcome_of` reads it back). Everything
that goes wrong is the row's ``error``; the task never raises (but for cancellation),
and it is picklable when its factories are, so the Ray engine can ship it.
"""

from __future__ import annotations

import asyncio
import inspect
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from skillkit.batch import RecordSessions, Row, RowResult
from skillkit.evals.checks import CheckResult, JudgeFactory, run_checks
from skillkit.evals.record import EvalRun, Trajectory, tool_calls_of
from skillkit.evals.scratch import ScratchFolders
from skillkit.evals.suite import Case, Suite

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner

__all__ = ["AgentMaker", "EvalTask", "Outcome", "outcome_of", "place_skills"]

AgentMaker: TypeAlias = "Callable[[str, Path, int | None], AgentRunner | Awaitable[AgentRunner]]"
"""Makes the agent of one row: ``(model, workspace, max_turns)`` (``max_turns`` None:
the agent's default). Sync or async; a fresh agent each call."""


class Outcome(msgspec.Struct, kw_only=True):
    """What one row's ``output`` holds: which case, model and repeat; whether every
    check passed (and the run ended without error); each check's verdict; the run's
    trajectory in short (turns, tools called, skills loaded) and, for a run that did
    not pass, its transcript (what a report shows; a passing run's is left out, which
    keeps a large run's results small)."""

    case: str
    model: str
    repeat: int
    passed: bool
    checks: list[CheckResult] = msgspec.field(default_factory=list)
    turns: int = 0
    tools: list[str] = msgspec.field(default_factory=list)
    skills_loaded: list[str] = msgspec.field(default_factory=list)
    transcript: list[dict[str, Any]] = msgspec.field(default_factory=list)


def outcome_of(result: RowResult) -> Outcome | None:
    """The `Outcome` in a row's result (None for a row that never ran a case)."""
    if not isinstance(result.output, dict):
        return None
    try:
        return msgspec.convert(result.output, Outcome)
    except msgspec.ValidationError:
        return None


@dataclass
class EvalTask:
    """Runs the row ``{"case": NAME, "model": MODEL, "repeat": K}`` of ``suite``.
    ``make_judge`` makes judge agents (None: judge checks fail, saying so). ``record``
    (a `skillkit.batch.RecordSessions`) keeps each row's conversation as a session named
    ``NAME CASE MODEL #REPEAT``; the result's ``session`` is its id."""

    suite: Suite
    make_agent: AgentMaker
    make_judge: JudgeFactory | None = None
    limiter: Any = field(default=None, repr=False)
    record: RecordSessions | None = None
    _scratch: ScratchFolders = field(default_factory=ScratchFolders, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        # Another process (a Ray worker) keeps scratch folders of its own.
        return {k: v for k, v in self.__dict__.items() if k != "_scratch"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._scratch = ScratchFolders()

    def close(self) -> None:
        """Remove the scratch folders kept for later rows (done at exit otherwise)."""
        self._scratch.close()

    async def __call__(self, row: Row) -> RowResult:
        started = time.perf_counter()
        if row.error is not None or row.data is None:
            return RowResult(row=row.index, error=row.error or "empty row", stop_reason="error")
        name, model, repeat = row.data.get("case"), row.data.get("model"), row.data.get("repeat")
        if not (isinstance(name, str) and isinstance(model, str) and isinstance(repeat, int)):
            return RowResult(row=row.index, error="not an eval row", stop_reason="error")
        if name not in self.suite.case_index:
            return RowResult(row=row.index, error=f"no case '{name}'", stop_reason="error")
        try:
            result = await self._run(row.index, self.suite.case(name), model, repeat)
        except Exception as exc:
            from skillkit.errors import describe_exception

            reason = describe_exception(exc)
            outcome = Outcome(case=name, model=model, repeat=repeat, passed=False)
            result = RowResult(
                row=row.index,
                error=reason,
                stop_reason="error",
                output=msgspec.to_builtins(outcome),
            )
        result.duration_ms = (time.perf_counter() - started) * 1000
        return result

    async def _run(self, index: int, case: Case, model: str, repeat: int) -> RowResult:
        workspace = await self._workspace(case)
        try:
            run, usage, session = await self._agent_run(case, model, workspace, repeat)
            checks = await run_checks(
                case.checks,
                run,
                judge_model=self.suite.judge_model,
                make_judge=self.make_judge,
                base=self.suite.base,
            )
        finally:
            await self._scratch.give_back(workspace)
        passed = run.error is None and all(check.passed for check in checks)
        outcome = Outcome(
            case=case.name,
            model=model,
            repeat=repeat,
            passed=passed,
            checks=checks,
            turns=run.turns,
            tools=[call.name for call in run.tool_calls],
            skills_loaded=run.skills_loaded,
            transcript=[] if passed else run.transcript,
        )
        return RowResult(
            row=index,
            text=run.text,
            output=msgspec.to_builtins(outcome),
            usage=usage,
            cost=run.cost,
            stop_reason=run.stop_reason,
            error=run.error,
            session=session,
        )

    async def _workspace(self, case: Case) -> Path:
        """An empty scratch folder (see `ScratchFolders`) with the case's files and the
        suite's skills. Writing files are file system calls that can block for
        milliseconds: a thread does them, so the other rows go on meanwhile."""
        workspace = await self._scratch.take_async()
        if case.files or self.suite.skills:
            try:
                await asyncio.to_thread(_place, self.suite, case, workspace)
            except BaseException:
                await self._scratch.give_back(workspace)
                raise
        return workspace

    async def _agent_run(
        self, case: Case, model: str, workspace: Path, repeat: int = 0
    ) -> tuple[EvalRun, Any, str | None]:
        from skillkit.models import AssistantMessage, TextPart, UserMessage

        made = self.make_agent(model, workspace, case.max_turns)
        runner: AgentRunner = await made if inspect.isawaitable(made) else made
        trajectory = Trajectory()
        session: str | None = None
        try:
            if self.record is not None:
                name = f"{self.record.name} {case.name} {model} #{repeat}"
                session = (await self.record.record(runner, name)).id
            if self.limiter is not None:
                from skillkit.batch import LimitedAdapter

                runner.adapter = LimitedAdapter(runner.adapter, self.limiter)
            if case.history:
                runner.replace_messages(
                    [
                        UserMessage(text)
                        if role == "user"
                        else AssistantMessage(content=[TextPart(text)])
                        for role, text in case.history
                    ]
                )
            trajectory.attach(runner)
            response = await runner.chat(case.prompt)
        finally:
            await runner.aclose()
        run = EvalRun(
            case=case.name,
            model=model,
            prompt=case.prompt,
            text=response.text,
            stop_reason=response.stop_reason,
            turns=trajectory.turns,
            tool_calls=tool_calls_of(response.messages),
            workspace=workspace,
            usage=response.usage,
            cost=trajectory.cost,
            error=response.error,
            messages=response.messages,
        )
        return run, response.usage, session


def _place(suite: Suite, case: Case, workspace: Path) -> None:
    for relative, text in case.files:
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    place_skills(suite, workspace)


def place_skills(suite: Suite, workspace: Path) -> None:
    """Copy the suite's skill folders into ``workspace/.skillkit/skills``: a folder with
    a ``SKILL.md`` is one skill; any other folder holds skills (its sub-folders)."""
    if not suite.skills:
        return
    target = workspace / ".skillkit" / "skills"
    target.mkdir(parents=True, exist_ok=True)
    for entry in suite.skills:
        source = Path(suite.base) / entry
        folders = (
            [source]
            if (source / "SKILL.md").is_file()
            else sorted(p for p in source.iterdir() if (p / "SKILL.md").is_file())
        )
        for folder in folders:
            shutil.copytree(folder, target / folder.name, dirs_exist_ok=True)
