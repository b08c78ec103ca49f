"""The system-prompt section built from the environment and the instruction files.

The section reads, in this order:

1. ``# Environment``: the working directory, the platform and today's date;
2. ``# Project instructions``: each instruction file under a heading naming it (the
   user's own first, then the repository root's down to the working directory's, so the
   most specific file comes last), with a note where a file was cut at the size limit;
3. the text of ``--append-system-prompt``, as given.

Identical files (``CLAUDE.md`` a copy or symlink of ``AGENTS.md``) are included once.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from pathlib import Path

from skillkit.instructions.files import InstructionFile

__all__ = ["environment_section", "render_instructions"]


def environment_section(cwd: Path, today: datetime.date) -> str:
    """The ``# Environment`` lines for ``cwd`` on ``today``."""
    system = platform.system() or "unknown"
    release = platform.release()
    shown = f"{system} {release}".strip()
    return f"# Environment\nWorking directory: {cwd}\nPlatform: {shown}\nDate: {today.isoformat()}"


def _label(file: InstructionFile, cwd: Path, home: Path) -> str:
    path = file.path
    if file.scope == "user":
        try:
            return "~/" + path.relative_to(home).as_posix()
        except ValueError:
            return str(path)
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def render_instructions(
    files: Sequence[InstructionFile],
    *,
    cwd: Path,
    home: Path,
    today: datetime.date,
    append: str = "",
) -> str:
    """The whole section (see the module docs)."""
    parts = [environment_section(cwd, today)]
    seen: set[str] = set()
    shown: list[str] = []
    for file in files:
        body = file.text.strip()
        if not body or body in seen:
            continue
        seen.add(body)
        heading = f"## {_label(file, cwd, home)}"
        note = (
            "\n\n[cut at the size limit; the rest of this file was left out]"
            if file.truncated
            else ""
        )
        shown.append(f"{heading}\n\n{body}{note}")
    if shown:
        parts.append(
            "# Project instructions\n"
            "Instructions from the user's and the project's AGENTS.md / CLAUDE.md files, "
            "most general first; where they disagree, the later (more specific) file wins.\n\n"
            + "\n\n".join(shown)
        )
    if append.strip():
        parts.append(append.strip())
    return "\n\n".join(parts)
