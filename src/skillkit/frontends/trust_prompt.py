"""The terminal's trust prompt: may this project's own plugin files run?

An interactive session asks once, before it starts, when the project has plugin files
(``.skillkit/plugins/*.py``) and its trust is not settled otherwise (see
`skillkit.extensions.trust`). The question lists the files; ``y`` or ``yes`` trusts the
project, and the trust store remembers it, so the next session does not ask. Anything
else — ``n``, an empty line, the end of input — leaves the files out for this session
(and the next session asks again). The same trust lets the project's own settings
files widen permissions (see `skillkit.trust`), and the question says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

__all__ = ["QUESTION", "ask_trust"]

QUESTION = "Trust this project and run its plugins from now on? [y/N]"
"""The question's last line (``skillkit plugins untrust`` takes a yes back)."""


def ask_trust(
    project: Path,
    files: Sequence[Path],
    *,
    stdin: IO[str] | None = None,
    out: IO[str] | None = None,
) -> bool:
    """Ask on ``out`` (stderr) whether ``project``'s plugin ``files`` may run and read
    the answer from ``stdin``; True for ``y``/``yes`` (any case). An `AskTrust`."""
    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stderr
    names = [_relative(path, project) for path in files]
    out.write(
        "This project has its own SkillKit plugins: Python code that would run with your "
        "rights (trusting it also lets its .skillkit/settings files grant permissions)."
        f"\n  project: {project}\n"
    )
    for name in names:
        out.write(f"  {name}\n")
    out.write(f"{QUESTION} ")
    out.flush()
    answer = stdin.readline()
    if not answer.endswith("\n"):
        out.write("\n")
    return answer.strip().lower() in ("y", "yes")


def _relative(path: Path, project: Path) -> str:
    try:
        return os.path.relpath(os.path.realpath(path), project)
    except ValueError:
        return str(path)
