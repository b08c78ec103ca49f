"""`Workspace`: where the file tools resolve paths, the root they are confined to, the
path policy that hides denied files from them, and the safe way they open files."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillkit.confinement import Confinement
from skillkit.protected import protected_reason
from skillkit.tools.base import ToolError

__all__ = ["PathPolicy", "Workspace"]


@runtime_checkable
class PathPolicy(Protocol):
    """Which files the file tools may show or change (the permission gate is one).

    ``can_read(path, searched)`` — False hides the file from ``read``, ``grep``,
    ``find`` and ``ls`` (contents and name); ``searched`` is the file or folder the call
    named (what the user may already have approved), or None. ``can_write(path)`` —
    False makes ``write`` and ``edit`` refuse it. Both get absolute paths and must not
    raise (a raise counts as False).
    """

    def can_read(self, path: str, searched: str | None = None) -> bool: ...

    def can_write(self, path: str) -> bool: ...


class Workspace:
    """Resolves the paths a model names, and opens files without being tricked.

    Relative paths are taken from ``root``; ``~`` is expanded. Without a root the
    current directory (at construction) is the root. The file tools are confined to the
    root unless ``confine=False`` is passed explicitly (then relative paths start at the
    current directory of each call when there is no root): a path whose real location —
    after following every symlink, including a dangling one — lies outside the root is
    refused with a `ToolError`. ``bash`` is not confined: it starts in the root, but a
    shell can go anywhere.

    Path policies (`add_policy`, e.g. the permission gate) hide files from the readers
    and refuse writes; `open_file` opens by directory descriptors without following any
    symlink, so a symlink swapped in after the checks cannot redirect the open.
    """

    __slots__ = ("_policies", "confine", "extra_roots", "protected_paths", "root")

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        confine: bool | None = None,
        protected_paths: tuple[str | os.PathLike[str], ...] = (),
        extra_roots: tuple[str | os.PathLike[str], ...] = (),
    ) -> None:
        if root is None and confine is not False:
            root = Path.cwd()
        self.root = Path(root).expanduser().resolve() if root is not None else None
        self.confine = confine is not False
        self.protected_paths = tuple(os.path.abspath(p) for p in protected_paths)
        """Paths protected beyond `skillkit.protected`'s names (the settings' list)."""
        self.extra_roots: tuple[Path, ...] = ()
        """Further folders a confined workspace allows besides ``root`` (see `add_roots`)."""
        self._policies: list[PathPolicy] = []
        self.add_roots(extra_roots)

    def add_roots(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Allow the paths under each of ``folders`` (absolute; resolved now) too, as
        under ``root``: the session's additional workspace folders. Relative paths still
        start at the base."""
        for folder in folders:
            real = Path(os.fspath(folder)).expanduser().resolve()
            if real not in self.extra_roots:
                self.extra_roots = (*self.extra_roots, real)

    def _inside(self, real: Path) -> bool:
        if self.root is None or real.is_relative_to(self.root):
            return True
        return any(real.is_relative_to(extra) for extra in self.extra_roots)

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
        if self.confine and not self._inside(real):
            raise ToolError(f"{path}: refused, it is outside the workspace {self.root}")
        return real

    def allows(self, real: Path) -> bool:
        """Whether an already resolved path may be used (always true when not confined)."""
        return not self.confine or self._inside(real)

    def display(self, real: Path) -> str:
        """``real`` as the model should see it: relative to the base when inside it."""
        base = self.base
        if real == base:
            return "."
        if real.is_relative_to(base):
            return real.relative_to(base).as_posix()
        return str(real)

    # ----- path policy

    def add_policy(self, policy: PathPolicy) -> Callable[[], None]:
        """Apply ``policy`` from now on (once, however often it is added); returns a
        function that removes it. Several policies combine: every one must agree."""
        if not any(p is policy for p in self._policies):
            self._policies.append(policy)

        def remove() -> None:
            self._policies[:] = [p for p in self._policies if p is not policy]

        return remove

    def can_read(self, path: Path | str, searched: Path | str | None = None) -> bool:
        """Whether the readers may show ``path`` (its contents or its name) in a call that
        named ``searched`` (see `PathPolicy`). Never raises."""
        for policy in list(self._policies):
            try:
                if searched is None:
                    verdict = policy.can_read(os.fspath(path))
                else:
                    verdict = policy.can_read(os.fspath(path), os.fspath(searched))
            except Exception:
                return False
            if verdict is not True:
                return False
        return True

    def can_write(self, path: Path | str) -> bool:
        """Whether ``write``/``edit`` may change ``path``. Never raises."""
        for policy in list(self._policies):
            try:
                if policy.can_write(os.fspath(path)) is not True:
                    return False
            except Exception:
                return False
        return True

    def searching(self, root: Path) -> Callable[[Path], bool]:
        """The ``keep`` test for a search under ``root``: `can_read` with ``root`` as the
        path the call named."""
        return lambda path: self.can_read(path, root)

    def check_readable(self, shown: str, real: Path) -> None:
        """Raise `ToolError` when a policy hides ``real``, the path a call named."""
        if not self.can_read(real, real):
            raise ToolError(f"{shown}: refused by a permission rule")

    def check_protected(self, real: Path, shown: str, confinement: Confinement | None) -> None:
        """Raise `ToolError` when ``real`` (resolved the way the kernel resolves it, as
        `resolve` does) is a path that makes code run later (`skillkit.protected`, plus
        `protected_paths`) and ``confinement`` does not approve that very path — or a
        folder holding it. Without a confinement nothing is approved."""
        reason = protected_reason(real, extra=self.protected_paths)
        if reason is None:
            return
        approved = confinement.approved_paths if confinement is not None else ()
        if any(real == Path(p) or Path(p) in real.parents for p in approved):
            return
        raise ToolError(
            f"{shown}: refused, {reason}; a write to it needs the user's approval of that very path"
        )

    # ----- opening files

    def open_file(
        self, real: Path, shown: str, *, write: bool = False, create: bool = False
    ) -> tuple[int, bool]:
        """Open the regular file ``real`` (an absolute, resolved path) and return
        ``(fd, created)``; the caller closes the descriptor.

        Every directory on the way is opened relative to the previous one with
        ``O_NOFOLLOW``, and so is the file: a symlink anywhere in the path — swapped in
        after `resolve` — makes the open fail instead of leading elsewhere. Reading
        opens without blocking and refuses anything that is not a regular file (a FIFO,
        a device, a socket). Writing (``write=True``) re-checks the path policies,
        refuses a file with more than one hard link in a confined workspace (another
        name for it may lie outside), creates missing parent directories and, with
        ``create``, the file itself. Raises `ToolError` with a one-line message.
        """
        if not real.is_absolute() or "\0" in str(real):
            raise ToolError(f"{shown}: invalid path")
        if write and not self.can_write(real):
            raise ToolError(f"{shown}: refused by a permission rule")
        if not write:
            self.check_readable(shown, real)
        parts = real.parts[1:]
        if not parts:
            raise ToolError(f"{shown} is a directory")
        if os.open not in os.supports_dir_fd:  # no openat() here: open by the checked path
            return self._open_plain(real, shown, write=write, create=create)
        # O_PATH (Linux): a directory needs only search permission to be walked through
        directory_flags = (
            getattr(os, "O_PATH", os.O_RDONLY)
            | _CLOEXEC
            | _NOFOLLOW
            | getattr(os, "O_DIRECTORY", 0)
        )
        fd = os.open(real.anchor, directory_flags)
        created = False
        try:
            for name in parts[:-1]:
                child = _enter(fd, name, directory_flags, shown, make=write)
                os.close(fd)
                fd = child
            # O_NONBLOCK: opening a FIFO must never wait for its other end
            flags = _CLOEXEC | _NOFOLLOW | _NONBLOCK
            flags |= os.O_RDWR if write else os.O_RDONLY
            try:
                file_fd = os.open(parts[-1], flags, 0o666, dir_fd=fd)
            except FileNotFoundError:
                if not (write and create):
                    raise ToolError(f"{shown}: no such file") from None
                try:
                    file_fd = os.open(parts[-1], flags | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=fd)
                except FileExistsError:
                    raise ToolError(f"{shown}: changed while opening; try again") from None
                created = True
        except OSError as exc:
            raise ToolError(_open_error(shown, exc)) from None
        finally:
            os.close(fd)
        return self._checked(file_fd, shown, write=write), created

    def _open_plain(self, real: Path, shown: str, *, write: bool, create: bool) -> tuple[int, bool]:
        """`open_file` where the platform has no ``openat`` (the final component is still
        not followed where ``O_NOFOLLOW`` exists)."""
        flags = _CLOEXEC | _NOFOLLOW | _NONBLOCK | (os.O_RDWR if write else os.O_RDONLY)
        created = False
        try:
            if write:
                real.parent.mkdir(parents=True, exist_ok=True)
            try:
                file_fd = os.open(real, flags)
            except FileNotFoundError:
                if not (write and create):
                    raise ToolError(f"{shown}: no such file") from None
                file_fd = os.open(real, flags | os.O_CREAT | os.O_EXCL, 0o666)
                created = True
        except OSError as exc:
            raise ToolError(_open_error(shown, exc)) from None
        return self._checked(file_fd, shown, write=write), created

    def _checked(self, file_fd: int, shown: str, *, write: bool) -> int:
        """``file_fd`` once it is known to be a regular file fit for the access (closed
        and `ToolError` otherwise), switched back to blocking reads and writes."""
        try:
            info = os.fstat(file_fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{shown} is not a regular file ({_file_kind(info.st_mode)})")
            if write and self.confine and info.st_nlink > 1:
                raise ToolError(
                    f"{shown}: refused, the file has {info.st_nlink} hard links and another "
                    "name for it may be outside the workspace"
                )
            if _NONBLOCK:
                os.set_blocking(file_fd, True)
        except BaseException:
            os.close(file_fd)
            raise
        return file_fd


_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)


def _enter(fd: int, name: str, flags: int, shown: str, *, make: bool) -> int:
    """Open directory ``name`` under ``fd``; create it first when missing and ``make``."""
    try:
        return os.open(name, flags, dir_fd=fd)
    except FileNotFoundError:
        if not make:
            raise ToolError(f"{shown}: no such file") from None
    try:
        os.mkdir(name, 0o777, dir_fd=fd)
    except FileExistsError:
        pass
    return os.open(name, flags, dir_fd=fd)


def _open_error(shown: str, exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return f"{shown}: refused, a symlink appeared in the path while it was being opened"
    if exc.errno == errno.ENOTDIR:
        return (
            f"{shown}: refused, a part of the path is not a directory "
            "(a symlink may have appeared in it while it was being opened)"
        )
    if exc.errno == errno.ENXIO:
        return f"{shown} is not a regular file"
    if isinstance(exc, IsADirectoryError):
        return f"{shown} is a directory"
    return f"{shown}: cannot open ({exc.strerror or exc})"


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
