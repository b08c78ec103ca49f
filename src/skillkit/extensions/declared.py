"""Whether any installed package declares entry points of a group, found without
importing `importlib.metadata` (which, with the email parser it loads, is one of the
larger imports of a start-up).

The usual layout — each distribution a ``*.dist-info`` or ``*.egg-info`` folder with an
``entry_points.txt`` in a folder of ``sys.path`` — is read directly: a group declared
there shows as its ``[group]`` header line. Anything else on ``sys.path`` (a zip file,
an egg, a path hook) makes the answer "maybe", so the caller asks
`importlib.metadata` as before: a plugin is never missed for a faster start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

__all__ = ["may_declare"]


def may_declare(group: str, paths: Iterable[str] | None = None) -> bool:
    """False only when no distribution found on ``paths`` (default ``sys.path``)
    declares an entry point of ``group`` and every path could be read as a plain
    folder; True otherwise."""
    header = f"[{group}]"
    for path in sys.path if paths is None else paths:
        folder = path or os.curdir
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            continue  # a path that does not exist holds nothing
        except OSError:
            return True
        if not os.path.isdir(folder):
            return True  # a zip archive on the path: only importlib.metadata reads it
        for name in names:
            if name.endswith(".egg"):
                return True
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            declared = os.path.join(folder, name, "entry_points.txt")
            try:
                with open(declared, encoding="utf-8", errors="replace") as file:
                    if any(line.strip() == header for line in file):
                        return True
            except FileNotFoundError:
                continue
            except OSError:
                return True
    return False
