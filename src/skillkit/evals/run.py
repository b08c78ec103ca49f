"""Running a suite: its rows on a batch engine, and what the results add up to.

Each (case, model, repeat) is one batch row, in a fixed order (`eval_rows`), so a run
has the batch machinery's guarantees: any engine, bounded concurrency, one result per
row, the canonical results hash. `run_eval` is the SDK entry point (results in memory);
`run_eval_to_dir` is what ``skillkit eval`` does: ``OUT/rows.jsonl`` (the rows),
``OUT/results.jsonl`` (appended as rows finish, resumable) and its manifest, whose
settings record the suite's SHA-256 so a resumed run must use the same suite.
`summarize` turns results into pass rates with Wilson intervals, per case and model
and per model, with tokens and cost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit.batch import (
    BatchProgress,
    BatchSummary,
    Engine,
    LocalEngine,
    RateLimiter,
    RecordSessions,
    RowResult,
    canonical_hash,
    manifest_path,
    run_batch,
    run_to_file,
)
from skillkit.evals.checks import JudgeFactory
from skillkit.evals.stats import wilson_interval
from skillkit.evals.suite import Suite
from skillkit.evals.task import AgentMaker, EvalTask, outcome_of

__all__ = [
    "CaseScore",
    "EvalResults",
    "EvalRunError",
    "ModelScore",
    "eval_rows",
    "read_run",
    "run_eval",
    "run_eval_to_dir",
    "summarize",
]

ROWS_FILE = "rows.jsonl"
RESULTS_FILE = "results.jsonl"


class EvalRunError(ValueError):
    """A run folder cannot be used (a different suite, not a run folder)."""


def eval_rows(suite: Suite, models: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``suite`` on ``models``: each case, each model, each repeat, in
    that order."""
    if not models:
        raise ValueError("no models to evaluate (give models, or list them in the suite)")
    return [
        {"case": case.name, "model": model, "repeat": repeat}
        for case in suite.cases
        for model in models
        for repeat in range(case.n)
    ]


@dataclass(frozen=True)
class CaseScore:
    """One case on one model: ``passed`` of ``total`` runs, the 95 % Wilson interval."""

    case: str
    model: str
    passed: int
    total: int
    errors: int = 0

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.passed, self.total)


@dataclass(frozen=True)
class ModelScore:
    """Every case on one model: pass counts, tokens and cost summed over its rows."""

    model: str
    passed: int
    total: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.passed, self.total)


@dataclass
class EvalResults:
    """A run's results (row order) and their summary."""

    results: list[RowResult]
    cases: list[CaseScore] = field(default_factory=list)
    models: list[ModelScore] = field(default_factory=list)
    results_sha256: str = ""

    def case(self, case: str, model: str) -> CaseScore | None:
        return next((s for s in self.cases if s.case == case and s.model == model), None)


def summarize(results: Iterable[RowResult]) -> EvalResults:
    """Pass rates per (case, model) in first-seen order, and per model."""
    ordered = sorted(results, key=lambda r: r.row)
    per_case: dict[tuple[str, str], list[int]] = {}
    per_model: dict[str, dict[str, Any]] = {}
    for result in ordered:
        outcome = outcome_of(result)
        if outcome is None:
            continue
        counts = per_case.setdefault((outcome.case, outcome.model), [0, 0, 0])
        counts[0] += outcome.passed
        counts[1] += 1
        counts[2] += result.error is not None
        totals = per_model.setdefault(
            outcome.model,
            {"passed": 0, "total": 0, "in": 0, "out": 0, "cost": 0.0, "known": True},
        )
        totals["passed"] += outcome.passed
        totals["total"] += 1
        if result.usage is not None:
            totals["in"] += result.usage.input + result.usage.cache_read
            totals["out"] += result.usage.output
        if result.cost is None:
            totals["known"] = False
        else:
            totals["cost"] += result.cost
    return EvalResults(
        results=ordered,
        cases=[CaseScore(c, m, p, t, e) for (c, m), (p, t, e) in per_case.items()],
        models=[
            ModelScore(m, v["passed"], v["total"], v["in"], v["out"], v["cost"], v["known"])
            for m, v in per_model.items()
        ],
        results_sha256=canonical_hash(ordered),
    )


async def run_eval(
    suite: Suite,
    make_agent: AgentMaker,
    *,
    models: Sequence[str] | None = None,
    make_judge: JudgeFactory | None = None,
    engine: Engine | None = None,
    limiter: RateLimiter | None = None,
    on_result: Callable[[RowResult], None] | None = None,
    record: RecordSessions | None = None,
) -> EvalResults:
    """Run every case of ``suite`` ``n`` times on each model (``models``, else the
    suite's) and return the results with their pass rates.

    ``make_agent(model, workspace, max_turns)`` makes a fresh agent working in the
    case's scratch ``workspace``; ``make_judge(model)`` makes judge agents. ``engine``
    is a batch engine (`LocalEngine` unless given); on `RayEngine` the factories must
    be importable or picklable by the workers. ``record`` keeps each row's conversation
    as a session (`EvalTask.record`; each result's ``session`` is its id); the caller
    closes it."""
    rows = eval_rows(suite, list(models or suite.models))
    task = EvalTask(suite, make_agent, make_judge, record=record)
    try:
        results = await run_batch(
            rows, task=task, engine=engine or LocalEngine(), limiter=limiter, on_result=on_result
        )
    finally:
        task.close()
    return summarize(results)


@dataclass
class EvalProgress:
    """A `BatchProgress` with the pass count of the rows run so far."""

    batch: BatchProgress
    passed: int = 0
    judged: int = 0


async def run_eval_to_dir(
    suite: Suite,
    out: Path,
    task: EvalTask,
    *,
    models: Sequence[str],
    engine: Engine | None = None,
    limiter: RateLimiter | None = None,
    resume: bool = False,
    settings: Mapping[str, Any] | None = None,
    on_progress: Callable[[EvalProgress, RowResult | None], None] | None = None,
) -> BatchSummary:
    """Run ``suite`` into the folder ``out`` (see the module notes). Without ``resume``
    a folder that already holds results is refused; with it, the rows already there are
    skipped — after checking that the folder was made by the same suite and models.
    `EvalRunError` for a folder that cannot be used."""
    rows = eval_rows(suite, models)
    out.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - once, before the run
    rows_file = out / ROWS_FILE
    results_file = out / RESULTS_FILE
    text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    if results_file.exists() and results_file.stat().st_size > 0:
        if not resume:
            raise EvalRunError(
                f"{out} already holds results: add --resume to go on with it, or give another --out"
            )
        if not rows_file.is_file() or rows_file.read_text(encoding="utf-8") != text:
            raise EvalRunError(f"{out} was made by another suite or other models: cannot resume it")
    rows_file.write_text(text, encoding="utf-8")
    recorded = {
        "suite": suite.source,
        "suite_name": suite.name,
        "suite_sha256": suite.digest,
        "models": list(models),
        "judge_model": suite.judge_model,
        **dict(settings or {}),
    }
    progress_state: EvalProgress | None = None

    def progress(batch: BatchProgress, result: RowResult | None) -> None:
        nonlocal progress_state
        if progress_state is None or progress_state.batch is not batch:
            progress_state = EvalProgress(batch)
        if result is not None:
            outcome = outcome_of(result)
            progress_state.judged += 1
            progress_state.passed += bool(outcome is not None and outcome.passed)
        if on_progress is not None:
            on_progress(progress_state, result)

    return await run_to_file(
        rows_file,
        results_file,
        task,
        engine=engine,
        limiter=limiter,
        settings=recorded,
        on_progress=progress,
    )


def read_run(folder: Path) -> tuple[EvalResults, dict[str, Any]]:
    """The results and manifest of a run folder (or of a results file given directly).
    `EvalRunError` when it is not one."""
    results_file = folder / RESULTS_FILE if folder.is_dir() else folder
    if not results_file.is_file():
        raise EvalRunError(f"{folder}: no eval results here ({RESULTS_FILE})")
    import msgspec

    decoder = msgspec.json.Decoder(RowResult)
    by_row: dict[int, RowResult] = {}
    for line in results_file.read_bytes().splitlines():
        try:  # a torn or foreign line is left out, as a resumed run would
            result = decoder.decode(line)
        except msgspec.DecodeError:
            continue
        by_row.setdefault(result.row, result)
    results = list(by_row.values())
    manifest: dict[str, Any] = {}
    try:
        manifest = json.loads(manifest_path(results_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if not any(outcome_of(r) is not None for r in results):
        raise EvalRunError(f"{folder}: the results hold no eval outcomes")
    return summarize(results), manifest
