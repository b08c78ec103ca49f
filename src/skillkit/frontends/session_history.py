"""The conversation's history as an `AgentSession` offers it: compacting it, forking it
into a new session, and the checkpoints of its turns (list, diff, rewind). Each runs the
command of the session's table of the same name (`AgentSession.call`), so the terminal's
``/fork``, RPC's ``{"type": "fork"}`` and these methods are one implementation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.checkpoints import Checkpoints

__all__ = ["SessionHistory"]

Record = dict[str, object]


class SessionHistory:
    """`AgentSession`'s history methods (a base of it)."""

    runner: AgentRunner

    if TYPE_CHECKING:

        async def call(self, name: str, fields: Mapping[str, object]) -> Record: ...

    async def compact(self, instructions: str | None = None) -> Record:
        """Compact the conversation now (idle only); ``tokens_before`` /
        ``tokens_after``. Runs the table's ``compact`` command."""
        return await self.call("compact", {"instructions": instructions})

    async def fork(self, entry_id: str | None = None) -> Record:
        """Copy this session's conversation up to ``entry_id`` (an entry's id or label;
        default: all of it) into a new session and record there from now on; returns
        its ``session_id``, ``session_file`` and the ``parent_session``. The session
        left stays on disk as it was (open it with ``skillkit --session ID``). Needs
        sessions (not ``--no-session``). Runs the table's ``fork`` command."""
        return await self.call("fork", {"entry_id": entry_id})

    @property
    def checkpoints(self) -> Checkpoints | None:
        """The runner's checkpoints (`skillkit.checkpoints.Checkpoints`: ``list``,
        ``diff``, ``restore``, ``undo``), or None when it keeps none."""
        from skillkit.checkpoints import Checkpoints

        for contributor in reversed(self.runner.contributors):
            if isinstance(contributor, Checkpoints):
                return contributor
        return None

    async def rewind(
        self, turn: int | None = None, target: str = "both", *, force: bool = False
    ) -> Record:
        """Go back to before ``turn``: its ``code``, ``conversation`` or ``both``
        (``turn`` None: the ``turns`` with their files). Idle only. A file changed
        outside SkillKit since the last checkpoint is not overwritten unless ``force``:
        the command fails naming it. Runs the table's ``rewind`` command."""
        return await self.call("rewind", {"turn": turn, "target": target, "force": force})

    async def diff(self, turn: int | None = None) -> Record:
        """What ``turn`` changed (default: the last): its ``files`` with +/- lines and
        the unified ``patch``. Runs the table's ``diff`` command."""
        return await self.call("diff", {"turn": turn})
