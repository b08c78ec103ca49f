"""Where installed plugins live, apart from the reader of their files
(`skillkit.extensions.claude_plugins`), so finding that there are none costs no import."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["any_plugin_folder", "plugin_roots"]


def plugin_roots(
    workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> list[tuple[Path, str]]:
    """Where installed plugins live: ``~/.skillkit/plugins`` (user) and the project's
    ``.skillkit/plugins`` (project)."""
    user = Path(home) if home is not None else Path.home()
    return [
        (user / ".skillkit" / "plugins", "user"),
        (Path(workspace) / ".skillkit" / "plugins", "project"),
    ]


def any_plugin_folder(
    workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> bool:
    """Whether any of the `plugin_roots` exists (a folder that may hold plugins)."""
    return any(root.is_dir() for root, _ in plugin_roots(workspace, home))
