"""Hot reload: `SkillWatcher` watches a registry's sources and reloads on change.

Changes are grouped with a short debounce (a save that touches several files is one
reload), then `SkillRegistry.reload` re-reads the changed skills and swaps the snapshot;
the next turn's prompt and tools reflect it. A broken edit keeps the last good version.
Uses the ``watchfiles`` package; without it `SkillWatcher` raises a `RuntimeError` that
says how to install it (`SkillRegistry.reload`, i.e. ``/reload``, works regardless).

A source folder that does not exist yet is checked for again about once a second, so
creating ``.agents/skills`` in a project is noticed too.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.skills.registry import SkillRegistry

__all__ = ["SkillWatcher"]


def _require_watchfiles() -> None:
    try:
        import watchfiles  # noqa: F401
    except ImportError:  # pragma: no cover - watchfiles is a dependency
        raise RuntimeError(
            "hot reload of skills needs the 'watchfiles' package (pip install watchfiles); "
            "use /reload to reload by hand"
        ) from None


class SkillWatcher:
    """Reloads ``registry`` when a file under one of its sources changes.

    ``debounce_ms`` is how long the watcher waits for quiet after a change before it
    reloads. Run it as a task: ``task = watcher.start()`` ... ``await watcher.stop()``,
    or ``async with SkillWatcher(registry): ...``. `ready` is set once files are
    watched; `reloads` counts reloads done.
    """

    def __init__(
        self, registry: SkillRegistry, *, debounce_ms: int = 50, max_wait_ms: int = 1000
    ) -> None:
        _require_watchfiles()
        self.registry = registry
        self.debounce_ms = debounce_ms
        self.max_wait_ms = max(max_wait_ms, debounce_ms)
        self.reloads = 0
        self.ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def _roots(self) -> tuple[list[Path], list[Path]]:
        """(folders to watch, source folders that do not exist yet)."""
        watched: list[Path] = []
        missing: list[Path] = []
        for source in self.registry.sources:
            (watched if source.path.is_dir() else missing).append(source.path)
        # Skills reached through a symlink live elsewhere: watch their real folders too.
        for folder in self.registry.linked_folders():
            real = Path(folder)
            if not any(real.is_relative_to(w) for w in watched):
                watched.append(real)
        return watched, missing

    async def run(self) -> None:
        """Watch until `stop` is called. Never raises for a failed reload (it is
        printed to stderr and watching goes on)."""
        import watchfiles

        while not self._stop.is_set():
            watched, missing = self._roots()
            if not watched:
                self.ready.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=1.0)
                if any(p.is_dir() for p in missing):
                    self._reload(None)
                continue
            changes_seen = watchfiles.awatch(
                *watched,
                debounce=self.max_wait_ms,
                step=self.debounce_ms,
                stop_event=self._stop,
                rust_timeout=1000,
                yield_on_timeout=True,
                ignore_permission_denied=True,
            )
            restart = False
            try:
                pending = asyncio.ensure_future(anext(changes_seen))
                # The native watcher is set up synchronously on the first step of the
                # generator; from then on no change is missed.
                await asyncio.sleep(0)
                if not self.ready.is_set():
                    # what changed between the registry's last scan and now was not
                    # watched yet: one rescan (files compared by size and time) catches it
                    self._catch_up()
                self.ready.set()
                while True:
                    try:
                        changes = await pending
                    except StopAsyncIteration:
                        break
                    if changes:
                        self._reload({path for _, path in changes})
                        restart = self._roots()[0] != watched
                    elif any(p.is_dir() for p in missing):
                        self._reload(None)
                        restart = True
                    if restart:
                        break
                    pending = asyncio.ensure_future(anext(changes_seen))
            finally:
                if not pending.done():
                    self._stop.set()
                    with contextlib.suppress(BaseException):
                        await pending
                with contextlib.suppress(RuntimeError):
                    await changes_seen.aclose()
            if not restart:
                return

    def _catch_up(self) -> None:
        try:
            self.registry.reload(changed=())
        except Exception as exc:
            print(f"skillkit: skill reload failed: {exc!r}", file=sys.stderr)

    def _reload(self, changed: set[str] | None) -> None:
        try:
            self.registry.reload(changed=changed if changed is not None else ())
        except Exception as exc:  # a listener failed; keep watching
            print(f"skillkit: skill reload failed: {exc!r}", file=sys.stderr)
        self.reloads += 1

    def start(self) -> asyncio.Task[None]:
        """Start watching in a background task on the running loop."""
        if self._task is None or self._task.done():
            self._stop.clear()
            self._task = asyncio.get_running_loop().create_task(self.run())
        return self._task

    async def stop(self) -> None:
        """Stop watching and wait for the task to end."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def __aenter__(self) -> SkillWatcher:
        self.start()
        await self.ready.wait()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
