"""``skillkit batch``: one agent session per row of a JSONL dataset.

    skillkit batch DATA.jsonl --prompt "Summarise {title}: {body}" --out results.jsonl
    skillkit batch DATA.jsonl --skill triage --out results.jsonl --engine ray
    skillkit batch DATA.jsonl --skill convert --action run --out results.jsonl

Each row is run by a fresh agent made as ``skillkit -p`` makes its agent (same model
choice, settings, rules and skills; no session saved; nothing can wait for a user, so
a tool call that would ask is denied unless an ``--allow`` rule permits it). With
``--skill NAME`` each row's prompt is that skill's instructions followed by the row as
JSON (or by ``--prompt`` filled from the row); with ``--action`` the skill's action runs
with the row's fields as its arguments and no model at all. Results are appended to
``--out`` as rows complete; running the same command again skips rows already there.
With ``--record-sessions`` (or ``--session-store URL``) each row's conversation is
also kept as a session named ``batch OUT row N`` (`skillkit.batch.RecordSessions`).

Only argparse is imported up front; the batch machinery is imported by the handler.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from skillkit.frontends.args import (
    add_trace_option,
    agent_options,
    positive_int,
    positive_number,
)

if TYPE_CHECKING:
    from skillkit.batch import BatchProgress, RecordSessions, Row, RowResult, Template
    from skillkit.batch.work import AgentFactory
    from skillkit.frontends.setup import AgentOptions
    from skillkit.skills.registry import SkillRegistry

__all__ = [
    "CliRowTask",
    "add_recording_options",
    "engine_from_args",
    "recording_from_args",
    "recording_location",
    "register",
]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``batch`` subcommand."""
    parser = subparsers.add_parser(
        "batch",
        help="run an agent over every row of a JSONL dataset",
        description="Run one agent session per row of DATASET (one JSON object per line) "
        "and append each row's result to --out as it completes. Run the same command again "
        "to resume: rows already in --out are skipped. A manifest with the settings and "
        "the SHA-256 of the canonical results is written to OUT.manifest.json.",
    )
    parser.add_argument("dataset", metavar="DATASET", help="JSONL file, one object per row")
    what = parser.add_argument_group("what each row runs")
    what.add_argument(
        "--prompt",
        metavar="TEMPLATE",
        help="the prompt, with {field} filled from the row ({{ and }} for braces)",
    )
    what.add_argument("--skill", metavar="NAME", help="use this skill for every row")
    what.add_argument(
        "--action",
        metavar="ACTION",
        help="with --skill: run this action of the skill, the row's fields as its "
        "arguments, without a model",
    )
    what.add_argument(
        "--output-schema",
        metavar="FILE",
        help="a JSON schema: each row's answer is validated against it and recorded as "
        "its 'output'",
    )
    parser.add_argument("--out", metavar="RESULTS", required=True, help="results JSONL file")
    agent = parser.add_argument_group("the agent")
    agent.add_argument("--model", metavar="MODEL", help="as for 'skillkit --model'")
    agent.add_argument("--base-url", metavar="URL")
    agent.add_argument("--api-key-env", metavar="NAME")
    agent.add_argument("--max-turns", metavar="N", type=positive_int, help="per row")
    agent.add_argument(
        "--max-cost",
        metavar="USD",
        type=positive_number,
        help="per row: its run stops (stop_reason 'budget') before a model call that "
        "would spend more",
    )
    agent.add_argument("--allow", action="append", default=[], metavar="RULE")
    agent.add_argument("--deny", action="append", default=[], metavar="RULE")
    agent.add_argument("--no-tools", action="store_false", dest="tools")
    add_trace_option(agent)
    add_recording_options(parser)
    run = parser.add_argument_group("how it runs")
    run.add_argument("--concurrency", metavar="N", type=positive_int, default=8)
    run.add_argument("--engine", choices=("local", "ray"), default="local")
    run.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="join this Ray cluster (default: start a local instance for the run)",
    )
    run.add_argument(
        "--actors", metavar="N", type=positive_int, help="Ray workers (default: the CPU count)"
    )
    run.add_argument(
        "--rate",
        metavar="N",
        type=float,
        help="at most N model calls a minute across the whole run",
    )
    run.add_argument(
        "--max-total-cost",
        metavar="USD",
        type=positive_number,
        help="for the whole batch (rows recorded by earlier runs count): once spent, no "
        "further row starts; those rows are named in the manifest and run again by the "
        "same command with a higher limit",
    )
    parser.set_defaults(handler=run_batch_command)


def add_recording_options(parser: argparse.ArgumentParser) -> None:
    """``--record-sessions`` and ``--session-store``: keep each row's conversation as a
    session (``skillkit batch`` and ``skillkit eval``)."""
    sessions = parser.add_argument_group("sessions")
    sessions.add_argument(
        "--record-sessions",
        action="store_true",
        help="keep each row's conversation as a session (default: none is kept), in the "
        "store of the settings' sessions.store, else the JSONL files",
    )
    sessions.add_argument(
        "--session-store",
        metavar="URL",
        help="keep each row's conversation as a session in this store "
        "(sqlite:///path/sessions.db, postgresql://host/db, a folder); implies "
        "--record-sessions",
    )


def recording_from_args(
    args: argparse.Namespace, name: str, cwd: Path
) -> RecordSessions | str | None:
    """The recording ``--record-sessions`` / ``--session-store`` ask for, its store
    opened (so a bad URL or a database that cannot be reached fails before the first
    row); None when none is asked for; a one-line reason when the store cannot be
    used."""
    url = getattr(args, "session_store", None)
    if url is None and not getattr(args, "record_sessions", False):
        return None
    from skillkit.batch import RecordSessions
    from skillkit.errors import describe_exception

    record = RecordSessions(url or None, name=name, cwd=cwd)
    try:
        record.open_store()
    except Exception as exc:  # a boundary: any failure of the store is one line
        return f"session store: {' '.join(describe_exception(exc).split())}"
    return record


@dataclass
class CliRowTask:
    """A row as ``skillkit batch`` runs it (picklable: Ray workers get a copy and build
    their agents and skill registry themselves)."""

    options: AgentOptions
    template: Template | None = None
    skill: str | None = None
    action: str | None = None
    output_schema: dict[str, Any] | None = None
    record: RecordSessions | None = None
    limiter: Any = field(default=None, repr=False)
    _skills: SkillRegistry | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_skills"] = None
        return state

    async def __call__(self, row: Row) -> RowResult:
        from skillkit.batch import AgentRowTask, RowResult, TemplateError

        if self.action is None:
            task = AgentRowTask(
                self._agent_factory(), None, self.limiter, self.output_schema, self.record
            )
            if row.error is not None or row.data is None:
                return await task(row)
            try:
                prompt = self._prompt(row.data)
            except TemplateError as exc:
                return RowResult(row=row.index, error=str(exc), stop_reason="error")
            return await task(type(row)(row.index, data={"prompt": prompt}))
        return await self._run_action(row)

    def _prompt(self, data: Any) -> str:
        text = (
            self.template.fill(data)
            if self.template is not None
            else json.dumps(data, ensure_ascii=False)
        )
        if self.skill is None:
            return text
        return self.registry().activation_message(self.skill, text)

    def registry(self) -> SkillRegistry:
        if self._skills is None:
            from skillkit.frontends.setup import skill_registry

            self._skills = skill_registry(str(self.options.workspace), ())
        return self._skills

    def _agent_factory(self) -> AgentFactory:
        """Each row's agent, made by the assembly (`skillkit.frontends.setup`)."""
        from functools import partial

        from skillkit.frontends.setup import batch_agent

        return partial(batch_agent, self.options)

    async def _run_action(self, row: Row) -> RowResult:
        from skillkit.batch import RowResult
        from skillkit.errors import describe_exception
        from skillkit.skills.actions import ActionError
        from skillkit.skills.registry import UnknownSkillError

        started = time.perf_counter()
        if row.error is not None or row.data is None:
            return RowResult(row=row.index, error=row.error, stop_reason="error")
        assert self.skill is not None and self.action is not None
        try:
            result = await self.registry().run_action(self.skill, self.action, dict(row.data))
        except (ActionError, UnknownSkillError) as exc:
            return RowResult(row=row.index, error=str(exc), stop_reason="error")
        except Exception as exc:
            return RowResult(row=row.index, error=describe_exception(exc), stop_reason="error")
        return RowResult(
            row=row.index,
            text=result.to_text(),
            stop_reason="stop" if result.ok else "error",
            error=None if result.ok else result.summary(),
            duration_ms=(time.perf_counter() - started) * 1000,
        )


def run_batch_command(args: argparse.Namespace) -> int:
    """Run the batch; 0 when every row has a result (row errors are results), 1 when
    the run stopped early, 2 for bad input, 130 when interrupted."""
    from skillkit.batch import RateLimiter, Template, TemplateError
    from skillkit.frontends.setup import SetupError, build_agent

    conflict = _conflict(args)
    if conflict is not None:
        return _usage(conflict)
    schema = _read_schema(args.output_schema) if args.output_schema is not None else None
    if isinstance(schema, str):
        return _usage(schema)
    dataset, out = Path(args.dataset), Path(args.out)
    if not dataset.is_file():
        return _usage(f"no such dataset file: {dataset}")
    try:
        template = Template(args.prompt) if args.prompt is not None else None
    except TemplateError as exc:
        return _usage(str(exc))
    options = agent_options(args, session="off")  # rows save no session
    model: str | None = None
    source = ""
    try:
        if args.action is None:  # fail on a bad model or rule before the first row
            probe = build_agent(options)
            asyncio.run(probe.aclose())
            if probe.model is not None:
                model, source = probe.model.model, probe.model.source
        task = CliRowTask(options, template, args.skill, args.action, schema)
        if args.skill is not None:
            _check_skill(task.registry(), args.skill, args.action)
    except (SetupError, ValueError) as exc:
        return _usage(str(exc))
    record = recording_from_args(args, f"batch {out.name}", options.workspace)
    if isinstance(record, str):
        return _usage(record)
    task.record = record
    where = recording_location(record) if record is not None else ""
    if model is not None:
        print(f"skillkit: batch: model {model} ({source})", file=sys.stderr)
    engine = engine_from_args(args)
    limiter = RateLimiter(args.rate / 60.0, max(1, int(args.rate // 60))) if args.rate else None
    settings = _settings(args, model, schema)
    show = _Progress(sys.stderr)
    from skillkit.batch import run_to_file

    try:
        summary = asyncio.run(
            run_to_file(
                dataset,
                out,
                task,
                engine=engine,
                limiter=limiter,
                settings=settings,
                on_progress=show,
                max_total_cost=args.max_total_cost,
            )
        )
    except KeyboardInterrupt:
        show.finish()
        print(
            f"skillkit: batch: interrupted; run the same command to resume ({out})",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except Exception as exc:
        from skillkit.errors import describe_exception

        show.finish()
        print(f"skillkit: error: batch: {describe_exception(exc)}", file=sys.stderr)
        return 1
    finally:
        if record is not None:
            record.close()
    show.finish()
    for problem in getattr(engine, "tracing_problems", ()):
        print(f"skillkit: batch: {problem}", file=sys.stderr)
    return _report(summary, out, record, where)


def _report(summary: Any, out: Path, record: RecordSessions | None = None, where: str = "") -> int:
    """The batch's last lines on stderr, and its exit code."""
    print(
        f"skillkit: batch: {summary.total} rows: {summary.ran} run now, "
        f"{summary.skipped} done before, "
        f"{summary.errors} with errors; results in {out}, manifest {summary.manifest} "
        f"(sha256 {summary.results_sha256[:16]}…)",
        file=sys.stderr,
    )
    if record is not None and summary.ran:
        print(
            f"skillkit: batch: each row's conversation kept as a session named "
            f"'{record.name} row N' in {where} ('skillkit sessions list' shows them; the "
            "results' 'session' field holds each id)",
            file=sys.stderr,
        )
    if summary.stopped is not None:
        print(
            f"skillkit: batch: {summary.not_started} rows not started: {summary.stopped}; "
            "run the same command with a higher --max-total-cost to run them",
            file=sys.stderr,
        )
    return 0 if summary.complete else 1


def recording_location(record: RecordSessions) -> str:
    """Where ``record`` keeps its sessions, as it may be shown (no password)."""
    from skillkit.session.store_base import public_location

    opened = record.open_store()
    return public_location(str(getattr(opened, "url", None) or getattr(opened, "root", "")))


def _conflict(args: argparse.Namespace) -> str | None:
    """What is wrong with the combination of options given, if anything."""
    if args.action is not None and args.skill is None:
        return "--action needs --skill"
    if args.prompt is None and args.skill is None:
        return "give --prompt TEMPLATE or --skill NAME"
    if args.action is not None and args.prompt is not None:
        return "--action runs without a model: --prompt has no use with it"
    if args.rate is not None and args.rate <= 0:
        return "--rate must be positive"
    if args.action is not None and (args.max_cost or args.max_total_cost):
        return "--action runs without a model: it spends nothing to limit"
    if args.action is not None and args.output_schema is not None:
        return "--action runs without a model: --output-schema has no use with it"
    if args.action is not None and (args.record_sessions or args.session_store is not None):
        return "--action runs without a model: it has no conversation to keep as a session"
    return None


def engine_from_args(args: argparse.Namespace) -> Any:
    """The engine ``--engine`` names (with ``--actors``, ``--ray-address`` and
    ``--concurrency``): Ray actors, or tasks in this process."""
    from skillkit.batch import LocalEngine, RayEngine

    if args.engine == "ray":
        from skillkit.tracing.otlp import trace_requested

        actors = args.actors or os.cpu_count() or 1
        return RayEngine(
            address=args.ray_address,
            actors=actors,
            per_actor=max(1, -(-args.concurrency // actors)),
            trace=bool(getattr(args, "trace", False)) or trace_requested(),
        )
    return LocalEngine(args.concurrency)


def _settings(
    args: argparse.Namespace, model: str | None, schema: dict[str, Any] | None
) -> dict[str, Any]:
    """The run's settings as the manifest records them."""
    return {
        "prompt": args.prompt,
        "skill": args.skill,
        "action": args.action,
        "model": model,
        "output_schema": schema,
        "max_turns": args.max_turns,
        "max_cost": args.max_cost,
        "max_total_cost": args.max_total_cost,
        "engine": args.engine,
        "concurrency": args.concurrency,
        "rate_per_minute": args.rate,
        "sessions": _sessions_setting(args),
    }


def _sessions_setting(args: argparse.Namespace) -> str | None:
    """Where the run records its sessions, as the manifest says it (no password)."""
    from skillkit.session.store_base import public_location

    if args.session_store is not None:
        return public_location(args.session_store)
    return "the configured store" if args.record_sessions else None


def _read_schema(path: str) -> dict[str, Any] | str:
    """The JSON schema in ``path``, or a one-line reason it cannot be used."""
    from skillkit.output import read_schema_file

    try:
        return read_schema_file(path)
    except ValueError as exc:
        return str(exc)


def _check_skill(registry: SkillRegistry, name: str, action: str | None) -> None:
    entry = registry.entry(name)
    if entry is None:
        raise ValueError(f"no skill named '{name}' ('skillkit skills list' shows them)")
    if action is not None and entry.skill.action(action) is None:
        names = ", ".join(a.name for a in entry.skill.actions) or "none"
        raise ValueError(f"skill '{name}' has no action '{action}' (actions: {names})")


def _usage(message: str) -> int:
    print(f"skillkit: error: batch: {message}", file=sys.stderr)
    return EXIT_USAGE


class _Progress:
    """One status line on stderr: redrawn in place on a terminal, else printed at most
    every few seconds."""

    INTERVAL = 5.0

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, progress: BatchProgress, result: RowResult | None) -> None:
        now = time.monotonic()
        final = progress.remaining == 0
        if not self.live and not final and now - self.last < self.INTERVAL:
            return
        if self.live and not final and now - self.last < 0.1:
            return
        self.last = now
        if self.live:
            self.stream.write(f"\r\x1b[2K{_bar(progress)} {_status(progress)}")
            self.drawn = True
        else:  # a log: plain lines, marked as SkillKit's
            self.stream.write(f"skillkit: batch: {_status(progress)}\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def _bar(progress: BatchProgress, width: int = 20) -> str:
    finished = progress.skipped + progress.done
    filled = int(width * finished / progress.total) if progress.total else width
    return "█" * filled + "·" * (width - filled)


def _status(progress: BatchProgress) -> str:
    finished = progress.skipped + progress.done
    eta = progress.eta
    parts = [
        f"{finished}/{progress.total} rows",
        f"{progress.errors} errors",
        f"{progress.rate:.1f} rows/s",
        f"ETA {_duration(eta)}" if eta is not None and progress.remaining else "",
        f"tokens {_count(progress.input_tokens)} in / {_count(progress.output_tokens)} out",
        f"${progress.cost:.4f}" if progress.cost else "",
    ]
    return "  ".join(part for part in parts if part)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def _count(value: int) -> str:
    return f"{value / 1000:.1f}k" if value >= 1000 else str(value)
