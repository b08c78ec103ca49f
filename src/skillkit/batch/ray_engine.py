"""The Ray engine: rows on async actors, on a local instance or a cluster.

Ray is an optional extra (``pip install 'skillkit-agent[ray]'``), imported only when
this engine runs. Each of ``actors`` workers is an async actor running up to
``per_actor`` rows at once; every worker gets the row task once, when it starts, and
builds its own clients (the task makes a fresh agent per row). The driver keeps at
most ``actors × per_actor`` rows submitted, so a large dataset never floods the object
store, and writes every result itself (one writer).

A worker that dies (killed, out of memory, its node lost) fails its rows in flight:
the engine starts a replacement and submits those rows again, up to ``max_attempts``
times each, after which the row is recorded with an error. A rate limiter, when given,
runs in one actor that every worker asks before each model call, so the limit holds
for the whole run, not per worker.

Without ``address`` a local Ray instance is started for the run (no dashboard; its
workers see this process's ``sys.path``, so row tasks defined in the caller's modules
can be unpickled there) and shut down after it; with ``address`` (``auto`` or
``ray://host:port``) the run joins that cluster, whose nodes must have SkillKit and
the task's modules installed.

With ``trace=True`` (``skillkit batch --engine ray --trace``) the rows are traced where
they run: each worker installs OTLP-exporting tracer and meter providers configured by
this process's ``OTEL_*`` variables (`skillkit.tracing.otlp`), so every row is an
``invoke_agent`` trace sent from its worker to the same collector, and the engine has
each worker send what it holds before it is stopped. A worker that cannot trace (no
exporter installed on its node) runs its rows untraced; `RayEngine.tracing_problems`
says why.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from skillkit.batch.engines import ResultCallback, aiter_rows
from skillkit.batch.results import RowResult
from skillkit.batch.rows import Row

if TYPE_CHECKING:
    from skillkit.batch.limits import RateLimiter
    from skillkit.batch.work import RowTask

__all__ = ["RayEngine", "RayUnavailableError"]


class RayUnavailableError(RuntimeError):
    """Ray is not installed; the message says how to install it."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "the ray engine needs Ray: pip install 'skillkit-agent[ray]'"
        ) from None
    return ray


@dataclass
class _Slot:
    """One worker position: its current actor and how many times it was replaced."""

    actor: Any
    generation: int = 0


@dataclass
class _Submission:
    row: Row
    slot: int
    generation: int
    attempt: int


class RayEngine:
    """Rows on ``actors`` Ray actors, ``per_actor`` at a time each.

    ``init`` adds keyword arguments to ``ray.init`` when this engine starts the
    instance (e.g. ``object_store_memory``, ``num_cpus``). ``trace`` traces the rows in
    the workers, exported over OTLP as this process's ``OTEL_*`` variables say (see the
    module docs)."""

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        actors: int = 2,
        per_actor: int = 32,
        max_attempts: int = 3,
        init: dict[str, Any] | None = None,
        trace: bool = False,
    ) -> None:
        if actors < 1 or per_actor < 1 or max_attempts < 1:
            raise ValueError("actors, per_actor and max_attempts must be at least 1")
        self.address = address
        self.actors = actors
        self.per_actor = per_actor
        self.max_attempts = max_attempts
        self.init = dict(init or {})
        self.trace = trace
        self.tracing_problems: list[str] = []
        """Why workers could not trace their rows (one line per worker; ``trace=True``)."""
        self.retried = 0
        """Rows submitted again after their worker died (for reports and tests)."""
        self.worker_pids: list[int] = []

    def _start(self, ray: Any) -> bool:
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": "ERROR",
            "log_to_driver": False,
            **self.init,
        }
        if self.address is not None:
            options["address"] = self.address
        else:
            paths = [p for p in sys.path if p and os.path.isdir(p)]
            env = {"PYTHONPATH": os.pathsep.join(paths)}
            runtime_env = dict(options.pop("runtime_env", None) or {})
            runtime_env["env_vars"] = {**env, **runtime_env.get("env_vars", {})}
            options["runtime_env"] = runtime_env
        ray.init(**options)
        return True

    async def run(
        self,
        rows: Iterable[Row] | AsyncIterable[Row],
        task: RowTask,
        on_result: ResultCallback,
        *,
        limiter: RateLimiter | None = None,
    ) -> None:
        ray = _import_ray()
        started = self._start(ray)
        worker_class, limiter_class = _actor_classes(ray)
        limiter_actor = (
            limiter_class.remote(limiter.rate, limiter.burst) if limiter is not None else None
        )
        slots: list[_Slot] = []
        tracing = _tracing_environment() if self.trace else None

        def new_actor(index: int) -> Any:
            return worker_class.options(max_concurrency=self.per_actor, max_restarts=0).remote(
                task, limiter_actor, index, tracing
            )

        in_flight: dict[asyncio.Future[Any], _Submission] = {}
        retry: list[_Submission] = []

        def submit(entry: _Submission) -> None:
            slot = slots[entry.slot]
            if slot.generation != entry.generation:
                entry = replace(entry, generation=slot.generation)
            ref = slot.actor.run.remote(entry.row)
            in_flight[asyncio.wrap_future(ref.future())] = entry

        def settle(done: Iterable[asyncio.Future[Any]]) -> None:
            for future in done:
                entry = in_flight.pop(future)
                try:
                    result: RowResult = future.result()
                except ray.exceptions.RayActorError as exc:
                    self._replace(slots, entry, new_actor)
                    self._worker_died(entry, exc, retry, on_result)
                    continue
                result.attempts = entry.attempt
                on_result(result)

        capacity = self.actors * self.per_actor
        counter = 0
        try:
            slots.extend(_Slot(new_actor(i)) for i in range(self.actors))
            self.worker_pids = list(
                await asyncio.gather(*(_await(slot.actor.pid.remote()) for slot in slots))
            )
            if tracing is not None:
                problems = await asyncio.gather(
                    *(_await(slot.actor.tracing_problem.remote()) for slot in slots)
                )
                self.tracing_problems = [p for p in problems if p]
            rows_iter = aiter_rows(rows).__aiter__()
            exhausted = False
            while True:
                while len(in_flight) < capacity and (retry or not exhausted):
                    if retry:
                        submit(retry.pop(0))
                        continue
                    try:
                        row = await rows_iter.__anext__()
                    except StopAsyncIteration:
                        exhausted = True
                        break
                    position = counter % self.actors
                    counter += 1
                    submit(_Submission(row, position, slots[position].generation, 1))
                if not in_flight:
                    break
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                settle(done)
        finally:
            for future in in_flight:
                future.cancel()
            if tracing is not None:  # what the workers hold is sent before they stop
                await _flush(slots)
            for slot in slots:
                ray.kill(slot.actor)
            if limiter_actor is not None:
                ray.kill(limiter_actor)
            if started:
                ray.shutdown()

    def _worker_died(
        self,
        entry: _Submission,
        exc: Exception,
        retry: list[_Submission],
        on_result: ResultCallback,
    ) -> None:
        """The row whose worker died is tried again (queued in ``retry``), or reported as
        an error once it has been tried ``max_attempts`` times."""
        if entry.attempt >= self.max_attempts:
            on_result(
                RowResult(
                    row=entry.row.index,
                    error=f"the worker running this row died {entry.attempt} times "
                    f"({type(exc).__name__})",
                    stop_reason="error",
                    attempts=entry.attempt,
                )
            )
        else:
            self.retried += 1
            retry.append(replace(entry, attempt=entry.attempt + 1))

    def _replace(self, slots: list[_Slot], entry: _Submission, new_actor: Any) -> None:
        """Start a new actor in the dead one's slot (once per death)."""
        slot = slots[entry.slot]
        if slot.generation == entry.generation:
            slot.actor = new_actor(entry.slot)
            slot.generation += 1


async def _await(ref: Any) -> Any:
    return await asyncio.wrap_future(ref.future())


def _tracing_environment() -> dict[str, str]:
    """The ``OTEL_*`` variables workers configure their tracing from."""
    from skillkit.tracing.otlp import otlp_environment

    return otlp_environment()


_FLUSH_SECONDS = 15.0
"""How long the engine waits for its workers to send their spans at the end."""


async def _flush(slots: list[_Slot]) -> None:
    """Have every live worker send its spans and metrics (dead ones are skipped; a
    collector that does not answer in `_FLUSH_SECONDS` is not waited for)."""
    flushes = [_await(slot.actor.flush.remote()) for slot in slots]
    try:
        async with asyncio.timeout(_FLUSH_SECONDS):
            await asyncio.gather(*flushes, return_exceptions=True)
    except TimeoutError:
        pass


def _start_tracing(environment: dict[str, str], worker: str) -> str | None:
    """Trace this worker process as ``environment`` says (`configure_otlp`); the reason
    it cannot, as one line, else None."""
    os.environ.update(environment)
    try:
        from skillkit.tracing.otlp import configure_otlp

        configure_otlp()
    except Exception as exc:
        from skillkit.errors import describe_exception

        return f"worker {worker}: rows are not traced: {' '.join(describe_exception(exc).split())}"
    return None


_CLASSES: dict[int, tuple[Any, Any]] = {}


def _actor_classes(ray: Any) -> tuple[Any, Any]:
    """The worker and limiter actor classes (made once per Ray module)."""
    key = id(ray)
    if key not in _CLASSES:

        class _RemoteLimiter:
            def __init__(self, actor: Any) -> None:
                self.actor = actor

            async def acquire(self) -> None:
                wait = await self.actor.delay.remote()
                if wait > 0:
                    await asyncio.sleep(wait)

        @ray.remote(num_cpus=0)
        class BatchWorker:
            def __init__(
                self,
                task: RowTask,
                limiter: Any,
                index: int,
                tracing: dict[str, str] | None = None,
            ) -> None:
                self.task = task
                self.name = f"ray-{index}:{os.getpid()}"
                if limiter is not None and hasattr(task, "limiter"):
                    task.limiter = _RemoteLimiter(limiter)
                self.problem: str | None = None
                if tracing is not None:
                    self.problem = _start_tracing(tracing, self.name)

            def pid(self) -> int:
                return os.getpid()

            def tracing_problem(self) -> str | None:
                return self.problem

            def flush(self) -> None:
                from skillkit.tracing.otlp import flush_otlp

                flush_otlp()

            async def run(self, row: Row) -> RowResult:
                result = await self.task(row)
                result.worker = self.name
                return result

        @ray.remote(num_cpus=0)
        class BatchLimiter:
            def __init__(self, rate: float, burst: int) -> None:
                from skillkit.batch.limits import RateLimiter

                self.bucket = RateLimiter(rate, burst)

            def delay(self) -> float:
                return self.bucket.delay()

        _CLASSES[key] = (BatchWorker, BatchLimiter)
    return _CLASSES[key]
