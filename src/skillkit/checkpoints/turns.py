"""`Checkpoints`: a checkpoint per turn, and rewinding to one.

As a contributor of a runner, `Checkpoints` snapshots the workspace (`SnapshotStore`)
before each tool call that may change it and after its result: the first of these in a
run is the turn's checkpoint (the state before its first change), the last is the state
it left. The snapshot after a call is begun at once, in a worker thread, while the run
goes on (the model reads the result meanwhile): the next call that may change the
workspace, and the end of the run, wait for it, so it records the state the call left
exactly as if the run had waited (without a watch it is a walk of the workspace, which
then costs the turn nothing while the model answers). Shell commands are covered the
same way: what they changed is found by comparing the workspace before and after, not
by trusting the tool's report. Read-only tools (``read``, ``grep``, ``find``, ``ls``...
or any tool ``read_only`` says is) take no snapshot and wait for none. A child agent's
changes are made inside the parent's tool call that ran it, so they belong to the
parent's turn; a background task's changes are recorded when it ends (``bg_result``).

Each turn is kept in the store's folder (``turns.jsonl``) and, when a session is
recorded, as a `skillkit.session.CheckpointEntry` linking it to the turn's user message.

`restore` rewinds the code, the conversation or both to the state before a turn. It is
itself a turn (``kind="rewind"``), so `undo` takes it back. A file changed outside
SkillKit since its last snapshot is not overwritten unless ``force=True``
(`ChangedOutsideError` names them).

The records (`Turn`, `RestoreResult`, `ChangedOutsideError`, a turn's line in
``turns.jsonl``) are defined in `skillkit.checkpoints.turn_records`; every name is
importable from here as before.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from skillkit.agent import Contributor
from skillkit.agent.contributors import AgentHandle
from skillkit.checkpoints.store import (
    DEFAULT_MAX_FILE_SIZE,
    FileChange,
    Snapshot,
    SnapshotError,
    SnapshotStore,
)
from skillkit.checkpoints.turn_records import (
    ChangedOutsideError,
    RestoreResult,
    RewindTarget,
    Turn,
    turn_line,
    turns_in,
)
from skillkit.events import (
    AgentEnd,
    AgentStart,
    ErrorInfo,
    Event,
    ToolCallEvent,
    ToolCallEventResult,
    ToolResultEvent,
)
from skillkit.models import UserMessage
from skillkit.permissions.gate import BUILTIN_KINDS, ToolKind
from skillkit.session.format import (
    MAX_CHECKPOINT_PATCH,
    ChangedFile,
    CheckpointEntry,
    MessageEntry,
)
from skillkit.session.session import Session, replace_transcript
from skillkit.tools.base import ToolResult

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: turns are numbered by this one alone
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ChangedOutsideError",
    "Checkpoints",
    "RestoreResult",
    "RewindTarget",
    "Turn",
    "store_folder_of",
]

log = logging.getLogger("skillkit.checkpoints")

READ_ONLY_TOOLS = frozenset(name for name, kind in BUILTIN_KINDS.items() if kind == ToolKind.READ)
"""The built-in tools that never change the workspace (no snapshot around them)."""


COMPACT_EVERY = 20
"""The store is packed (`SnapshotStore.compact`) when the runner closes and at least this
many turns changed files since it was last packed."""


def store_folder_of(session: Session) -> Path:
    """Where the checkpoints of ``session`` live: beside its file, in
    ``<file name>.checkpoints/``."""
    return session.path.with_suffix(".checkpoints")


class Checkpoints(Contributor):
    """The checkpoints of one workspace (see the module docs).

    ``store`` keeps the snapshots; ``session`` (optional) is the recorded session its
    turns are linked to and whose conversation `restore` moves; ``read_only`` says
    whether a tool never changes the workspace (default: the built-in read tools).
    """

    name = "checkpoints"

    def __init__(
        self,
        store: SnapshotStore,
        *,
        session: Session | None = None,
        read_only: Callable[[str], bool] | None = None,
    ) -> None:
        self.store = store
        self.session = session
        self._read_only = read_only or READ_ONLY_TOOLS.__contains__
        self._file = store.folder / "turns.jsonl"
        self._turns: list[Turn] = []
        self._open: Turn | None = None
        self._known: str | None = None  # the last state SkillKit itself recorded
        self._agent: AgentHandle | None = None
        self._user: UserMessage | None = None
        self._begun = False  # the open turn took its checkpoint
        self._after_time = 0.0  # when the open turn's ``after`` snapshot was taken
        self._saved: dict[int, list[Any]] = {}  # transcripts before rewinds (no session)
        self._lock = threading.Lock()
        self._out: BinaryIO | None = None  # turns.jsonl, open for appending (unbuffered)
        self._worker: ThreadPoolExecutor | None = None  # takes the snapshots after calls
        self._pending: builtins.list[Future[None]] = []  # those not waited for yet
        self._read_to = 0  # how much of turns.jsonl this one has read (or written)
        self._load()
        self._packed_at = 0

    @classmethod
    def for_session(
        cls,
        session: Session,
        workspace: str | os.PathLike[str] | None = None,
        *,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        read_only: Callable[[str], bool] | None = None,
    ) -> Checkpoints:
        """The checkpoints of ``session``, kept beside its file (`store_folder_of`);
        its workspace is the session's ``cwd`` unless given."""
        store = SnapshotStore(
            workspace or session.cwd, store_folder_of(session), max_file_size=max_file_size
        )
        return cls(store, session=session, read_only=read_only)

    # ----- the record

    def _load(self) -> None:
        try:
            data = self._file.read_bytes()
        except OSError:
            return
        self._turns = sorted(turns_in(data).values(), key=lambda t: t.number)
        self._read_to = len(data)
        if self._turns:
            self._known = self._turns[-1].after

    def _write(self, turn: Turn) -> Turn:
        """Append ``turn``'s line to ``turns.jsonl`` now, one ``write`` to a file opened
        unbuffered: a turn's record is in the file (the kernel's page cache) when the
        turn ends, so a crash of SkillKit loses none (a turn that changed nothing
        included: no ``fsync``). Another `Checkpoints` on the same folder (another
        process) may have appended turns since this one read the file: under a lock on
        the file they are read first, and ``turn`` takes the number after theirs.
        Returns ``turn`` as written (as given when it could not be written)."""
        try:
            if self._out is None:
                self.store.folder.mkdir(parents=True, exist_ok=True)
                self._out = open(self._file, "a+b", buffering=0)  # noqa: SIM115
                weakref.finalize(self, self._out.close)
            fd = self._out.fileno()
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                turn, torn = self._catch_up(fd, turn)
                line = turn_line(turn)
                self._out.write(b"\n" + line if torn else line)
                self._read_to = os.fstat(fd).st_size
            finally:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as exc:
            log.warning("checkpoint of turn %d not kept: %s", turn.number, exc)
            self._close_record()
        return turn

    def _catch_up(self, fd: int, turn: Turn) -> tuple[Turn, bool]:
        """Read the turns others appended since this one last read the file (with the
        file locked): they join the list, the last state they recorded is SkillKit's,
        and ``turn`` is numbered after them. Also whether the file ends inside a line
        (a writer killed half way)."""
        size = os.fstat(fd).st_size
        torn = False
        if size > self._read_to:
            data = os.pread(fd, size - self._read_to, self._read_to)
            torn = not data.endswith(b"\n")
            theirs = turns_in(data)
            with self._lock:
                mine = {t.number for t in self._turns}
                added = [t for n, t in sorted(theirs.items()) if n not in mine]
                if added:
                    self._turns = sorted([*self._turns, *added], key=lambda t: t.number)
                    if added[-1].after and added[-1].number == self._turns[-1].number:
                        self._known = added[-1].after
        elif size and size == self._read_to:
            torn = os.pread(fd, 1, size - 1) != b"\n"
        with self._lock:
            highest = max((t.number for t in self._turns), default=0)
        if turn.number <= highest:
            turn = replace(turn, number=highest + 1)
        return turn, torn

    def _close_record(self) -> None:
        out, self._out = self._out, None
        if out is not None:
            try:
                out.close()
            except OSError:
                pass

    def _link(self, turn: Turn) -> None:
        session = self.session
        if session is None or not session.writable or (turn.kind == "turn" and not turn.changed):
            return  # a turn that changed nothing has no checkpoint to link
        files: list[ChangedFile] = []
        patch = ""
        if turn.changed:
            try:
                changes = self.store.changes(turn.before, turn.after)
                patch = self.store.patch(turn.before, turn.after)
            except SnapshotError as exc:
                log.warning("turn %d: its changes are not known: %s", turn.number, exc)
                changes = []
            files = [
                ChangedFile(path=c.path, status=c.status, added=c.added, removed=c.removed)
                for c in changes
            ]
            if len(patch) > MAX_CHECKPOINT_PATCH:
                patch = patch[:MAX_CHECKPOINT_PATCH] + "\n… (cut; /diff shows it whole)\n"
        try:
            session.append(
                CheckpointEntry,
                files=files,
                patch=patch,
                turn=turn.number,
                before=turn.before,
                after=turn.after,
                target_id=turn.entry_id,
                kind=turn.kind,
                prompt=turn.prompt[:200],
            )
        except (OSError, RuntimeError) as exc:
            log.warning("checkpoint of turn %d not linked in the session: %s", turn.number, exc)

    def list(self) -> list[Turn]:
        """Every turn recorded, oldest first (turns that changed nothing included)."""
        with self._lock:
            turns = list(self._turns)
            if self._open is not None:
                turns.append(self._open)
            return turns

    def turn(self, number: int) -> Turn:
        """Turn ``number`` (negative: from the end, -1 the last); `KeyError` if none."""
        turns = self.list()
        if number < 0 and -number <= len(turns):
            return turns[number]
        for turn in turns:
            if turn.number == number:
                return turn
        raise KeyError(f"no turn {number} in the checkpoints")

    def diff(self, number: int = -1) -> builtins.list[FileChange]:
        """What turn ``number`` changed, file by file, with +/- line counts."""
        turn = self.turn(number)
        return self.store.changes(turn.before, turn.after) if turn.changed else []

    def patch(self, number: int = -1) -> str:
        """What turn ``number`` changed, as a unified diff."""
        turn = self.turn(number)
        return self.store.patch(turn.before, turn.after) if turn.changed else ""

    # ----- recording (contributor parts)

    def attach(self, agent: AgentHandle) -> None:
        self._agent = agent
        agent.events.on("agent_start", self._on_event)
        agent.events.on("agent_end", self._on_event)
        agent.events.on("bg_result", self._on_background_result)

    def _on_background_result(self, event: Event[Any]) -> None:
        """A background task SkillKit started ended: what it changed is SkillKit's
        (part of the open turn, or of the state the next turn starts from)."""
        try:
            snapshot = self.store.snapshot()
        except SnapshotError as exc:
            self._report(f"the workspace checkpoint failed: {exc}")
            return
        with self._lock:
            if self._open is None:
                self._known = snapshot.id
            elif self._begun:
                self._advance(snapshot)
            else:  # the open turn has changed nothing yet: this is the state it starts from
                self._open = replace(self._open, before=snapshot.id, after=snapshot.id)
                self._after_time = snapshot.time
                self._known = snapshot.id

    def _on_event(self, event: Event[Any]) -> None:
        payload = event.payload
        if event.parent_id:
            return  # a child agent's run is part of the parent's tool call
        if isinstance(payload, AgentStart):
            self._start_turn(payload.prompt)
        elif isinstance(payload, AgentEnd):
            self._end_turn()

    def _start_turn(self, prompt: str) -> None:
        with self._lock:
            messages = getattr(self._agent, "messages", None)
            length = None
            user: UserMessage | None = None
            if isinstance(messages, list) and messages and isinstance(messages[-1], UserMessage):
                length, user = len(messages) - 1, messages[-1]
            number = (self._turns[-1].number if self._turns else 0) + 1
            state = self._known or ""
            self._open = Turn(number, prompt, time.time(), state, state, transcript_length=length)
            self._user = user
            self._begun = False

    def _end_turn(self) -> None:
        self._settle()  # the state the last call left (a walk's rest, at most)
        with self._lock:
            turn, self._open = self._open, None
            self._begun = False
        if turn is None:
            return
        turn = replace(turn, entry_id=self._entry_of(self._user))
        turn = self._write(turn)
        with self._lock:
            self._turns.append(turn)
            if turn.after:
                self._known = turn.after
        self._link(turn)

    def _entry_of(self, message: UserMessage | None) -> str | None:
        session = self.session
        if session is None or message is None:
            return None
        fallback = None
        for entry in reversed(session.branch()):
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                if entry.message is message:
                    return entry.id
                fallback = fallback or entry.id
        return fallback

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        if self._read_only(call.tool_name):
            return None  # changes nothing: neither waits nor takes a snapshot
        if self._pending:  # what the last call left is recorded before this one changes it
            await self._asettle()
        if self._open is None or self._begun:
            return None  # outside a run, or the turn has its checkpoint
        try:
            snapshot = await asyncio.to_thread(self.store.snapshot)
        except SnapshotError as exc:
            return ToolCallEventResult(
                block=True, reason=f"the workspace checkpoint failed, so nothing was changed: {exc}"
            )
        with self._lock:
            turn = self._open
            if turn is None:  # a call outside a run (a face's direct call)
                return None
            if not self._begun:  # the turn's first change comes next: its checkpoint
                self._open = replace(turn, before=snapshot.id, after=snapshot.id)
                self._after_time = snapshot.time
                self._begun = True
        return None

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        """The open turn's state after a call. A call that reached no checkpoint (a gate
        before this one refused it, or its checkpoint failed) did not run: it changed
        nothing, and moving ``after`` alone would set it against a ``before`` never taken
        (on a store's first turn, the empty state: every file would look added)."""
        if self._read_only(event.tool_name) or not self._begun:
            return None
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="skillkit-checkpoints")
        self._pending.append(self._worker.submit(self._after_call))
        return None

    async def stop_check(self, messages: builtins.list[Any]) -> str | None:
        """A run about to end waits here for the snapshot after its last call (without
        blocking the event loop; a run that ends otherwise waits at its end)."""
        if self._pending:
            await self._asettle()
        return None

    def _after_call(self) -> None:
        """The snapshot after a call (in the worker thread): the open turn's state."""
        snapshot = self.store.snapshot()
        with self._lock:
            if self._open is not None:
                self._advance(snapshot)

    def _settle(self) -> None:
        """Wait for the snapshots after calls begun so far (blocking; in the run's
        thread only at its end), and report those that failed."""
        pending = list(self._pending)
        wait(pending)
        for future in pending:
            self._settled(future)

    async def _asettle(self) -> None:
        """`_settle` without blocking the event loop. Calls run side by side may wait
        at once: each returns only when every snapshot begun before it has ended."""
        for future in list(self._pending):
            with contextlib.suppress(Exception):  # reported once, by `_settled`
                await asyncio.wrap_future(future)
            self._settled(future)

    def _settled(self, future: Future[None]) -> None:
        """``future`` (done) is waited for: dropped, and reported if it failed (once)."""
        if future not in self._pending:
            return  # another waiter took it
        self._pending.remove(future)
        failure = future.exception()
        if failure is not None:  # the turn goes on; its state stays the last one known
            self._report(f"the workspace checkpoint failed: {failure}")

    def _advance(self, snapshot: Snapshot) -> None:
        """The open turn's state is now ``snapshot``, unless a newer one was recorded
        (snapshots taken in worker threads and background results may finish in any
        order; the store takes them one at a time). Called with the lock held."""
        if self._open is None or snapshot.time < self._after_time:
            return
        self._after_time = snapshot.time
        self._open = replace(self._open, after=snapshot.id)

    async def aclose(self) -> None:
        """Pack the store when many turns changed files since it was last packed, and
        stop watching the workspace (a later snapshot watches again)."""
        await self._asettle()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=False)
        self.store.close()
        self._close_record()
        changed = sum(1 for turn in self._turns if turn.changed)
        if changed - self._packed_at >= COMPACT_EVERY:
            self._packed_at = changed
            try:
                await asyncio.to_thread(self.store.compact)
            except SnapshotError as exc:
                log.warning("the checkpoint store was not packed: %s", exc)

    def _report(self, message: str) -> None:
        log.error("%s", message)
        agent = self._agent
        if agent is not None:
            agent.events.emit_nowait(ErrorInfo(stage="checkpoints", message=message))

    # ----- rewinding

    def restore(
        self, number: int, target: RewindTarget = "both", *, force: bool = False
    ) -> RestoreResult:
        """Rewind to the state before turn ``number``: its ``code`` (the workspace),
        its ``conversation`` (the transcript before its prompt) or ``both``.

        Raises `ChangedOutsideError` (nothing changed) when the code rewind would
        overwrite files changed outside SkillKit since its last snapshot, unless
        ``force``; `RuntimeError` during a run; `KeyError` for an unknown turn."""
        if target not in ("code", "conversation", "both"):
            raise ValueError(f"target must be code, conversation or both, not {target!r}")
        if getattr(self._agent, "is_running", False) or self._open is not None:
            raise RuntimeError("a rewind cannot happen while a run is in progress")
        turn = self.turn(number)
        return self._rewind(turn, target, force, undo=False)

    def undo(self, *, force: bool = False) -> RestoreResult:
        """Take back the last turn (code and conversation); when the last turn is a
        rewind, that rewind is taken back."""
        if getattr(self._agent, "is_running", False) or self._open is not None:
            raise RuntimeError("undo cannot happen while a run is in progress")
        turns = self.list()
        if not turns:
            raise KeyError("there is no turn to undo")
        last = turns[-1]
        target: RewindTarget = "both"
        if last.kind == "rewind" and last.target in ("code", "conversation"):
            target = "code" if last.target == "code" else "conversation"
        return self._rewind(last, target, force, undo=True)

    def _rewind(
        self, turn: Turn, target: RewindTarget, force: bool, *, undo: bool
    ) -> RestoreResult:
        leaf = self.session.leaf_id if self.session is not None else None
        length = None
        messages = getattr(self._agent, "messages", None)
        if isinstance(messages, list):
            length = len(messages)
        now = self.store.snapshot()
        files: builtins.list[FileChange] = []
        before = self._state_before(turn)
        if target in ("code", "both") and before:
            keep: set[str] = set()
            if self._known and self._known != now.id:
                # changed outside SkillKit since its last snapshot: a path SkillKit also
                # changed is a conflict; any other is the user's and stays as it is
                outside = {c.path for c in self.store.changes(self._known, now.id, lines=False)}
                ours = {c.path for c in self.store.changes(self._known, before, lines=False)}
                conflicts = sorted(outside & ours)
                if conflicts and not force:
                    raise ChangedOutsideError(conflicts)
                keep = outside - ours
            files = self.store.restore(before, current=now, keep=keep)
        if target in ("conversation", "both"):
            self._rewind_conversation(turn, undo=undo)
        after = self.store.snapshot().id if files else now.id
        with self._lock:
            number = (self._turns[-1].number if self._turns else 0) + 1
            record = Turn(
                number,
                f"{'undo' if undo else 'rewind'} to before turn {turn.number} ({target})",
                time.time(),
                now.id,
                after,
                kind="rewind",
                entry_id=leaf,
                transcript_length=length,
                target=target,
            )
        record = self._write(record)
        with self._lock:
            self._turns.append(record)
            self._known = after
            if target != "code" and isinstance(messages, list):
                self._saved[record.number] = messages
        self._link(record)
        return RestoreResult(target, files, record)

    def _state_before(self, turn: Turn) -> str:
        """The snapshot of the workspace before ``turn``: its own, or when it took none
        (a first turn that changed nothing) the first one taken after it."""
        if turn.before:
            return turn.before
        for later in self.list():
            if later.number > turn.number and later.before:
                return later.before
        return ""

    def _rewind_conversation(self, turn: Turn, *, undo: bool) -> None:
        session = self.session
        if session is not None:
            if turn.kind == "rewind":  # back to where the conversation was before it
                if turn.entry_id is not None or undo:
                    session.move_to(turn.entry_id)
                return
            entry = session.by_id.get(turn.entry_id or "")
            if entry is None:
                raise KeyError(f"turn {turn.number} is linked to no conversation entry")
            session.move_to(entry.parent_id)
            return
        agent = self._agent
        messages = getattr(agent, "messages", None)
        if agent is None or not isinstance(messages, list):
            raise KeyError(f"turn {turn.number}'s conversation is not known here")
        if turn.kind == "turn" and turn.transcript_length is None:
            raise KeyError(f"turn {turn.number}'s conversation is not known here")
        if turn.kind == "rewind":
            saved = self._saved.get(turn.number)
            if saved is None:
                raise KeyError("this rewind's conversation is not known here")
            replace_transcript(agent, saved)
            return
        replace_transcript(agent, messages[: turn.transcript_length])
