"""Child agents' transcripts kept in the parent's session, each as a branch of its own.

`keep_child_transcripts(session)` returns the keeper `skillkit.subagents.Subagents`
calls when a child ends. It writes, hanging off the entry the parent's branch has
reached:

- a custom entry ``subagent_start`` (the child's ``agent_id``, agent name, description
  and prompt), then the child's messages after it, one entry each — the child's
  branch, which `Session.branch` can follow from its last entry;
- a custom entry ``subagent`` (not part of the context) on the parent's own branch,
  again after that same entry, naming the child and its branch's last entry.

So the parent's branch — what it resumes with — goes on from the ``subagent`` entry and
never contains the child's messages, while the child's whole run stays in the file.
Only `Session`'s public appending methods are used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from skillkit.session.format import CustomEntry

if TYPE_CHECKING:
    from skillkit.session.session import Session
    from skillkit.subagents import ChildTranscript

__all__ = ["CHILD_START_KIND", "CHILD_SUMMARY_KIND", "keep_child_transcripts"]

CHILD_START_KIND = "subagent_start"
"""The custom entry that opens a child's branch."""

CHILD_SUMMARY_KIND = "subagent"
"""The custom entry on the parent's branch that points at a child's branch."""


def keep_child_transcripts(session: Session) -> Callable[[ChildTranscript], None]:
    """The keeper writing each finished child's transcript into ``session`` (see the
    module docs). It raises what `Session.append` raises (a session not open for
    writing); the caller reports that without failing the run."""

    def keep(transcript: ChildTranscript) -> None:
        anchor = session.leaf_id
        summary = {
            "agent_id": transcript.agent_id,
            "agent": transcript.name,
            "description": transcript.description,
            "status": transcript.status,
        }
        if anchor is None:  # nothing to hang a branch from: the summary alone
            session.append(CustomEntry, kind=CHILD_SUMMARY_KIND, data=summary, in_context=False)
            return
        start = session.append(
            CustomEntry,
            kind=CHILD_START_KIND,
            data={
                "agent_id": transcript.agent_id,
                "agent": transcript.name,
                "description": transcript.description,
                "prompt": transcript.prompt,
            },
            in_context=False,
            parent_id=anchor,
        )
        last = start.id
        for message in transcript.messages:
            last = session.append_message(message, parent_id=last).id
        session.append(
            CustomEntry,
            kind=CHILD_SUMMARY_KIND,
            data={**summary, "branch_start": start.id, "branch_leaf": last},
            in_context=False,
            parent_id=anchor,
        )

    return keep
