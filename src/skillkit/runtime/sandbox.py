"""The OS sandbox behind the permission gate: bubblewrap on Linux, where it works.

Every process SkillKit runs for the model — ``bash``, background tasks, monitors,
``grep``'s ``rg``, skill actions — can be wrapped by a `Sandbox`. Under bubblewrap
(``bwrap``) the command sees:

- the whole file system read-only, except the workspace (with its additional folders)
  and any extra writable paths —
  and nothing at all but the private ``/tmp`` for a call whose `Confinement` is
  read-only (a command the permission gate let run unasked because it only reads);
- the paths that make code run later (`skillkit.protected`: ``.git/config``,
  ``.git/hooks``, ``.git/info`` of every repository at any depth, ``.skillkit/``,
  ``.mcp.json``, ``.envrc``, editor folders, and ``protected_paths`` from settings)
  read-only even inside a writable workspace, unless the call's confinement approved
  that very path; the folders holding them are pinned (bound onto themselves), so they
  cannot be renamed away and rebuilt;
- credential stores (`DEFAULT_MASKED_PATHS`: ``~/.ssh``, ``~/.aws``...), the paths of
  the permission rules that deny reading, and ``masked_paths`` from settings replaced by
  empty mounts (an empty read-only ``tmpfs`` for a folder, ``/dev/null`` for a file);
- a private ``/tmp`` (one directory per `Sandbox`, shared by its calls, removed by
  `Sandbox.close`), a minimal ``/dev`` and a fresh ``/proc``;
- no network (a new network namespace with only loopback) unless network is allowed;
- a new PID namespace: when the call ends, every process it started is gone with it;
- no capabilities, even when SkillKit runs as root (so ``mount`` cannot undo the above),
  and a new session (no way to push keystrokes into the terminal).

The policy is one of three modes: ``auto`` (the default: sandboxed wherever bubblewrap
is installed and usable, unconfined elsewhere), ``on`` (fail closed: a command is refused
with `SandboxUnavailable` where no sandbox can run), ``off`` (never sandboxed). The
``sandbox`` section of the settings files chooses it and the paths above
(`skillkit.runtime.sandbox_settings`, whose names this module re-exports).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillkit.confinement import Confinement
from skillkit.protected import ProtectedFinder
from skillkit.runtime.sandbox_settings import (
    DEFAULT_MASKED_PATHS,
    SANDBOX_MODES,
    SandboxMode,
    SandboxSettings,
    default_masked_paths,
    is_sandbox_mode,
    load_sandbox_settings,
    sandbox_settings,
)

__all__ = [
    "DEFAULT_MASKED_PATHS",
    "SANDBOX_MODES",
    "Bubblewrap",
    "Sandbox",
    "SandboxMode",
    "SandboxSettings",
    "SandboxUnavailable",
    "default_masked_paths",
    "find_bubblewrap",
    "is_sandbox_mode",
    "load_sandbox_settings",
    "sandbox_settings",
]

_INSTALL_HINT = "install the bubblewrap package"
_PROBE_TIMEOUT = 10.0


class SandboxUnavailable(OSError):
    """The policy is ``on`` but no sandbox can run here; the message is one line."""


# --------------------------------------------------------------------------- bubblewrap


@dataclass(frozen=True, slots=True)
class Bubblewrap:
    """A ``bwrap`` binary that ran a probe command successfully."""

    path: str
    version: str


@dataclass(frozen=True, slots=True)
class _Probe:
    found: Bubblewrap | None
    reason: str  # why not, when found is None


_probes: dict[str, _Probe] = {}
_probe_lock = threading.Lock()


def find_bubblewrap(path: str | None = None) -> Bubblewrap | str:
    """The usable ``bwrap`` on ``path`` (default ``$PATH``), or a one-line reason why none.

    The first time a given binary is seen it is probed once — it must run a command with
    every option SkillKit uses — and the answer is cached for the process's lifetime.
    """
    binary = shutil.which("bwrap", path=path)
    if binary is None:
        return f"bwrap not found; {_INSTALL_HINT}"
    binary = os.path.realpath(binary)
    with _probe_lock:
        probe = _probes.get(binary)
        if probe is None:
            probe = _probe(binary)
            _probes[binary] = probe
    return probe.found if probe.found is not None else probe.reason


def _probe(binary: str) -> _Probe:
    true = shutil.which("true") or "/bin/true"
    with tempfile.TemporaryDirectory(prefix="skillkit-sandbox-probe-") as scratch:
        argv = _bwrap_argv(
            binary,
            [true],
            cwd=Path(scratch),
            tmp=Path(scratch),
            network=False,
            mounts=_Mounts(
                writable=[Path(scratch)],
                pinned=[Path(scratch)],
                protected=[Path(scratch)],
                masked=[Path(scratch)],
            ),
        )
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return _Probe(None, f"bwrap at {binary} cannot run: {exc}")
    if done.returncode != 0:
        why = " ".join(done.stderr.decode("utf-8", "replace").split())[:200] or "no message"
        return _Probe(None, f"bwrap at {binary} does not work here ({why})")
    version = "?"
    try:
        shown = subprocess.run(
            [binary, "--version"], capture_output=True, timeout=_PROBE_TIMEOUT, check=False
        )
        words = shown.stdout.decode("utf-8", "replace").split()
        version = words[-1] if words else "?"
    except (OSError, subprocess.SubprocessError):
        pass
    return _Probe(Bubblewrap(binary, version), "")


def _needed_from_host_tmp(argv: Sequence[str]) -> set[Path]:
    """Folders under the host's ``/tmp`` a command needs to start, which the private
    ``/tmp`` would hide: this Python's installation (a virtual environment in
    ``/tmp/...``), the folders of ``PATH`` and the folder of the program itself. They are
    exposed read-only."""
    candidates: list[str] = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry:
            candidates.append(entry)
            if os.path.basename(entry.rstrip(os.sep)) == "bin":  # the prefix holding it
                candidates.append(os.path.dirname(entry.rstrip(os.sep)))
    if argv:
        program = argv[0] if os.sep in argv[0] else shutil.which(argv[0])
        if program:
            candidates.append(os.path.dirname(os.path.abspath(program)))
            candidates.append(os.path.dirname(os.path.realpath(program)))
    needed: set[Path] = set()
    for candidate in candidates:
        path = Path(os.path.abspath(candidate))
        if _HOST_TMP in path.parents and path.is_dir():
            needed.add(path)
    return needed


_HOST_TMP = Path("/tmp")

MAX_UNSCANNED_MOUNTS = 64
"""The folders the scan's bound left unlooked-at are bound read-only; when there are more
than this, their parents are (and so on up), so a huge tree costs a few mounts, not
thousands — more of it read-only, never less."""

MAX_PROTECTED_MOUNTS = 2000
"""More protected paths and pinned folders than this in one workspace, and a call gets
nothing writable (the mounts would make every command slow to start)."""


@dataclass(frozen=True, slots=True)
class _Mounts:
    """The mounts of one sandboxed call beyond the fixed ones, in the order they apply."""

    readable: Sequence[Path] = ()  # bound read-only (visible although under /tmp)
    writable: Sequence[Path] = ()  # bound writable
    pinned: Sequence[Path] = ()  # bound onto themselves: cannot be renamed or removed
    protected: Sequence[Path] = ()  # bound read-only over the writable binds
    reopened: Sequence[Path] = ()  # approved paths below a protected one: writable again
    masked: Sequence[Path] = ()  # replaced by an empty mount


def _bwrap_argv(
    binary: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    tmp: Path,
    network: bool,
    mounts: _Mounts,
) -> list[str]:
    wrapped = [
        binary,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    if not network:
        wrapped.append("--unshare-net")
    wrapped += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # The private /tmp comes before the writable binds, so a workspace under /tmp stays
    # visible (bubblewrap creates its mount point inside the private directory).
    wrapped += ["--bind", str(tmp), "/tmp", "--setenv", "TMPDIR", "/tmp"]
    for path in mounts.readable:
        if path.exists():
            wrapped += ["--ro-bind", str(path), str(path)]
    seen: set[str] = set()
    for path in mounts.writable:
        text = str(path)
        if text not in seen and path.exists():
            seen.add(text)
            wrapped += ["--bind", text, text]
    for path in mounts.pinned:
        wrapped += ["--bind", str(path), str(path)]
    for path in mounts.protected:
        wrapped += ["--ro-bind", str(path), str(path)]
    for path in mounts.reopened:
        wrapped += ["--bind", str(path), str(path)]
    for path in mounts.masked:
        text = str(path)
        if path.is_dir():
            wrapped += ["--perms", "0700", "--tmpfs", text, "--remount-ro", text]
        else:
            wrapped += ["--ro-bind", os.devnull, text]
    wrapped += ["--chdir", str(cwd), "--", *argv]
    return wrapped


def _collapse(folders: list[Path], root: Path, limit: int) -> list[Path]:
    """``folders`` replaced by their parents, level by level from the deepest, until at
    most ``limit`` remain (never going above ``root``: at worst ``[root]``). Every folder
    stays covered by one of the result."""
    current = sorted(set(folders), key=lambda p: (len(p.parts), str(p)))
    while len(current) > limit:
        deepest = max(len(p.parts) for p in current)
        if deepest <= len(root.parts) + 1:
            return [root]
        lifted = {p.parent if len(p.parts) == deepest else p for p in current}
        current = sorted(lifted, key=lambda p: (len(p.parts), str(p)))
    # a folder below another in the list is covered by it
    return [p for p in current if not any(q != p and q in p.parents for q in current)]


def _below(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or root in path.parents for root in roots)


# --------------------------------------------------------------------------- the sandbox


@dataclass
class Sandbox:
    """How processes are confined: a policy, resolved against this machine on first use.

    ``workspace`` is the writable root (None: each call's working directory);
    ``writable_paths`` are writable too; ``network`` keeps the network. ``bwrap_path`` is
    the search path for ``bwrap`` (default ``$PATH``). ``protected_paths`` are protected
    beyond `skillkit.protected`'s names; ``masked_paths`` are hidden behind empty mounts
    (default: `DEFAULT_MASKED_PATHS` for the user's home), and so is every file or folder
    called one of ``masked_names`` inside the workspace (see `mask`).
    ``additional_workspaces`` are further workspace folders (an editor's): writable as
    the workspace is, and searched for protected paths and masked names as it is. Safe
    to share
    between runtimes; `close` removes the private ``/tmp`` directory (also done when the
    sandbox is garbage collected or the interpreter exits).
    """

    mode: SandboxMode = "auto"
    workspace: Path | None = None
    network: bool = False
    writable_paths: tuple[Path, ...] = ()
    bwrap_path: str | None = None
    protected_paths: tuple[Path, ...] = ()
    masked_paths: tuple[Path, ...] = field(default_factory=lambda: default_masked_paths())
    masked_names: tuple[str, ...] = ()
    finder: ProtectedFinder = field(default_factory=ProtectedFinder, repr=False)
    additional_workspaces: tuple[Path, ...] = ()
    _exposed: set[Path] = field(default_factory=set, init=False, repr=False)
    _resolved: Bubblewrap | str | None = field(default=None, init=False, repr=False)
    _tmp: str | None = field(default=None, init=False, repr=False)
    _finalizer: weakref.finalize[[str], Sandbox] | None = field(
        default=None, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if not is_sandbox_mode(self.mode):
            raise ValueError(f"sandbox mode must be one of {', '.join(SANDBOX_MODES)}")
        if self.workspace is not None:
            self.workspace = Path(os.path.abspath(self.workspace))

    @classmethod
    def from_settings(
        cls, settings: SandboxSettings, *, workspace: str | os.PathLike[str] | None = None
    ) -> Sandbox:
        """The sandbox the settings ask for, with ``workspace`` writable."""
        return cls(
            mode=settings.mode,
            workspace=Path(workspace) if workspace is not None else None,
            network=settings.network,
            writable_paths=settings.writable_paths,
            protected_paths=settings.protected_paths,
            masked_paths=settings.masked_paths,
        )

    @classmethod
    def disabled(cls) -> Sandbox:
        """No confinement at all (mode ``off``)."""
        return cls(mode="off")

    def mask(
        self,
        paths: Iterable[str | os.PathLike[str]] = (),
        *,
        names: Iterable[str] = (),
    ) -> None:
        """Hide ``paths`` (absolute) and every file or folder in the workspace called one
        of ``names`` from every later command, behind empty mounts. The assembly passes
        the paths of the permission rules that deny reading here."""
        added = [Path(os.path.abspath(p)) for p in paths]
        self.masked_paths = tuple(dict.fromkeys((*self.masked_paths, *added)))
        self.masked_names = tuple(dict.fromkeys((*self.masked_names, *names)))

    @property
    def bubblewrap(self) -> Bubblewrap | None:
        """The bubblewrap in use, or None when commands run unconfined."""
        found = self._resolve()
        return found if isinstance(found, Bubblewrap) else None

    @property
    def active(self) -> bool:
        """True when commands run inside the sandbox."""
        return self.bubblewrap is not None

    def _resolve(self) -> Bubblewrap | str:
        if self.mode == "off":
            return "sandbox is off"
        if self._resolved is None:
            self._resolved = find_bubblewrap(self.bwrap_path)
        return self._resolved

    def check(self) -> None:
        """Raise `SandboxUnavailable` (one line) when the mode is ``on`` and no sandbox
        can run here; otherwise return quietly."""
        found = self._resolve()
        if self.mode == "on" and not isinstance(found, Bubblewrap):
            raise SandboxUnavailable(f"sandbox is on but unavailable: {found}")

    def describe(self) -> str:
        """One line for ``doctor`` and status displays, e.g. ``bubblewrap 0.8.0 (auto)``
        or ``none — bwrap not found; install the bubblewrap package``."""
        found = self._resolve()
        if isinstance(found, Bubblewrap):
            extra = ", network allowed" if self.network else ""
            return f"bubblewrap {found.version} ({self.mode}{extra})"
        if self.mode == "off":
            return "none (off)"
        if self.mode == "on":
            return f"unavailable — commands are refused: {found}"
        return f"none — {found}"

    def expose(self, path: str | os.PathLike[str]) -> None:
        """Make ``path`` visible (read-only) to every later command, also when it lies in
        the host's ``/tmp`` (the runtimes expose their spill-file directories this way, so
        a command can read the full output a truncated result points to)."""
        self._exposed.add(Path(os.path.abspath(path)))
        self._exposed.add(Path(os.path.realpath(path)))  # where a symlink leads, too

    def wrap(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        writable: Iterable[str | os.PathLike[str]] = (),
        confinement: Confinement | None = None,
    ) -> list[str]:
        """The argument list that runs ``argv`` inside the sandbox, from ``cwd`` (default:
        the current directory).

        With a read-only ``confinement`` nothing is writable but the private ``/tmp``.
        Otherwise (also with none: the default is a writable workspace) the workspace (or
        ``cwd`` when there is none), the sandbox's writable paths and ``writable`` stay
        writable — except the protected paths found in them (see the module docs), which
        stay read-only unless ``confinement.approved_paths`` names them. The masks apply
        in both. Paths that do not exist are left out. Unconfined (``argv`` unchanged)
        when no sandbox is in force; raises `SandboxUnavailable` when the mode is ``on``
        and none can run."""
        self.check()
        found = self._resolve()
        if not isinstance(found, Bubblewrap):
            return list(argv)
        where = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        base = self.workspace or where
        read_only = confinement is not None and confinement.read_only
        approved = [Path(p) for p in (confinement.approved_paths if confinement else ())]
        real_base = Path(os.path.realpath(base))
        if real_base != base:  # approved paths are real; the scan sees the workspace as named
            approved += [
                base / a.relative_to(real_base) for a in approved if real_base in a.parents
            ]
        readable = sorted(self._exposed | _needed_from_host_tmp(argv))
        roots: list[Path] = []
        if read_only:
            readable += [p for p in (base, where) if _HOST_TMP in p.parents]
        else:
            roots = [base, *self._additional(), *self.writable_paths]
            roots += [Path(os.path.abspath(p)) for p in writable]
            if not _below(where, roots):
                readable.append(where)  # e.g. a skill folder under the host's /tmp
        mounts = self._guarded(roots, base, read_only, readable, approved)
        if mounts is None:  # too much to protect: the call gets nothing writable
            return self.wrap(argv, cwd=where, confinement=Confinement(writes="none"))
        return _bwrap_argv(
            found.path,
            argv,
            cwd=where,
            tmp=self._private_tmp(),
            network=self.network,
            mounts=mounts,
        )

    def _guarded(
        self,
        roots: list[Path],
        base: Path,
        read_only: bool,
        readable: list[Path],
        approved: list[Path],
    ) -> _Mounts | None:
        """The mounts for one call: protected paths found in the writable ``roots`` (the
        scanned ones: the workspace and the call's own; the settings' writable paths are
        taken as the user wrote them) and the masks. None when there are more protected
        paths than `MAX_PROTECTED_MOUNTS`."""
        # The scan and every check below work on real paths (where bubblewrap's binds
        # land, and how approved paths are named): a workspace reached through a symlink
        # is scanned where it really is.
        real_roots = [Path(os.path.realpath(root)) for root in roots]
        extra = [Path(os.path.realpath(folder)) for folder in self._additional()]
        scanned = (
            [Path(os.path.realpath(base)), *extra] if read_only else real_roots[: 1 + len(extra)]
        )
        protected: list[Path] = []
        pinned: set[Path] = set()
        masked: list[Path] = []
        for root in scanned:
            if read_only and not self.masked_names:
                break
            tree = self.finder.find(root, masked_names=self.masked_names)
            masked += [Path(p) for p in tree.masked]
            if read_only:
                continue
            unscanned = _collapse([Path(p) for p in tree.unscanned], root, MAX_UNSCANNED_MOUNTS)
            protected += [Path(p) for p in tree.protected]
            protected = [p for p in protected if not _below(p, unscanned)]  # covered
            protected += unscanned
            pinned.update(Path(p) for p in tree.git_dirs)
        if not read_only:
            for path in self.protected_paths:
                real = Path(os.path.realpath(path))
                if _below(real, real_roots) and real.exists():
                    protected.append(real)
            protected = [p for p in protected if not _below(p, approved)]
            for path in protected:  # pin the folders on the way: none can be renamed
                for parent in path.parents:
                    if not _below(parent, real_roots) or parent in real_roots:
                        break
                    pinned.add(parent)
        if len(protected) + len(pinned) > MAX_PROTECTED_MOUNTS:
            return None
        reopened = [
            a for a in approved if a.exists() and _below(a, protected) and _below(a, real_roots)
        ]
        visible = [*roots, *readable]
        for path in (*self.masked_paths, *masked):
            if not os.path.lexists(path):
                continue  # most credential stores are not there: one lstat each
            for spelled in dict.fromkeys((path, Path(os.path.realpath(path)))):
                if spelled.exists() and (
                    _HOST_TMP not in spelled.parents or _below(spelled, visible)
                ):
                    masked.append(spelled)
        return _Mounts(
            readable=readable,
            writable=real_roots,  # a symlinked root is bound where it leads
            pinned=sorted(pinned, key=lambda p: len(p.parts)),
            protected=protected,
            reopened=reopened,
            masked=list(dict.fromkeys(masked)),
        )

    def _additional(self) -> list[Path]:
        """The additional workspace folders that exist (absolute)."""
        return [
            Path(os.path.abspath(folder))
            for folder in self.additional_workspaces
            if os.path.isdir(folder)
        ]

    def _private_tmp(self) -> Path:
        if self._tmp is None or not os.path.isdir(self._tmp):
            self._tmp = tempfile.mkdtemp(prefix="skillkit-sandbox-tmp-")
            if self._finalizer is not None:
                self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _remove_tree, self._tmp)
        return Path(self._tmp)

    def close(self) -> None:
        """Remove the private ``/tmp`` directory. The sandbox stays usable (a new one is
        made on the next call). Idempotent; never raises."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._tmp = None

    async def aclose(self) -> None:
        """`close`, as an awaitable (for a contributor's ``aclose``)."""
        self.close()


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
