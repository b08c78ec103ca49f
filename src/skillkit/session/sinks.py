"""Where a session kept outside a file writes its entries: the `EntrySink` a database
store gives each session it opens for writing, and the `AsyncEntrySink` of a store that
writes on an event loop."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from skillkit.session.format import Entry

__all__ = ["AsyncEntrySink", "EntrySink"]


class EntrySink(Protocol):
    """Where a session kept outside a file writes its entries (a database store gives
    one to each session it opens for writing)."""

    def write(self, entry: Entry, line: bytes) -> None:
        """Keep ``entry`` (``line`` is its encoded, redacted form) durably before
        returning, as one transaction: after a crash it is there whole or not at all."""
        ...

    def sync(self) -> None:
        """Force what was written to stable storage (the policy's "run" point)."""
        ...

    def close(self) -> None:
        """Release the session's write lock and connection. Called once."""
        ...


class AsyncEntrySink(EntrySink, Protocol):
    """An `EntrySink` that writes on an event loop (`AsyncPostgresSessionStore`): its
    ``write`` keeps the entry in memory and starts storing it, in append order, without
    waiting; `unwritten` says what is still being stored."""

    def unwritten(self) -> Awaitable[None] | None:
        """An awaitable done when every entry written so far is stored (it raises what
        storing one raised), or None when nothing is in flight."""
        ...

    async def aclose(self) -> None:
        """Store what is in flight, bring the row up to date, release the lock and the
        connection. Called once, instead of ``close``."""
        ...
