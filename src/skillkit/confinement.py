"""`Confinement`: what the kernel lets a process started for one tool call change.

The permission gate decides *whether* a call runs; a `Confinement` carries *how far* the
gate's verdict reaches, from the gate (a ``before_tool_call`` hook) through the loop and
the `ToolContext` to the process runtime, which holds the command to it in the sandbox:

- ``writes="none"``: the call was let run unasked because it was judged read-only; the
  workspace and everything else are read-only, only a private ``/tmp`` is writable;
- ``writes="workspace"``: the user approved the call, or a rule allows it as a write;
  the workspace is writable.

In both, the paths that make code run later (``.git/config``, ``.git/hooks``,
``.skillkit/``, ``.mcp.json``...) stay read-only, except those in ``approved_paths``:
paths the user approved a write to by name.

When several hooks answer with a confinement, the strictest wins (`Confinement.join`).
A call nobody confined (no gate installed: a bare SDK agent) runs with the runtime's
default, a writable workspace with the protected paths read-only.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["READ_ONLY", "Confinement", "WriteScope"]

WriteScope = Literal["none", "workspace"]


class Confinement(msgspec.Struct, frozen=True, kw_only=True):
    """How far a process started for a tool call may write (see the module docs)."""

    writes: WriteScope = "workspace"
    approved_paths: tuple[str, ...] = ()

    @property
    def read_only(self) -> bool:
        """True when nothing but a private ``/tmp`` is writable."""
        return self.writes == "none"

    def join(self, other: Confinement | None) -> Confinement:
        """The stricter of the two: read-only wins, and a protected path stays approved
        only when both approve it."""
        if other is None:
            return self
        writes: WriteScope = "none" if "none" in (self.writes, other.writes) else "workspace"
        approved = tuple(p for p in self.approved_paths if p in other.approved_paths)
        return Confinement(writes=writes, approved_paths=approved)


READ_ONLY = Confinement(writes="none")
"""The confinement of a command that runs unasked because it was judged read-only."""
