"""Batch runs: rows in, one result per row out, on any engine.

`run_batch` is the SDK entry point: rows (mappings or `Row` values) and a way to make
an agent, results back in row order. `run_to_file` is what ``skillkit batch`` does: the
results are appended to a JSONL file as they complete, rows already there are skipped
(so an interrupted run is resumed by running it again), progress is reported, and a
manifest with the run's settings and the SHA-256 of its canonical results is written
next to the file (``RESULTS.jsonl.manifest.json``) at the end — and also when the run
is interrupted, marked incomplete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillkit.batch.engines import Engine, LocalEngine
from skillkit.batch.limits import RateLimiter
from skillkit.batch.recording import RecordSessions
from skillkit.batch.results import (
    ResultsFile,
    RowResult,
    canonical_hash,
    file_sha256,
    write_manifest,
)
from skillkit.batch.rows import Row, Template, read_rows
from skillkit.batch.work import AgentFactory, AgentRowTask, RowTask

__all__ = [
    "BatchProgress",
    "BatchSummary",
    "CostLimit",
    "manifest_path",
    "run_batch",
    "run_to_file",
]


async def run_batch(
    rows: Iterable[Mapping[str, Any] | Row],
    make_agent: AgentFactory | None = None,
    *,
    prompt: str | None = None,
    output_type: Any = None,
    task: RowTask | None = None,
    engine: Engine | None = None,
    limiter: RateLimiter | None = None,
    on_result: Callable[[RowResult], None] | None = None,
    record: RecordSessions | None = None,
) -> list[RowResult]:
    """Run one agent session per row and return the results in row order.

    Each row is a mapping (its index is its position) or a `Row`. ``make_agent`` makes
    a fresh `AgentRunner` for each row; ``prompt`` is a template whose ``{field}``
    placeholders are filled from the row (without it, each row's ``prompt`` field is
    the prompt). ``output_type`` asks each run for structured output (each result's
    ``output``). ``task`` replaces the agent session with any `RowTask`. ``engine`` is
    `LocalEngine` (8 at once) unless given; ``limiter`` paces model calls across the
    whole run; ``on_result`` sees each result as it completes. ``record`` keeps each
    row's conversation as a session (`RecordSessions`; with ``make_agent`` only — a
    ``task`` records as it was made to)."""
    if (task is None) == (make_agent is None):
        raise ValueError("give exactly one of make_agent and task")
    if task is None:
        assert make_agent is not None
        template = Template(prompt) if prompt is not None else None
        task = AgentRowTask(make_agent, template, output_type=output_type, record=record)
    elif record is not None:
        raise ValueError("record goes with make_agent; give a task its own RecordSessions")
    results: list[RowResult] = []

    def collect(result: RowResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    try:
        await (engine or LocalEngine()).run(_as_rows(rows), task, collect, limiter=limiter)
    finally:
        if record is not None:
            record.close()
    return sorted(results, key=lambda result: result.row)


def _as_rows(rows: Iterable[Mapping[str, Any] | Row]) -> Iterator[Row]:
    for index, row in enumerate(rows):
        yield row if isinstance(row, Row) else Row(index, data=row)


@dataclass
class BatchProgress:
    """Running totals, updated as results arrive. ``total`` counts every row of the
    dataset; ``skipped`` the ones an earlier run already recorded."""

    total: int
    skipped: int = 0
    done: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def add(self, result: RowResult) -> None:
        self.done += 1
        if result.error is not None:
            self.errors += 1
        if result.usage is not None:
            self.input_tokens += result.usage.input + result.usage.cache_read
            self.output_tokens += result.usage.output
        if result.cost is not None:
            self.cost += result.cost

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.skipped - self.done)

    @property
    def rate(self) -> float:
        """Rows a second in this run so far."""
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until the last row, at the current rate (None before a first row)."""
        rate = self.rate
        return self.remaining / rate if rate > 0 else None


@dataclass(frozen=True)
class BatchSummary:
    """How a `run_to_file` call ended: ``complete`` when every row has a result.
    ``not_started`` counts the rows left for a later run because the batch's cost limit
    was reached, ``stopped`` says why (None: no row was held back)."""

    results: Path
    manifest: Path
    total: int
    ran: int
    skipped: int
    errors: int
    results_sha256: str
    complete: bool
    not_started: int = 0
    stopped: str | None = None


class CostLimit:
    """The cost limit of a whole batch (``max_total_cost`` US dollars): once what the
    batch spent — the rows recorded by earlier runs included — reaches it, no further
    row starts (rows in flight finish; each has its own limit, ``--max-cost``). A row
    whose cost is unknown (no prices for the model) but that used tokens makes the sum
    unknown: no further row starts either (the limit fails closed)."""

    def __init__(self, max_total_cost: float, earlier: Iterable[RowResult] = ()) -> None:
        if not max_total_cost > 0:
            raise ValueError("max_total_cost must be positive")
        self.limit = max_total_cost
        self.spent = 0.0
        self.unknown: int | None = None  # a row whose cost could not be known
        for result in earlier:
            self.add(result)

    def add(self, result: RowResult) -> None:
        if result.cost is not None:
            self.spent += result.cost
        elif result.usage is not None and result.usage.total and self.unknown is None:
            self.unknown = result.row

    def refusal(self) -> str | None:
        """Why no further row may start (None: one may)."""
        if self.unknown is not None:
            return (
                f"the cost of row {self.unknown} is unknown (no prices for the model), "
                f"so the batch's spending cannot be held under ${self.limit:g}"
            )
        if self.spent >= self.limit:
            return f"the batch spent ${self.spent:.4f}, reaching --max-total-cost ${self.limit:g}"
        return None


def manifest_path(results: Path) -> Path:
    """``RESULTS.jsonl.manifest.json`` next to ``results``."""
    return results.with_name(results.name + ".manifest.json")


async def run_to_file(
    dataset: Path,
    out: Path,
    task: RowTask,
    *,
    engine: Engine | None = None,
    limiter: RateLimiter | None = None,
    settings: Mapping[str, Any] | None = None,
    on_progress: Callable[[BatchProgress, RowResult | None], None] | None = None,
    max_total_cost: float | None = None,
) -> BatchSummary:
    """Run ``task`` on each row of ``dataset`` not yet in ``out``, appending results.

    ``settings`` (model, template, engine, ...) go into the manifest as they are.
    ``max_total_cost`` (US dollars) limits the whole batch (`CostLimit`): the rows not
    started once it is reached are named in the manifest (``not_started``, with the
    reason) and left out of ``out``, so a later run with a higher limit runs them.
    ``on_progress`` is called once before the first row (with None) and after each.
    `OSError` when the dataset cannot be read or the results cannot be written."""
    engine = engine or LocalEngine()
    total = sum(1 for _ in read_rows(dataset))
    begun = datetime.now(UTC).isoformat(timespec="seconds")
    with ResultsFile(out) as results:
        already = set(results.done)
        progress = BatchProgress(total=total, skipped=len(already))
        budget = (
            CostLimit(max_total_cost, results.done.values()) if max_total_cost is not None else None
        )
        held: list[int] = []
        stopped: list[str] = []
        if on_progress is not None:
            on_progress(progress, None)

        def record(result: RowResult) -> None:
            results.add(result)
            progress.add(result)
            if budget is not None:
                budget.add(result)
            if on_progress is not None:
                on_progress(progress, result)

        def pending() -> Iterator[Row]:
            for row in read_rows(dataset):
                if row.index in already:
                    continue
                if budget is not None and not held:
                    reason = budget.refusal()
                    if reason is not None:
                        stopped.append(reason)
                if stopped:
                    held.append(row.index)
                    continue
                yield row

        complete = False
        try:
            await engine.run(pending(), task, record, limiter=limiter)
            complete = all(index in results.done for index in range(total))
        finally:
            digest = canonical_hash(results.done.values())
            manifest = _manifest(dataset, out, results.done, digest, total, complete, engine)
            manifest["not_started"] = {"rows": held, "reason": stopped[0]} if stopped else None
            manifest["settings"] = dict(settings or {})
            manifest["started"] = begun
            manifest["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
            write_manifest(manifest_path(out), manifest)
    return BatchSummary(
        results=out,
        manifest=manifest_path(out),
        total=total,
        ran=progress.done,
        skipped=progress.skipped,
        errors=progress.errors,
        results_sha256=digest,
        complete=complete,
        not_started=len(held),
        stopped=stopped[0] if stopped else None,
    )


def _manifest(
    dataset: Path,
    out: Path,
    done: Mapping[int, RowResult],
    digest: str,
    total: int,
    complete: bool,
    engine: Engine,
) -> dict[str, Any]:
    """The manifest's fields that describe the dataset, the results and the engine (the
    caller adds what it knows of the run: rows not started, settings, times)."""
    return {
        "skillkit_version": _version(),
        "dataset": str(dataset),
        "dataset_sha256": file_sha256(dataset),
        "results": str(out),
        "results_sha256": digest,
        "rows": total,
        "recorded": len(done),
        "errors": sum(1 for r in done.values() if r.error is not None),
        "complete": complete,
        "engine": engine.name,
    }


def _version() -> str:
    # The package root is loaded whenever this module is; importing it by name would
    # count as importing every face it re-exports.
    import sys

    return str(getattr(sys.modules.get("skillkit"), "__version__", "unknown"))
