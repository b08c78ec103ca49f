"""`ProjectInstructions`: the contributor that puts the environment and the instruction
files into the system prompt, and keeps them current.

Hot reload: before each model call the contributor compares the candidate files' status
(modification time, size, inode; absent files count too) and today's date with what it
last read, and reads again only when something changed. The candidate list is a handful
of paths, so this check is a few ``stat`` calls per turn; unlike a watcher task it
cannot miss an edit, needs no background task and notices a file created after start.
An edit is live on the next turn; each change after the first read is announced as a
``store_update`` event (domain ``instructions``, op ``reload``).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from pathlib import Path

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import EventBus, StoreUpdate
from skillkit.instructions.files import (
    Candidate,
    InstructionFile,
    instruction_files,
    read_instruction_file,
)
from skillkit.instructions.prompt import render_instructions

__all__ = ["DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_TOTAL_BYTES", "ProjectInstructions"]

DEFAULT_MAX_FILE_BYTES = 32 * 1024
"""The most of one instruction file that reaches the prompt."""

DEFAULT_MAX_TOTAL_BYTES = 96 * 1024
"""The most of all instruction files together that reaches the prompt."""

_Signature = tuple[object, ...]


class ProjectInstructions(Contributor):
    """Adds the environment (working directory, platform, date), the instruction files
    (`skillkit.instructions.files`) and ``append`` to the system prompt, in the order
    `skillkit.instructions.prompt` documents.

    ``cwd`` (default: the current directory) is the working directory; ``home`` (default:
    the user's home) is where ``.skillkit/`` is read and where the search for a
    repository root stops. ``project=False`` reads only the user's own files.
    Each file is cut at ``max_file_bytes``; when all together exceed
    ``max_total_bytes``, the most specific files keep their room and the most general
    are cut or left out. ``today`` gives the date (a seam for tests).

    `system_prompt` never raises: unreadable files are skipped.
    """

    name = "instructions"

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        project: bool = True,
        append: str = "",
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        today: Callable[[], datetime.date] = datetime.date.today,
    ) -> None:
        if max_file_bytes < 1 or max_total_bytes < 1:
            raise ValueError("max_file_bytes and max_total_bytes must be positive")
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        self.home = Path(os.path.abspath(home if home is not None else Path.home()))
        self.project = project
        self.append = append
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.today = today
        self.reloads = 0
        """How many times the files were read again after a change."""
        self._signature: _Signature | None = None
        self._read_once = False
        self._files: list[InstructionFile] = []
        self._text = ""
        self._events: EventBus | None = None

    @property
    def files(self) -> list[InstructionFile]:
        """The instruction files in the prompt now, in order (read if not yet)."""
        self._refresh()
        return list(self._files)

    def attach(self, agent: AgentHandle) -> None:
        self._events = agent.events

    def system_prompt(self) -> str | None:
        self._refresh()
        return self._text or None

    def reload(self) -> bool:
        """Read every file again now; returns whether the section changed."""
        before = self._text
        self._signature = None
        self._refresh()
        return self._text != before

    def _status(self) -> tuple[list[Candidate], _Signature]:
        """The candidates and what identifies their current state: today's date and
        each path's modification time, size and inode (or its absence)."""
        candidates = instruction_files(self.cwd, self.home, project=self.project)
        marks: list[object] = [self.today()]
        for candidate in candidates:
            try:
                info = candidate.path.stat()
                marks.append((str(candidate.path), info.st_mtime_ns, info.st_size, info.st_ino))
            except OSError:
                marks.append((str(candidate.path), None))
        return candidates, tuple(marks)

    def _refresh(self) -> None:
        candidates, signature = self._status()
        if signature == self._signature:
            return
        first = self._signature is None and not self._read_once
        self._signature = signature
        self._read_once = True
        files = self._read(candidates)
        today = signature[0]
        assert isinstance(today, datetime.date)
        text = render_instructions(
            files, cwd=self.cwd, home=self.home, today=today, append=self.append
        )
        changed = text != self._text
        self._files = files
        self._text = text
        if changed and not first:
            self.reloads += 1
            if self._events is not None:
                self._events.emit_nowait(
                    StoreUpdate(
                        domain="instructions",
                        op="reload",
                        id=str(self.cwd),
                        payload={"files": [str(f.path) for f in files]},
                    )
                )

    def _read(self, candidates: list[Candidate]) -> list[InstructionFile]:
        """Read the candidates, giving the byte budget to the most specific first."""
        budget = self.max_total_bytes
        found: list[InstructionFile] = []
        for candidate in reversed(candidates):
            if budget <= 0:
                break
            file = read_instruction_file(candidate, min(self.max_file_bytes, budget))
            if file is None:
                continue
            budget -= len(file.text.encode("utf-8", errors="replace"))
            found.append(file)
        return found[::-1]
