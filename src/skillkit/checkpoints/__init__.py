"""Checkpoints: every change an agent makes to the workspace, recorded per turn and
rewindable (code, conversation or both).

`SnapshotStore` keeps states of the workspace in a git object store of SkillKit's own,
outside the workspace; `Checkpoints` is the contributor that snapshots around each tool
call that may change the workspace, links each turn to its conversation entry, and
rewinds.

```python
checkpoints = Checkpoints(SnapshotStore(workspace, folder))
agent = AgentRunner(config, contributors=[checkpoints])
...
checkpoints.list()                      # the turns
checkpoints.diff(2)                     # what turn 2 changed
checkpoints.restore(2, "code")          # the workspace as it was before turn 2
checkpoints.undo()                      # take the rewind back
```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.checkpoints.store import (
        DEFAULT_MAX_FILE_SIZE,
        FileChange,
        LeftOut,
        Snapshot,
        SnapshotError,
        SnapshotStore,
    )
    from skillkit.checkpoints.turns import (
        ChangedOutsideError,
        Checkpoints,
        RestoreResult,
        RewindTarget,
        Turn,
        store_folder_of,
    )

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "ChangedOutsideError",
    "Checkpoints",
    "FileChange",
    "LeftOut",
    "RestoreResult",
    "RewindTarget",
    "Snapshot",
    "SnapshotError",
    "SnapshotStore",
    "Turn",
    "store_folder_of",
]

_STORE_NAMES = frozenset(
    {"DEFAULT_MAX_FILE_SIZE", "FileChange", "LeftOut", "Snapshot", "SnapshotError", "SnapshotStore"}
)


def __getattr__(name: str) -> Any:
    # Loaded on first use: the command line imports `skillkit.checkpoints.cli` on every
    # start, and the contributor half brings in the agent core.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = "store" if name in _STORE_NAMES else "turns"
    value = getattr(importlib.import_module(f"skillkit.checkpoints.{module}"), name)
    globals()[name] = value
    return value
