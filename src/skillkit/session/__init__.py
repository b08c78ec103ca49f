"""Sessions: a conversation kept as it happens, resumed, branched, forked and exported.

One append-only JSONL file per session (`skillkit.session.format`), a `Session` that
appends to it and records an `AgentRunner` as a contributor, a `SessionStore` that
creates, finds, lists (through a sidecar index), forks and deletes sessions (a
`SqliteSessionStore` keeps many in one database file, `PostgresSessionStore` in a
PostgreSQL database; all satisfy `SessionStoreProtocol`, and `open_store` opens one by
URL: ``sqlite:///path.db``, ``postgresql://host/db``; `AsyncPostgresSessionStore` is
the PostgreSQL store for async apps, its methods coroutines), and
`navigate` / `fork_into_new_session` (`skillkit.session.branching`) to go back to an
earlier entry or go on in a copy.

```python
store = SessionStore()
session = store.continue_latest()           # or store.create(), store.open(id)
agent = AgentRunner(config, messages=session.context(), contributors=[session])
```
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use, so `skillkit sessions --help` stays fast
    from skillkit.session.branching import (
        BranchMove,
        fork_into_new_session,
        navigate,
        tree_lines,
    )
    from skillkit.session.file import SessionLockedError, read_session
    from skillkit.session.format import (
        FORMAT_VERSION,
        BranchEntry,
        ChangedFile,
        CheckpointEntry,
        CompactionEntry,
        CustomEntry,
        Entry,
        FormatError,
        LabelEntry,
        MessageEntry,
        ModeChangeEntry,
        ModelChangeEntry,
        NameEntry,
        SessionHeader,
    )
    from skillkit.session.index import SessionInfo
    from skillkit.session.postgres import PostgresSessionStore, StoreUnavailableError
    from skillkit.session.postgres_async import AsyncPostgresSessionStore
    from skillkit.session.session import BRANCH_SUMMARY_PREFIX, INTERRUPTED, Session
    from skillkit.session.sqlite import SqliteSessionStore
    from skillkit.session.store import SessionNotFoundError, SessionStore, project_folder_name
    from skillkit.session.store_base import SessionExistsError
    from skillkit.session.store_protocol import SessionStoreProtocol, StoreURLError, open_store

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "FORMAT_VERSION",
    "INTERRUPTED",
    "AsyncPostgresSessionStore",
    "BranchEntry",
    "BranchMove",
    "ChangedFile",
    "CheckpointEntry",
    "CompactionEntry",
    "CustomEntry",
    "Entry",
    "FormatError",
    "LabelEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "NameEntry",
    "PostgresSessionStore",
    "Session",
    "SessionExistsError",
    "SessionHeader",
    "SessionInfo",
    "SessionLockedError",
    "SessionNotFoundError",
    "SessionStore",
    "SessionStoreProtocol",
    "SqliteSessionStore",
    "StoreURLError",
    "StoreUnavailableError",
    "fork_into_new_session",
    "navigate",
    "open_store",
    "project_folder_name",
    "read_session",
    "tree_lines",
]

_HOMES = {
    "BranchMove": "branching",
    "fork_into_new_session": "branching",
    "navigate": "branching",
    "tree_lines": "branching",
    "SessionLockedError": "file",
    "read_session": "file",
    "SessionInfo": "index",
    "BRANCH_SUMMARY_PREFIX": "session",
    "INTERRUPTED": "session",
    "Session": "session",
    "SessionNotFoundError": "store",
    "SessionStore": "store",
    "project_folder_name": "store",
    "SqliteSessionStore": "sqlite",
    "PostgresSessionStore": "postgres",
    "AsyncPostgresSessionStore": "postgres_async",
    "StoreUnavailableError": "postgres",
    "SessionExistsError": "store_base",
    "SessionStoreProtocol": "store_protocol",
    "StoreURLError": "store_protocol",
    "open_store": "store_protocol",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'skillkit.session' has no attribute {name!r}")
    value = getattr(import_module(f"skillkit.session.{_HOMES.get(name, 'format')}"), name)
    globals()[name] = value
    return value
