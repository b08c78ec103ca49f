"""`Workspace`: where the file tools resolve paths, and the root they may be confined to."""

from __future__ import annotations

import os
from pathlib import Path

from skillkit.tools.base import ToolError

__all__ = ["Workspace"]


class Workspace:
    """Resolves the paths a model names.

    Relative paths are taken from ``root`` (or the current directory when there is no
    root); ``~`` is expanded. With ``confine=True`` (the default when a root is given)
    a path whose real location — after following every symlink, including a dangling
    one — lies outside the root is refused with a `ToolError`. ``bash`` is not confined:
    it starts in the root, but a shell can go anywhere.
    """

    __slots__ = ("confine", "root")

    def __init__(self, root: Path | str | None = None, *, confine: bool | None = None) -> None:
        self.root = Path(root).expanduser().resolve() if root is not None else None
        self.confine = (root is not None) if confine is None else confine
        if self.confine and self.root is None:
            raise ValueError("a confined workspace needs a root")

    @property
    def base(self) -> Path:
        """The directory relative paths start from."""
        return self.root if self.root is not None else Path.cwd()

    def resolve(self, path: str) -> Path:
        """The real absolute path for ``path``; refuses one outside a confined root."""
        if not path or "\0" in path:
            raise ToolError(f"invalid path {path!r}")
        candidate = Path(os.path.expanduser(path))
        if not candidate.is_absolute():
            candidate = self.base / candidate
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise ToolError(f"{path}: cannot resolve ({exc})") from exc
        if self.confine and self.root is not None and not real.is_relative_to(self.root):
            raise ToolError(f"{path}: refused, it is outside the workspace {self.root}")
        return real

    def allows(self, real: Path) -> bool:
        """Whether an already resolved path may be used (always true when not confined)."""
        return not self.confine or self.root is None or real.is_relative_to(self.root)

    def display(self, real: Path) -> str:
        """``real`` as the model should see it: relative to the base when inside it."""
        base = self.base
        if real == base:
            return "."
        if real.is_relative_to(base):
            return real.relative_to(base).as_posix()
        return str(real)
