"""``skillkit eval``: run a suite, compare two runs, make a case from a session.

    skillkit eval SUITE.yaml [--models a,b,c] [--engine local|ray] [--out DIR] [--resume]
                             [--report report.html]
    skillkit eval compare RUN_A RUN_B
    skillkit eval from-session ID [--suite SUITE.yaml]

Each (case, model, repeat) is one row of a batch run (``skillkit batch``'s engines),
whose agent is made as ``skillkit -p`` makes its agent, in the case's scratch folder,
with nobody to ask (a tool call that would ask is denied unless an ``--allow`` rule
permits it). ``skillkit skills eval NAME`` (trigger evals) is handled here too.

Exit status: 0 when every row has a result (and, with ``--fail-under``, the pass rate
is high enough), 1 when the run stopped early or scored under ``--fail-under``, 2 for
bad input (one ``skillkit: error: eval:`` line), 130 when interrupted.

Only argparse is imported up front; the rest is imported by the handlers. This module
is a face: it builds agents through `skillkit.frontends.setup`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from skillkit.frontends.args import agent_options, positive_int
from skillkit.frontends.batch_cli import (
    add_recording_options,
    engine_from_args,
    recording_from_args,
    recording_location,
)

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.evals.run import EvalProgress, EvalResults
    from skillkit.evals.suite import Suite
    from skillkit.frontends.setup import AgentOptions

__all__ = [
    "CliAgentMaker",
    "CliJudgeMaker",
    "add_run_options",
    "add_trigger_options",
    "register",
    "skills_eval_command",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval`` command."""
    parser = subparsers.add_parser(
        "eval",
        help="run an eval suite, compare runs, turn a session into a case",
        description="skillkit eval SUITE.yaml: run every case of the suite n times on each "
        "model and score it. skillkit eval compare RUN_A RUN_B: the cases that got worse "
        "or better. skillkit eval from-session ID: a recorded session as a regression case.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="SUITE.yaml | compare | from-session", help="what to do")
    parser.add_argument("more", nargs="*", metavar="ARG", help="RUN_A RUN_B, or a session id")
    run = parser.add_argument_group("running a suite")
    add_run_options(run)
    run.add_argument(
        "--out", metavar="DIR", help="the run's folder (default: evals/runs/SUITE-TIMESTAMP)"
    )
    run.add_argument("--resume", action="store_true", help="go on with the run already in --out")
    run.add_argument("--report", metavar="FILE.html", help="also write an HTML report")
    run.add_argument(
        "--fail-under",
        metavar="RATE",
        type=float,
        help="exit 1 when the overall pass rate is under RATE (0..1)",
    )
    replay = parser.add_argument_group("from-session")
    replay.add_argument(
        "--suite", metavar="FILE", help="append the case to this suite (default: print it)"
    )
    replay.add_argument(
        "--session-store",
        metavar="URL",
        help="where sessions are kept: from-session reads the session there; a suite run "
        "keeps each row's conversation there as a session (implies --record-sessions)",
    )
    run.add_argument(
        "--record-sessions",
        action="store_true",
        help="keep each row's conversation as a session named 'eval SUITE CASE MODEL #N' "
        "(default: none is kept), in the settings' sessions.store, else the JSONL files",
    )
    parser.set_defaults(handler=eval_command)


def add_run_options(group: Any) -> None:
    """The options every eval run takes (also ``skills eval``)."""
    group.add_argument("--models", metavar="A,B,C", help="the models (default: the suite's)")
    group.add_argument("--concurrency", metavar="N", type=positive_int, default=8)
    group.add_argument("--engine", choices=("local", "ray"), default="local")
    group.add_argument("--ray-address", metavar="ADDR", help="join this Ray cluster")
    group.add_argument("--actors", metavar="N", type=positive_int, help="Ray workers")
    group.add_argument("--max-turns", metavar="N", type=positive_int, help="per run")
    group.add_argument("--allow", action="append", default=[], metavar="RULE")
    group.add_argument("--deny", action="append", default=[], metavar="RULE")
    group.add_argument("--judge-model", metavar="MODEL", help="overrides the suite's judge")


@dataclass
class CliAgentMaker:
    """Each row's agent as ``skillkit -p`` makes it, in the row's workspace (picklable:
    Ray workers make their own). ``workspace`` set: every row works there instead."""

    options: AgentOptions
    workspace: Path | None = None

    def __call__(self, model: str, workspace: Path, max_turns: int | None) -> AgentRunner:
        from skillkit.frontends.setup import batch_agent

        options = replace(
            self.options,
            model=model,
            workspace=self.workspace or workspace,
            max_turns=max_turns or self.options.max_turns,
        )
        return batch_agent(options)


@dataclass
class CliJudgeMaker:
    """Judge agents: the model given, no tools, no project instructions, in an empty
    folder of their own (one per process, removed when the process exits)."""

    options: AgentOptions
    _folder: str | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_folder": None}

    def __call__(self, model: str) -> AgentRunner:
        from skillkit.frontends.setup import batch_agent

        if self._folder is None or not os.path.isdir(self._folder):
            import atexit
            import shutil

            self._folder = tempfile.mkdtemp(prefix="skillkit-judge-")
            atexit.register(shutil.rmtree, self._folder, True)
        options = replace(
            self.options,
            model=model,
            workspace=Path(self._folder),
            tools=False,
            instructions=False,
            max_turns=4,
        )
        return batch_agent(options)


def eval_command(args: argparse.Namespace) -> int:
    """``skillkit eval ...``: dispatch on the first argument."""
    if args.target == "compare":
        if len(args.more) != 2:
            return _usage("compare takes two runs: skillkit eval compare RUN_A RUN_B")
        from skillkit.evals.compare import compare_command

        return compare_command(Path(args.more[0]), Path(args.more[1]))
    if args.target == "from-session":
        if len(args.more) != 1:
            return _usage("from-session takes one session id")
        from skillkit.evals.replay import from_session_command

        return from_session_command(args.more[0], args)
    if args.more:
        return _usage(f"unexpected arguments after the suite: {' '.join(args.more)}")
    return run_suite_command(args)


def run_suite_command(args: argparse.Namespace) -> int:
    from skillkit.evals.run import EvalRunError, run_eval_to_dir
    from skillkit.evals.suite import SuiteError, load_suite
    from skillkit.evals.task import EvalTask

    try:
        suite = load_suite(args.target)
    except SuiteError as exc:
        return _usage(str(exc))
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        return _usage("--fail-under is a rate from 0 to 1")
    if args.judge_model:
        suite = replace(suite, judge_model=args.judge_model)
    models = _models(args, suite.models)
    if not models:
        return _usage("no models: give --models a,b,c or list 'models' in the suite")
    unjudged = _unjudged(suite)
    if unjudged:
        return _usage(
            f"judge checks without a model: {', '.join(unjudged)} "
            "(give the suite 'judge: MODEL', the check 'model:', or --judge-model)"
        )
    options = agent_options(args, session="off")
    problem = _probe(options, [*models, *_judges(suite)])
    if problem is not None:
        return _usage(problem)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("evals") / "runs" / f"{suite.name}-{stamp}"
    record = recording_from_args(args, f"eval {suite.name}", Path.cwd())
    if isinstance(record, str):
        return _usage(record)
    task = EvalTask(suite, CliAgentMaker(options), CliJudgeMaker(options), record=record)
    show = Progress(sys.stderr)
    settings = {"engine": args.engine, "concurrency": args.concurrency}
    try:
        summary = asyncio.run(
            run_eval_to_dir(
                suite,
                out,
                task,
                models=models,
                engine=engine_from_args(args),
                resume=args.resume,
                settings=settings,
                on_progress=show,
            )
        )
    except EvalRunError as exc:
        return _usage(str(exc))
    except KeyboardInterrupt:
        show.finish()
        print(f"skillkit: eval: interrupted; resume with --out {out} --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        from skillkit.errors import describe_exception

        show.finish()
        print(f"skillkit: error: eval: {describe_exception(exc)}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        task.close()
        if record is not None:
            record.close()
    show.finish()
    return _finish(args, suite.name, out, summary)


def _unjudged(suite: Suite) -> list[str]:
    """The judge checks that name no model while the suite names none either."""
    return [
        f"{case.name} (line {check.line})"
        for case in suite.cases
        for check in case.checks
        if check.kind == "judge" and not check.value.get("model") and not suite.judge_model
    ]


def _judges(suite: Suite) -> list[str]:
    """Every judge model the suite uses, sorted."""
    judges = {suite.judge_model} | {
        check.value.get("model")
        for case in suite.cases
        for check in case.checks
        if check.kind == "judge"
    }
    return sorted(j for j in judges if j)


def _finish(args: argparse.Namespace, name: str, out: Path, summary: Any) -> int:
    """Print the finished run's table, write its report, and pick the exit code."""
    from skillkit.evals.run import EvalRunError, read_run

    try:
        results, manifest = read_run(out)
    except EvalRunError as exc:
        print(f"skillkit: error: eval: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(table(results), flush=True)
    if args.report:
        from skillkit.evals.report import write_report

        try:
            write_report(Path(args.report), results, manifest, title=name)
        except OSError as exc:
            print(f"skillkit: error: eval: cannot write the report: {exc}", file=sys.stderr)
            return EXIT_ERROR
        print(f"skillkit: eval: report written to {args.report}", file=sys.stderr)
    print(
        f"skillkit: eval: {summary.total} rows ({summary.skipped} done before); "
        f"results in {out} (sha256 {summary.results_sha256[:16]}…)",
        file=sys.stderr,
    )
    if not summary.complete:
        return EXIT_ERROR
    if args.fail_under is not None:
        passed = sum(m.passed for m in results.models)
        total = sum(m.total for m in results.models)
        if total and passed / total < args.fail_under:
            print(
                f"skillkit: eval: pass rate {passed / total:.1%} is under {args.fail_under:.1%}",
                file=sys.stderr,
            )
            return EXIT_ERROR
    return EXIT_OK


def _models(args: argparse.Namespace, default: tuple[str, ...]) -> list[str]:
    if args.models:
        return list(dict.fromkeys(m.strip() for m in args.models.split(",") if m.strip()))
    return list(default)


def _probe(options: AgentOptions, models: list[str]) -> str | None:
    """Fail before the first row on a model or rule that cannot work."""
    from skillkit.frontends.setup import SetupError, build_agent

    for model in models:
        try:
            probe = build_agent(replace(options, model=model))
            asyncio.run(probe.aclose())
        except (SetupError, ValueError) as exc:
            return f"model {model}: {exc}"
    return None


def _usage(message: str) -> int:
    print(f"skillkit: error: eval: {message}", file=sys.stderr)
    return EXIT_USAGE


def table(results: EvalResults) -> str:
    """The terminal table: each case's pass rate on each model with its 95 % interval,
    then each model's totals."""
    from skillkit.text import neutralize

    models = [score.model for score in results.models]
    cases = list(dict.fromkeys(score.case for score in results.cases))
    width = max([4, *(len(c) for c in cases)])
    columns = [max(len(m), 22) for m in models]
    lines = [
        "case".ljust(width)
        + "".join("  " + m.ljust(w) for m, w in zip(models, columns, strict=True))
    ]
    lines.append("-" * len(lines[0]))
    for case in cases:
        cells = []
        for model, w in zip(models, columns, strict=True):
            found = results.case(case, model)
            cells.append("  " + (_cell(found.passed, found.total) if found else "-").ljust(w))
        lines.append(case.ljust(width) + "".join(cells))
    lines.append("-" * len(lines[0]))
    for score in results.models:
        low, high = score.interval
        cost = f"${score.cost:.4f}" if score.cost_known else "cost unknown"
        lines.append(
            f"{score.model}: {score.passed}/{score.total} passed ({score.rate:.0%}, "
            f"95% CI {low:.0%}–{high:.0%}); tokens {score.input_tokens} in / "
            f"{score.output_tokens} out; {cost}"
        )
    text = "\n".join(line.rstrip() for line in lines)
    return neutralize(text) if sys.stdout.isatty() else text


def _cell(passed: int, total: int) -> str:
    from skillkit.evals.stats import wilson_interval

    low, high = wilson_interval(passed, total)
    return f"{passed}/{total} {passed / total:4.0%} [{low:.0%}–{high:.0%}]"


class Progress:
    """One status line on stderr (rows, pass rate, tokens, cost): redrawn in place on a
    terminal, else printed at most every few seconds and at the end."""

    INTERVAL = 5.0

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, progress: EvalProgress, result: object) -> None:
        batch = progress.batch
        now = time.monotonic()
        final = batch.remaining == 0
        if not final and now - self.last < (0.1 if self.live else self.INTERVAL):
            return
        self.last = now
        finished = batch.skipped + batch.done
        rate = f"{progress.passed / progress.judged:.0%}" if progress.judged else "–"
        status = (
            f"{finished}/{batch.total} rows  pass {rate}  {batch.errors} errors  "
            f"tokens {batch.input_tokens} in / {batch.output_tokens} out"
        ) + (f"  ${batch.cost:.4f}" if batch.cost else "")
        if self.live:
            filled = int(20 * finished / batch.total) if batch.total else 20
            self.stream.write(f"\r\x1b[2K{'█' * filled}{'·' * (20 - filled)} {status}")
            self.drawn = True
        else:
            self.stream.write(f"skillkit: eval: {status}\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def add_trigger_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``skillkit skills eval NAME`` (added by the skills command)."""
    add_run_options(parser)
    parser.add_argument(
        "--triggers", metavar="FILE", help="the trigger cases (default: evals/triggers.yaml)"
    )
    parser.add_argument(
        "--repeats", metavar="N", type=positive_int, help="runs of each prompt per model"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_recording_options(parser)


def skills_eval_command(args: argparse.Namespace) -> int:
    """``skillkit skills eval NAME``: the trigger evals of one skill (see
    `skillkit.evals.triggers`); 0 done, 1 a row failed to run, 2 bad input."""
    import json

    from skillkit.evals.run import run_eval
    from skillkit.evals.suite import SuiteError
    from skillkit.evals.triggers import (
        TRIGGERS_FILE,
        format_scores,
        load_triggers,
        score_triggers,
        trigger_suite,
    )
    from skillkit.frontends.setup import skill_registry

    if args.source:  # the rows' agents see the installed catalog only
        return _usage(
            "--source does not reach the agents: install the skill (the project's "
            ".skillkit/skills or ~/.skillkit/skills) and run from its project"
        )
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    registry = skill_registry(str(cwd), [])
    entry = registry.entry(args.name)
    if entry is None:
        return _usage(f"no skill named '{args.name}' ('skillkit skills list' shows them)")
    path = Path(args.triggers) if args.triggers else entry.skill.base_dir / TRIGGERS_FILE
    try:
        triggers = load_triggers(path, entry.skill.name)
    except SuiteError as exc:
        return _usage(str(exc))
    if args.repeats is not None:
        triggers = replace(triggers, n=args.repeats)
    models = _models(args, triggers.models)
    if not models:
        return _usage("no models: give --models a,b,c or list 'models' in the triggers file")
    options = agent_options(args, session="off", workspace=cwd)
    problem = _probe(options, models)
    if problem is not None:
        return _usage(problem)
    suite = trigger_suite(triggers)
    record = recording_from_args(args, f"eval {suite.name}", cwd)
    if isinstance(record, str):
        return _usage(record)
    where = recording_location(record) if record is not None else ""
    maker = CliAgentMaker(options, workspace=cwd)
    engine = engine_from_args(args)
    try:
        results = asyncio.run(run_eval(suite, maker, models=models, engine=engine, record=record))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        if record is not None:
            record.close()
    scores = score_triggers(results, suite, entry.skill.name)
    if args.json:
        print(json.dumps([s.as_json() for s in scores], indent=2), flush=True)
    else:
        print(format_scores(entry.skill.name, scores), flush=True)
    if record is not None:
        print(
            f"skillkit: eval: each run's conversation kept as a session named "
            f"'{record.name} CASE MODEL #N' in {where} ('skillkit sessions list' shows them)",
            file=sys.stderr,
        )
    failed = [r for r in results.results if r.error is not None]
    for result in failed[:3]:
        print(f"skillkit: eval: row {result.row}: {result.error}", file=sys.stderr)
    return EXIT_ERROR if failed else EXIT_OK
