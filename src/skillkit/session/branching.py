"""Moving around a session's tree: going back to an earlier entry with what the abandoned
branch learned, forking into a new session, and the tree drawn as text.

`navigate` moves a session's leaf to an earlier entry (``/tree ID``). The entries left
behind — those of the current branch after the point where it meets the target's — are
summarised by the model with the compaction summariser (`skillkit.context.Summarizer`),
and the summary is written as the `BranchEntry` that starts the new branch, so the model
keeps what was learned. Without a model, or when its call fails or is interrupted, a
plain outline made from the messages themselves (`outline`) is kept instead, and the
result says so.

`fork_into_new_session` copies the current branch into a new session of the same store
and, when a runner records the session, moves the recording there (``/fork``).

`tree_lines` draws the tree compactly, one entry a line (``/tree``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.context.markers import BOUNDARY_KIND
from skillkit.context.summary import Summarizer, SummaryError, track_files
from skillkit.context.transcript import typed_text
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    TokenUsage,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from skillkit.session.format import (
    BranchEntry,
    CheckpointEntry,
    CompactionEntry,
    CustomEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    NameEntry,
    paused_gc,
)
from skillkit.session.session import Session, replace_transcript

__all__ = [
    "BRANCH_INSTRUCTIONS",
    "OUTLINE_NOTE",
    "BranchMove",
    "abandoned_messages",
    "describe_entry",
    "fork_into_new_session",
    "navigate",
    "outline",
    "tree_lines",
]

BRANCH_INSTRUCTIONS = (
    "The user is leaving this part of the conversation to go back to an earlier point. "
    "Keep what it learned that stays useful on the new path: facts found, what was tried "
    "and whether it worked, errors met, files read or changed and their state now."
)
"""The focus given to the summariser for an abandoned branch."""

OUTLINE_NOTE = "(An outline of the abandoned messages, made without the model.)"
"""The first line of a summary made by `outline`, so the model knows what it reads."""

SUMMARY_MAX_TOKENS = 1024
"""The output limit of a branch summary call."""

_TEXT = 200  # characters kept of one message in an outline
_CALLS = 12  # tool calls listed in an outline


@dataclass
class BranchMove:
    """What `navigate` did. ``entry`` is the `BranchEntry` written (the new leaf);
    ``summary`` its summary (None when nothing was abandoned); ``summarized_by`` says
    who wrote it (``model``, ``outline`` or None); ``problem`` why the model did not
    (a one-line reason, None when it did or was not asked); ``usage`` the tokens the
    summary call used; ``abandoned`` how many messages were left behind."""

    entry: Entry
    summary: str | None = None
    summarized_by: Literal["model", "outline"] | None = None
    problem: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    abandoned: int = 0


def abandoned_messages(session: Session, target_id: str | None) -> list[AgentMessage]:
    """The context messages of the current branch that moving to ``target_id`` leaves
    behind: those after the last entry the current branch shares with the target's."""
    kept = {entry.id for entry in session.branch(target_id)} if target_id is not None else set()
    return [
        message
        for entry_id, _, message in session.context_items()
        if entry_id not in kept
        and not (isinstance(message, CustomMessage) and message.kind == BOUNDARY_KIND)
    ]


def outline(messages: Sequence[AgentMessage], reason: str | None = None) -> str:
    """A summary of ``messages`` made without a model: the user's requests, the tool
    calls made (one line each, errors marked), the files touched and the last answer.
    ``reason`` (why the model did not write it) is added to the first line."""
    lines = [OUTLINE_NOTE if not reason else f"{OUTLINE_NOTE[:-2]}: {reason}.)"]
    requests = [
        _clip(message_text(m)) for m in messages if isinstance(m, UserMessage) and message_text(m)
    ]
    if requests:
        lines.append("The user asked:")
        lines.extend(f"- {text}" for text in requests)
    failed = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage) and m.is_error}
    calls = [call for m in messages if isinstance(m, AssistantMessage) for call in m.tool_calls]
    if calls:
        lines.append("Tools used:")
        for call in calls[-_CALLS:]:
            mark = " (failed)" if call.id in failed else ""
            lines.append(f"- {_call_line(call.name, call.arguments)}{mark}")
        if len(calls) > _CALLS:
            lines.append(f"- and {len(calls) - _CALLS} earlier calls")
    read, modified = track_files(messages)
    if modified:
        lines.append("Files changed: " + ", ".join(modified[-20:]))
    if read:
        lines.append("Files read: " + ", ".join(read[-20:]))
    answers = [
        _clip(m.text, 400) for m in messages if isinstance(m, AssistantMessage) and m.text.strip()
    ]
    if answers:
        lines.append(f"The last answer was: {answers[-1]}")
    return "\n".join(lines)


def _clip(text: str, limit: int = _TEXT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _call_line(name: str, arguments: Mapping[str, Any]) -> str:
    shown = ", ".join(f"{key}={_clip(str(value), 60)}" for key, value in arguments.items())
    return _clip(f"{name}({shown})", 160)


async def navigate(
    session: Session,
    target: str | None,
    *,
    adapter: LLMAdapter | None = None,
    model: str = "",
    options: Mapping[str, Any] | None = None,
    abort: AbortSignal | None = None,
    summarize: bool = True,
) -> BranchMove:
    """Move ``session``'s leaf to ``target`` (an entry id, unique id prefix or label;
    None: back to the start) and go on from there, keeping what the abandoned part
    learned in the new branch's `BranchEntry`.

    With ``adapter`` (and ``model``, the name sent to it) the summary is the model's,
    made by the compaction summariser; without one, or when its call fails, returns no
    text or is interrupted (``abort``, or the calling task cancelled once), it is an
    `outline` and `BranchMove.problem` says why. ``summarize=False`` writes no summary.
    Raises `KeyError` for an unknown target, `ValueError` when the target is the
    current leaf, `RuntimeError` while a recorded runner is running. A runner recording
    the session gets the new branch's context as its transcript."""
    target_id = session.resolve_entry(target) if target is not None else None
    if target_id is not None and target_id == session.leaf_id:
        raise ValueError(f"entry {target_id} is already where the conversation is")
    runner = session.runner
    if runner is not None and getattr(runner, "is_running", False):
        raise RuntimeError("the branch cannot move while a run is in progress")
    left = abandoned_messages(session, target_id) if summarize else []
    move_summary: str | None = None
    by: Literal["model", "outline"] | None = None
    problem: str | None = None
    usage = TokenUsage()
    if left:
        if adapter is None:
            problem = "no model to summarise with"
        else:
            summarizer = Summarizer(
                adapter, model, options=options, abort=abort, max_tokens=SUMMARY_MAX_TOKENS
            )
            try:
                move_summary = await summarizer.summarize("", left, BRANCH_INSTRUCTIONS)
                by = "model"
            except SummaryError as exc:
                problem = str(exc)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is None or task.uncancel() > 0:  # more than one cancellation: leave
                    raise
                problem = "the summary was interrupted"
            usage = summarizer.usage
        if move_summary is None:
            move_summary, by = outline(left, problem), "outline"
    entry = session.move_to(target_id, summary=move_summary)
    return BranchMove(
        entry=entry,
        summary=entry.summary if isinstance(entry, BranchEntry) else move_summary,
        summarized_by=by,
        problem=problem,
        usage=usage,
        abandoned=len(left),
    )


def fork_into_new_session(session: Session, entry_id: str | None = None) -> Session:
    """A new session (in ``session``'s store) holding its branch up to ``entry_id``
    (default: the leaf). When a runner records ``session``, the recording moves to the
    new session (between runs; `RuntimeError` during one) and ``session`` is closed;
    otherwise ``session`` is left as it was. Raises `RuntimeError` for a session made
    without a store."""
    store = session.store
    if store is None:
        raise RuntimeError(f"session {session.id} was not made by a SessionStore")
    runner = session.runner
    if runner is not None and getattr(runner, "is_running", False):
        raise RuntimeError("cannot fork while a run is in progress")
    if runner is not None:
        session.detach()  # writes what the runner still holds, then stops recording
    try:
        fork = store.fork(session, entry_id)
    except BaseException:
        if runner is not None:
            session.attach(runner)
        raise
    if runner is None:
        return fork
    try:
        replace_transcript(runner, fork.context())
        if isinstance(runner, AgentRunner):
            runner.add_contributor(fork)
        else:
            fork.attach(runner)
    except BaseException:  # the original goes on recording, as if nothing happened
        fork.detach()
        fork.close()
        replace_transcript(runner, session.context())
        session.attach(runner)
        raise
    session.close()
    return fork


# --------------------------------------------------------------------------- the tree


def describe_entry(entry: Entry, width: int = 60) -> str:
    """A short description of one entry: its kind and its first words."""
    match entry:
        case MessageEntry(message=message):
            return _describe_message(message, width)
        case ModelChangeEntry(model=model):
            return f"model → {model}"
        case ModeChangeEntry(mode=mode):
            return f"mode → {mode}"
        case CompactionEntry(tokens_before=before, tokens_after=after):
            return f"compacted {before} → {after} tokens"
        case CustomEntry(kind=kind, in_context=in_context):
            return f"{kind} (plugin data{', in context' if in_context else ''})"
        case LabelEntry(target_id=target, label=label):
            return f"label {target}: {label}" if label else f"label {target} removed"
        case NameEntry(name=name):
            return f"named {_clip(name, width)}"
        case BranchEntry(summary=summary):
            return "branch: " + (_clip(summary, width) if summary else "(no summary)")
        case CheckpointEntry(turn=turn, kind=kind, files=files):
            what = "rewind" if kind == "rewind" else "turn"
            return f"checkpoint: {what} {turn}, {len(files)} file(s) changed"
    return type(entry).__name__


def _describe_message(message: AgentMessage, width: int) -> str:
    if isinstance(message, UserMessage):
        text = message_text(message)
        return f"user: {_clip(typed_text(text) or text, width)}"
    if isinstance(message, AssistantMessage):
        text = _clip(message.text, width) if message.text.strip() else ""
        calls = ", ".join(call.name for call in message.tool_calls)
        if calls:
            text = f"{text} → {calls}" if text else f"→ {calls}"
        return f"assistant: {text or '(no text)'}"
    if isinstance(message, ToolResultMessage):
        mark = " (error)" if message.is_error else ""
        return f"result {message.tool_name}{mark}: {_clip(message.text, width // 2)}"
    return f"{message.kind}"


def tree_lines(session: Session, *, limit: int = 200, width: int = 60) -> list[str]:
    """The session's entry tree, one line per entry (labels and names are shown on the
    entries, not as lines): ``id  description``, indented at each fork in the tree, with
    ``●`` on the current entry (the leaf, or the last entry drawn before it), ``•`` on
    the rest of the current branch and labels in brackets. At most ``limit`` lines: the
    newest are kept, with a first line saying how many were left out."""
    with paused_gc():  # many small objects, no cycles: collections would cost most
        return _tree_lines(session, limit, width)


def _tree_lines(session: Session, limit: int, width: int) -> list[str]:
    branch = session.branch()
    on_branch = {entry.id for entry in branch}
    shown: list[Entry] = [e for e in session.entries if not isinstance(e, LabelEntry | NameEntry)]
    ids = {e.id for e in shown}
    children: dict[str | None, list[Entry]] = {}
    for entry in shown:
        parent = entry.parent_id
        if parent is not None and parent not in ids:
            parent = _shown_parent(session, entry, ids)
        children.setdefault(parent, []).append(entry)
    here = next((e.id for e in reversed(branch) if e.id in ids), None)
    # depth-first, iterative (a long session is one deep chain); a lone child stays at
    # its parent's indentation, siblings go one step in
    order: list[tuple[Entry, int]] = []
    roots = children.get(None, [])
    stack = [(root, 0 if len(roots) == 1 else 1) for root in reversed(roots)]
    while stack:
        entry, depth = stack.pop()
        while True:  # down a chain without the stack; push only where it forks
            order.append((entry, depth))
            kids = children.get(entry.id)
            if not kids:
                break
            if len(kids) == 1:
                entry = kids[0]
                continue
            stack.extend((kid, depth + 1) for kid in reversed(kids))
            break
    cut = max(0, len(order) - limit)
    labels = session.labels()
    lines = [f"… {cut} earlier entries not shown"] if cut else []
    for entry, depth in order[cut:]:  # only the lines kept are described
        mark = "●" if entry.id == here else "•" if entry.id in on_branch else " "
        label = f"  [{labels[entry.id]}]" if entry.id in labels else ""
        lines.append(f"{mark} {entry.id}  {'  ' * depth}{describe_entry(entry, width)}{label}")
    return lines


def _shown_parent(session: Session, entry: Entry, shown: set[str]) -> str | None:
    """The nearest ancestor of ``entry`` that is drawn (labels and names are not)."""
    parent = entry.parent_id
    for _ in range(len(session.by_id)):
        if parent is None or parent in shown:
            return parent
        above = session.by_id.get(parent)
        parent = above.parent_id if above is not None else None
    return None
