"""Batch runs: one agent session per dataset row, on asyncio or on Ray.

``await run_batch(rows, make_agent)`` returns one `RowResult` per row in row order;
``skillkit batch`` (`run_to_file`) appends results to a JSONL file as they complete,
resumes where an interrupted run stopped and writes a manifest with the SHA-256 of
the canonical results; `RecordSessions` keeps each row's conversation as a session.
Engines: `LocalEngine` (asyncio, bounded concurrency) and
`RayEngine` (async actors; Ray imported only when it runs). See docs/batch.md.
"""

from skillkit.batch.engines import Engine, LocalEngine
from skillkit.batch.limits import LimitedAdapter, RateLimiter
from skillkit.batch.ray_engine import RayEngine, RayUnavailableError
from skillkit.batch.recording import RecordSessions
from skillkit.batch.results import RowResult, canonical_hash
from skillkit.batch.rows import Row, Template, TemplateError, read_rows
from skillkit.batch.run import (
    BatchProgress,
    BatchSummary,
    CostLimit,
    manifest_path,
    run_batch,
    run_to_file,
)
from skillkit.batch.work import AgentRowTask

__all__ = [
    "AgentRowTask",
    "BatchProgress",
    "BatchSummary",
    "CostLimit",
    "Engine",
    "LimitedAdapter",
    "LocalEngine",
    "RateLimiter",
    "RayEngine",
    "RayUnavailableError",
    "RecordSessions",
    "Row",
    "RowResult",
    "Template",
    "TemplateError",
    "canonical_hash",
    "manifest_path",
    "read_rows",
    "run_batch",
    "run_to_file",
]
