"""The slash commands about the saved session: ``/tree``, ``/fork``, ``/name``, ``/label``.

They act on the session that records the command's runner (a `skillkit.session.Session`
among its contributors); without one (``--no-session``, or an SDK runner not recorded)
they fail with a one-line message. Moving and forking are refused while a run is in
progress.

=======================  ==============================================================
``/tree``                the session's entry tree, one entry a line, with ids
``/tree ID|LABEL``       go back to that entry and go on from there; the branch left
                         behind is summarised by the model into the new branch
``/fork [ID|LABEL]``     copy the current branch (up to that entry) into a new session
                         and go on there
``/name [TEXT]``         name the session (its title in listings), or show the name
``/label [TEXT]``        label the current entry, or list the labels
=======================  ==============================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.commands.dispatch import (
    Argument,
    Command,
    CommandContext,
    CommandError,
    CommandResult,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skillkit.agent.runner import AgentRunner
    from skillkit.session import Session
    from skillkit.session.format import Entry

__all__ = [
    "fork_command",
    "label_command",
    "name_command",
    "recorded_session",
    "session_commands",
    "tree_command",
]

NO_SESSION = "this conversation is not being saved (started with --no-session?)"


def recorded_session(runner: AgentRunner) -> Session | None:
    """The session recording ``runner`` (the newest, after a ``/fork``), or None."""
    from skillkit.session import Session

    for contributor in reversed(runner.contributors):
        if isinstance(contributor, Session) and contributor.recording and contributor.writable:
            return contributor
    return None


def _session(ctx: CommandContext) -> Session:
    session = recorded_session(ctx.require_runner())
    if session is None:
        raise CommandError(NO_SESSION)
    return session


def _idle(ctx: CommandContext) -> tuple[AgentRunner, Session]:
    return ctx.require_idle_runner(), _session(ctx)


def _current_entry(session: Session) -> Entry | None:
    """The newest entry of the current branch that is not a label or a name."""
    from skillkit.session import CheckpointEntry, LabelEntry, NameEntry

    for entry in reversed(session.branch()):
        if not isinstance(entry, LabelEntry | NameEntry | CheckpointEntry):
            return entry
    return None


async def tree_command(ctx: CommandContext, args: str) -> str:
    """``/tree``: the tree; ``/tree ID|LABEL``: go back to that entry (see
    `skillkit.session.branching.navigate`)."""
    from skillkit.commands.active_agent import follow_moved_branch
    from skillkit.session.branching import describe_entry, navigate, tree_lines

    target = args.strip()
    if not target:
        session = _session(ctx)
        lines = tree_lines(session)
        if not lines:
            return "the session has no entries yet"
        return "\n".join(
            [
                f"session {session.id} (● where you are, • the current branch)",
                *lines,
                "/tree ID goes back to an entry (an id, a prefix of one, or a label)",
            ]
        )
    runner, session = _idle(ctx)
    adapter = runner.adapter
    model = str(getattr(adapter, "model", "") or runner.config.model or "")
    try:
        move = await navigate(
            session, target, adapter=adapter, model=model, options=runner.config.options
        )
    except (KeyError, ValueError, RuntimeError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    at = move.entry.parent_id
    where = session.by_id.get(at) if at is not None else None
    lines = [
        f"went back to {at}: {describe_entry(where)}"
        if where is not None
        else "went back to the start of the session",
    ]
    if move.summarized_by == "model":
        lines.append(
            f"the {move.abandoned} messages left behind are summarised for the model "
            f"(entry {move.entry.id})"
        )
    elif move.summarized_by == "outline":
        lines.append(f"the model did not summarise what was left behind: {move.problem}")
        lines.append(
            f"an outline of the {move.abandoned} messages was kept instead (entry {move.entry.id})"
        )
    notice, _fields = follow_moved_branch(runner, session)  # who answers follows the branch
    lines.extend([notice] if notice else [])
    return "\n".join(lines)


def fork_command(ctx: CommandContext, args: Mapping[str, object] | str) -> CommandResult:
    """``fork [ENTRY_ID]``: a new session holding the current branch (up to the entry
    named by id or label), recorded from now on; the session left stays on disk as it
    was. The answer's data: the new ``session_id`` and ``session_file`` and the
    ``parent_session``. ``args`` are the checked values, or the text typed after the
    name."""
    from skillkit.commands.active_agent import follow_moved_branch
    from skillkit.session.branching import fork_into_new_session

    text = args if isinstance(args, str) else args.get("entry_id")
    target = text.strip() if isinstance(text, str) else ""
    session = recorded_session(ctx.require_runner())
    if session is None:
        raise CommandError(NO_SESSION)
    ctx.require_idle_runner()
    try:
        entry_id = session.resolve_entry(target) if target else None
        fork = fork_into_new_session(session, entry_id)
    except (KeyError, RuntimeError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    except OSError as exc:
        raise CommandError(f"the fork could not be saved: {exc}") from None
    lines = [f"forked session {session.id} into {fork.id}; you are now in {fork.id}"]
    notice, fields = follow_moved_branch(ctx.require_runner(), fork)  # where it ends
    lines.extend([notice] if notice else [])
    return CommandResult(
        output="\n".join(lines),
        data={
            "session_id": fork.id,
            "session_file": str(fork.path),
            "parent_session": session.id,
            **fields,
        },
    )


def name_command(ctx: CommandContext, args: str) -> str:
    """``/name TEXT`` names the session; ``/name`` shows its name."""
    session = _session(ctx)
    name = " ".join(args.split())
    if not name:
        current = session.session_name
        return (
            f"session {session.id} is named {current!r}"
            if current
            else (f"session {session.id} has no name; /name TEXT gives it one")
        )
    session.set_name(name)
    return f"session {session.id} is now named {name!r}"


def label_command(ctx: CommandContext, args: str) -> str:
    """``/label TEXT`` labels the current entry; ``/label`` lists the labels."""
    from skillkit.session.branching import describe_entry

    session = _session(ctx)
    text = " ".join(args.split())
    if not text:
        labels = session.labels()
        if not labels:
            return "no labels yet; /label TEXT labels where you are"
        lines = []
        for entry_id, label in labels.items():
            entry = session.by_id.get(entry_id)
            about = describe_entry(entry) if entry is not None else "(not in this session)"
            lines.append(f"{label}  {entry_id}  {about}")
        return "\n".join(lines)
    entry = _current_entry(session)
    if entry is None:
        raise CommandError("nothing to label yet: the session is empty")
    session.label(entry.id, text)
    return f"labelled {entry.id} {text!r} (/tree {text} comes back here)"


def session_commands() -> list[Command]:
    """New `Command` values for the session commands."""
    return [
        Command(
            "tree",
            "show the session's tree, or go back to an entry and go on from there",
            tree_command,
            usage="[ID|LABEL]",
        ),
        Command(
            "fork",
            "copy the conversation into a new session and go on there",
            fork_command,
            usage="[ID|LABEL]",
            arguments=(Argument("entry_id", help="the entry (id or label) the copy ends at"),),
        ),
        Command("name", "name the session, or show its name", name_command, usage="[TEXT]"),
        Command(
            "label",
            "label where you are in the session, or list the labels",
            label_command,
            usage="[TEXT]",
        ),
    ]
