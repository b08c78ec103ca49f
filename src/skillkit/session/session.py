"""`Session`: one session file, its entry tree, and appending to it.

A `Session` read with ``write=False`` is a snapshot. Opened for writing (the store does
this), it holds the session's `WriteLock` and appends each entry as one ``write`` to the
file, so the file is the log: a crash loses at most the entry being written. A session
kept by a database store writes each entry through that store's `EntrySink` instead (one
transaction per entry); everything else here is the same for every store.

Durability (``fsync``): every entry reaches the operating system when its append returns
(it survives the process being killed). ``fsync="run"`` (the default) also forces the
file to disk when a run ends and when the session closes, ``"entry"`` after every entry
(slow: milliseconds each), ``"never"`` leaves it to the operating system.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from skillkit.agent import Contributor
from skillkit.agent.contributors import AgentHandle
from skillkit.context.markers import PINNED_KIND
from skillkit.models import AgentMessage, CustomMessage, UserMessage
from skillkit.secrets import Redactor
from skillkit.session.file import WriteLock, parse_session
from skillkit.session.format import (
    BranchEntry,
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
    decode_entry,
    encode_line,
    new_id,
    paused_gc,
)
from skillkit.session.sinks import AsyncEntrySink, EntrySink
from skillkit.tool_pairing import error_results, unanswered_calls

if TYPE_CHECKING:
    from skillkit.session.recorder import SessionRecorder

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "INTERRUPTED",
    "AsyncEntrySink",
    "EntrySink",
    "FsyncPolicy",
    "Session",
    "SessionOwner",
    "replace_transcript",
]

log = logging.getLogger("skillkit.session")

FsyncPolicy = Literal["run", "entry", "never"]

BRANCH_SUMMARY_PREFIX = (
    "The conversation went back to an earlier point. What the abandoned attempt learned:"
)
"""How a `BranchEntry`'s summary is introduced to the model: it enters the context as a
pinned message (sent as user text, kept by every compaction)."""

INTERRUPTED = "Error: the session ended before this tool call finished."
"""The result given, on resume, to a tool call whose result was never written."""

SYNC_DELAY = 0.2
"""At most this many seconds pass between the end of a run and its `Session.sync`."""

ContextItem = tuple[str, int, AgentMessage]
"""A message of the context with the entry it came from and its offset in that entry."""


class SessionOwner(Protocol):
    """What a session needs of the store that made it (`SessionStore` is one)."""

    def fork(self, ref: Session, entry_id: str | None = None) -> Session: ...


def replace_transcript(agent: object, messages: list[AgentMessage]) -> None:
    """Make ``messages`` the transcript of the runner ``agent`` (between its runs), as
    if it had been built with ``AgentRunner(messages=messages)``. Raises
    `RuntimeError` when the runner offers no way to do so."""
    replace = getattr(agent, "replace_messages", None)
    if not callable(replace):
        raise RuntimeError(f"{type(agent).__name__} cannot be given another transcript")
    replace(messages)


class Session(Contributor):
    """One session: its header, its entries in file order, and the current leaf.

    As a contributor (``AgentRunner(messages=session.context(), contributors=[session])``)
    it records the runner's transcript as it changes: the user message when a run starts,
    each assistant message and tool result, compactions, model and mode changes. One
    runner per session. The runner never knows it is recorded.
    """

    name = "session"

    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        entries: Sequence[Entry] = (),
        *,
        warnings: Sequence[str] = (),
        size: int = 0,
        lock: WriteLock | None = None,
        redactor: Redactor | None = None,
        fsync: FsyncPolicy = "run",
        on_change: Callable[[Session], None] | None = None,
        sink: EntrySink | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.warnings = list(warnings)
        self.size = size
        self.redactor = redactor
        self.fsync = fsync
        self.on_append: Callable[[Entry], None] | None = None
        """Called after each entry is written (tests and user interfaces)."""
        self.store: SessionOwner | None = None
        """The store that made this session (it forks it); None for one made directly."""
        self._on_change = on_change
        self._lock = lock
        self._fd: int | None = None
        self._sink = sink
        self._leaf: str | None = None
        self._recorder: SessionRecorder | None = None
        self._pending_context: list[CustomMessage] = []
        self._made: dict[str, CustomMessage | None] = {}
        self._syncer: ThreadPoolExecutor | None = None
        self._sync_guard = threading.Lock()
        self._sync_pending = False
        self._closing = threading.Event()
        for entry in entries:
            if entry.id in self.by_id:
                self.warnings.append(f"entry {entry.id!r} appears twice; the later is skipped")
                continue
            self.entries.append(entry)
            self.by_id[entry.id] = entry
            self._leaf = entry.id
        if lock is not None:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        for warning in self.warnings:
            log.warning("%s", warning)

    # ----- identity

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def cwd(self) -> str:
        return self.header.cwd

    @property
    def writable(self) -> bool:
        return self._fd is not None or self._sink is not None

    @property
    def leaf_id(self) -> str | None:
        """The last entry of the current branch (None for an empty session)."""
        return self._leaf

    @property
    def session_name(self) -> str | None:
        """The name last given with `set_name` (on any branch: a name belongs to the
        session, as in its index row), if any."""
        for entry in reversed(self.entries):
            if isinstance(entry, NameEntry):
                return entry.name
        return None

    def labels(self) -> dict[str, str]:
        """Entry id -> label, as labelled so far (the last label of an entry wins)."""
        out: dict[str, str] = {}
        for entry in self.entries:
            if isinstance(entry, LabelEntry):
                if entry.label is None:
                    out.pop(entry.target_id, None)
                else:
                    out[entry.target_id] = entry.label
        return out

    # ----- the tree

    def branch(self, leaf: str | None = None) -> list[Entry]:
        """The entries from the root to ``leaf`` (default: the current leaf), in order."""
        path: list[Entry] = []
        by_id = self.by_id
        current = by_id.get(leaf or self._leaf or "")
        for _ in range(len(by_id)):  # a damaged file may hold a cycle: stop after all
            if current is None:
                break
            path.append(current)
            parent = current.parent_id
            current = by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    def children(self, entry_id: str | None) -> list[Entry]:
        """The entries whose parent is ``entry_id`` (None: the roots), in file order."""
        return [e for e in self.entries if e.parent_id == entry_id]

    def context_items(self, leaf: str | None = None) -> list[ContextItem]:
        """The context of a branch as (entry id, offset in the entry, message)."""
        items: list[ContextItem] = []
        append = items.append
        with paused_gc():
            for entry in self.branch(leaf):
                if type(entry) is MessageEntry:
                    append((entry.id, 0, entry.message))
                    continue
                match entry:
                    case CustomEntry(in_context=True) | BranchEntry(summary=str()):
                        made = self._made.get(entry.id)
                        if made is None:  # made once: a runner matches messages by identity
                            made = self._made[entry.id] = _context_message(entry)
                        if made is not None:
                            append((entry.id, 0, made))
                    case CompactionEntry(head=head, first_kept_id=kept, first_kept_offset=at):
                        start = len(items)
                        if kept is not None:  # usually recent: search from the end
                            for index in range(len(items) - 1, -1, -1):
                                item = items[index]
                                if item[0] == kept and item[1] == at:
                                    start = index
                                    break
                        items = [(entry.id, i, m) for i, m in enumerate(head)] + items[start:]
                        append = items.append
                    case _:
                        pass
        return items

    def context(
        self, leaf: str | None = None, *, close_open_calls: bool = True
    ) -> list[AgentMessage]:
        """The messages of a branch, as a runner should be given them to go on.

        Tool calls whose results were never written (the process ended mid-call) get an
        error result saying so (`INTERRUPTED`), so the context is valid for re-sending;
        ``close_open_calls=False`` returns the messages exactly as recorded."""
        messages = [message for _, _, message in self.context_items(leaf)]
        if close_open_calls:
            messages.extend(error_results(unanswered_calls(messages), INTERRUPTED))
        return messages

    def first_user_text(self) -> str:
        """The text of the first user message of the session ('' if none)."""
        for entry in self.entries:
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                return _user_text(entry.message)
        return ""

    # ----- appending

    def append_message(self, message: AgentMessage, *, parent_id: str | None = None) -> Entry:
        """Append a message after the leaf (or after ``parent_id``); returns its entry."""
        return self.append(MessageEntry, message=message, parent_id=parent_id)

    def append_model_change(self, model: str, provider: str = "") -> Entry:
        return self.append(ModelChangeEntry, model=model, provider=provider)

    def append_mode_change(self, mode: str, previous: str | None = None) -> Entry:
        return self.append(ModeChangeEntry, mode=mode, previous=previous)

    def append_compaction(
        self,
        *,
        summary: str,
        head: list[AgentMessage],
        first_kept_id: str | None,
        first_kept_offset: int = 0,
        tokens_before: int = 0,
        tokens_after: int = 0,
    ) -> Entry:
        return self.append(
            CompactionEntry,
            summary=summary,
            head=head,
            first_kept_id=first_kept_id,
            first_kept_offset=first_kept_offset,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )

    def append_custom(
        self, kind: str, data: Any = None, *, in_context: bool = False
    ) -> Entry | None:
        """Keep plugin data in the session; returns the entry written.

        With ``in_context=True`` it is part of the context on resume. While a runner
        records this session, such an entry is handed to the runner at its next iteration
        boundary (as a `CustomMessage`) and written when it enters the transcript, where
        it enters it; None is returned then."""
        if in_context and self._recorder is not None:
            self._pending_context.append(CustomMessage(kind=kind, payload=data))
            return None
        return self.append(CustomEntry, kind=kind, data=data, in_context=in_context)

    def append_custom_entry(self, kind: str, data: Any) -> Entry:
        """Write an in-context custom entry now (the recorder's part of
        `append_custom`)."""
        return self.append(CustomEntry, kind=kind, data=data, in_context=True)

    def label(self, target_id: str, label: str | None) -> Entry:
        """Label entry ``target_id`` (None removes its label)."""
        if target_id not in self.by_id:
            raise KeyError(f"no entry {target_id!r} in session {self.id}")
        return self.append(LabelEntry, target_id=target_id, label=label)

    def set_name(self, name: str) -> Entry:
        return self.append(NameEntry, name=name)

    def move_to(self, entry_id: str | None, *, summary: str | None = None) -> Entry:
        """Go on from ``entry_id`` (an earlier entry; None: from the start): the next
        entries follow it, and the current branch becomes the path to it. ``summary``
        carries what the abandoned branch learned into the new one (a `BranchEntry`
        holding it is the new leaf). While a runner records this session (between its
        runs; `RuntimeError` during one) its transcript becomes the new branch's
        context. `skillkit.session.branching.navigate` also writes the summary."""
        if entry_id is not None and entry_id not in self.by_id:
            raise KeyError(f"no entry {entry_id!r} in session {self.id}")
        recorder = self._recorder
        if recorder is not None and getattr(recorder.agent, "is_running", False):
            raise RuntimeError("the branch cannot move while a run is in progress")
        if recorder is not None:
            recorder.flush()  # nothing the runner holds may be left unwritten
        entry = self.append(BranchEntry, from_id=self._leaf, summary=summary, parent_id=entry_id)
        if recorder is not None:
            recorder.rebase()
            replace_transcript(recorder.agent, self.context())
        return entry

    def resolve_entry(self, ref: str) -> str:
        """The id of the entry ``ref`` names: an entry id, a unique prefix of one, or a
        label (the newest entry carrying it). `KeyError` with a one-line message when
        none or several match."""
        text = ref.strip()
        if text in self.by_id:
            return text
        labelled = [entry_id for entry_id, label in self.labels().items() if label == text]
        if labelled:
            return labelled[-1]
        matches = [entry_id for entry_id in self.by_id if entry_id.startswith(text)] if text else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise KeyError(f"no entry or label {text!r} in session {self.id}")
        raise KeyError(f"{text!r} matches several entries: {', '.join(matches[:5])}")

    async def catch_up(self) -> None:
        """Write now what the recorded runner's transcript gained since the last entry —
        between runs, a message a face added to it (the note of the user's own
        ``!command``) — and bring the index up to date soon. Does nothing when no
        runner is recorded. A failure to write stops recording and is reported as an
        ``error`` event (stage ``session``), as during a run."""
        if self._recorder is not None:
            pending = self._recorder.catch_up()
            if pending is not None:  # an async store's session: wait until it is stored
                await pending
            self.sync_soon()

    @property
    def recording(self) -> bool:
        """Whether a runner is being recorded into this session."""
        return self._recorder is not None

    @property
    def runner(self) -> AgentHandle | None:
        """The runner this session records (None when it records none)."""
        return self._recorder.agent if self._recorder is not None else None

    def detach(self) -> None:
        """Stop recording the runner (between its runs): everything it holds is
        written first. The session stays open for writing; the runner keeps its
        transcript. Does nothing when no runner is recorded."""
        recorder, self._recorder = self._recorder, None
        if recorder is not None:
            recorder.flush()
            recorder.detach()

    _ROOT = object()

    def append(self, entry_type: type[Entry], *, parent_id: Any = _ROOT, **fields: Any) -> Entry:
        """Append one entry of class ``entry_type`` (its id, parent and time are filled in);
        returns it as written (secrets redacted). Raises `RuntimeError` when the session
        is not open for writing."""
        fd, sink = self._fd, self._sink
        if fd is None and sink is None:
            raise RuntimeError(f"session {self.id} is not open for writing")
        if parent_id is Session._ROOT or (parent_id is None and entry_type is not BranchEntry):
            parent_id = self._leaf
        entry: Entry = entry_type(
            id=new_id(self.by_id.__contains__), parent_id=parent_id, time=time.time(), **fields
        )
        line = encode_line(entry)
        redactor = self.redactor
        if redactor:
            text = line.decode()
            clean = redactor.redact(text)
            if clean != text:
                try:
                    entry = decode_entry(clean.encode())
                    line = clean.encode()
                except FormatError:  # a secret spanned JSON syntax: redact the values
                    value = redactor.redact_json(msgspec.to_builtins(entry))
                    entry = msgspec.convert(value, type(entry))
                    line = encode_line(entry)
        if fd is not None:
            written = os.write(fd, line)
            while written < len(line):  # a short write (rare): finish the line
                written += os.write(fd, line[written:])
            if self.fsync == "entry":
                os.fsync(fd)
        elif sink is not None:
            sink.write(entry, line)
        self.size += len(line)
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self._leaf = entry.id
        if self.on_append is not None:
            self.on_append(entry)
        return entry

    def unwritten(self) -> Awaitable[None] | None:
        """None when every entry appended so far is stored (always, but for the sessions
        of an async store); else an awaitable done when they are (raising what storing
        one raised). The recorder hands it to the runner's event bus, so a run waits for
        its entries without blocking the event loop."""
        sink = self._sink
        pending = getattr(sink, "unwritten", None) if sink is not None else None
        return pending() if pending is not None else None

    async def written(self) -> None:
        """Wait until every entry appended so far is stored (`unwritten`)."""
        pending = self.unwritten()
        if pending is not None:
            await pending

    def sync(self) -> None:
        """Force what was written to disk (unless ``fsync="never"``) and bring the
        store's index up to date."""
        if self._fd is not None and self.fsync != "never":
            os.fsync(self._fd)
        if self._sink is not None and self.fsync != "never":
            self._sink.sync()
        if self._on_change is not None:
            try:
                self._on_change(self)
            except OSError as exc:  # the index is a cache: never fail a write for it
                log.warning("session index not updated: %s", exc)

    def sync_soon(self) -> None:
        """`sync` in a worker thread within `SYNC_DELAY` seconds, so the end of a run
        never waits for the disk; calls made while one is pending are folded into it.
        `close` does it at once."""
        if not self.writable:
            return
        with self._sync_guard:
            if self._sync_pending:
                return
            self._sync_pending = True
            if self._syncer is None:
                self._syncer = ThreadPoolExecutor(1, thread_name_prefix="skillkit-session")
        self._syncer.submit(self._sync_in_background)

    def _sync_in_background(self) -> None:
        self._closing.wait(SYNC_DELAY)  # runs ending close together share one sync
        with self._sync_guard:
            self._sync_pending = False
        if not self.writable:
            return
        try:
            self.sync()
        except OSError as exc:
            log.warning("session %s: sync failed: %s", self.id, exc)

    def close(self) -> None:
        """Sync, release the write lock and the file. Safe to call more than once."""
        self._closing.set()
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            syncer.shutdown(wait=True)
        fd, sink = self._fd, self._sink
        if fd is None and sink is None:
            return
        try:
            self.sync()
        finally:
            self._fd = None
            self._sink = None
            if fd is not None:
                os.close(fd)
            if sink is not None:
                sink.close()
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None or getattr(self, "_sink", None) is not None:
            try:
                self.close()
            except Exception:
                pass

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    # ----- contributor parts

    def attach(self, agent: AgentHandle) -> None:
        """Start recording ``agent`` (called by `AgentRunner`); one runner per session.
        Raises `ValueError` when the session has a conversation and the runner was not
        given it (``AgentRunner(messages=session.context(), ...)``)."""
        from skillkit.session.recorder import SessionRecorder

        if self._recorder is not None:
            raise RuntimeError(f"session {self.id} already records a runner")
        if not self.writable:
            raise RuntimeError(f"session {self.id} is not open for writing")
        self._recorder = SessionRecorder(self, agent)

    def boundary_messages(self) -> list[AgentMessage]:
        pending, self._pending_context = self._pending_context, []
        if self._recorder is not None:
            for message in pending:
                self._recorder.expect_custom(message)
        return list(pending)

    async def aclose(self) -> None:
        """`close`, for code on an event loop: the sessions of an async store store what
        is in flight and close their connection without blocking the loop."""
        if self._recorder is not None:
            self._recorder.flush()
        sink = self._sink
        closer = getattr(sink, "aclose", None) if sink is not None else None
        if closer is None:
            self.close()
            return
        self._closing.set()
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            syncer.shutdown(wait=False)
        self._sink = None
        try:
            await closer()
        finally:
            if self._lock is not None:
                self._lock.release()

    @classmethod
    def from_bytes(cls, path: Path, data: bytes) -> Session:
        """A read-only session from the bytes of its file."""
        parsed = parse_session(data, path.name)
        return cls(path, parsed.header, parsed.entries, warnings=parsed.warnings, size=parsed.size)


def _context_message(entry: Entry) -> CustomMessage | None:
    """The message a custom or branch entry puts in the context."""
    if isinstance(entry, CustomEntry):
        return CustomMessage(kind=entry.kind, payload=entry.data)
    if isinstance(entry, BranchEntry) and entry.summary:
        text = f"{BRANCH_SUMMARY_PREFIX}\n\n{entry.summary}"
        return CustomMessage(kind=PINNED_KIND, payload={"text": text, "source": "branch"})
    return None


def _user_text(message: UserMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(getattr(part, "text", "") for part in content)
