"""The OS sandbox behind the permission gate: bubblewrap on Linux, where it works.

Every process SkillKit runs for the model — ``bash``, background tasks, monitors,
``grep``'s ``rg``, skill actions — can be wrapped by a `Sandbox`. Under bubblewrap
(``bwrap``) the command sees:

- the whole file system read-only, except the workspace and any extra writable paths;
- a private ``/tmp`` (one directory per `Sandbox`, shared by its calls, removed by
  `Sandbox.close`), a minimal ``/dev`` and a fresh ``/proc``;
- no network (a new network namespace with only loopback) unless network is allowed;
- a new PID namespace: when the call ends, every process it started is gone with it;
- no capabilities, even when SkillKit runs as root (so ``mount`` cannot undo the above),
  and a new session (no way to push keystrokes into the terminal).

The policy is one of three modes: ``auto`` (the default: sandboxed wherever bubblewrap
is installed and usable, unconfined elsewhere), ``on`` (fail closed: a command is refused
with `SandboxUnavailable` where no sandbox can run), ``off`` (never sandboxed). The
``sandbox`` section of a settings file chooses it::

    {"sandbox": {"mode": "auto", "network": false, "writable_paths": ["~/.cache/pip"]}}

`sandbox_settings` merges the sections of several settings files. Values from files in
the project (``project`` and ``local`` sources) may only tighten the policy until the
project is trusted: a stricter mode (``off`` < ``auto`` < ``on``), or network off; they
can never turn the network on, add writable paths or loosen the mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeGuard

__all__ = [
    "SANDBOX_MODES",
    "Bubblewrap",
    "Sandbox",
    "SandboxMode",
    "SandboxSettings",
    "SandboxUnavailable",
    "find_bubblewrap",
    "is_sandbox_mode",
    "load_sandbox_settings",
    "sandbox_settings",
]

SandboxMode = Literal["auto", "on", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("off", "auto", "on")
"""The modes from loosest to strictest."""

_PROJECT_SOURCES = frozenset({"project", "local"})
_INSTALL_HINT = "install the bubblewrap package"
_PROBE_TIMEOUT = 10.0


class SandboxUnavailable(OSError):
    """The policy is ``on`` but no sandbox can run here; the message is one line."""


def is_sandbox_mode(value: object) -> TypeGuard[SandboxMode]:
    """True when ``value`` names a mode (``auto``, ``on`` or ``off``)."""
    return isinstance(value, str) and value in SANDBOX_MODES


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The sandbox policy from settings (and the ``--sandbox`` flag).

    ``writable_paths`` are absolute. ``ignored`` are one-line notes about project values
    that were not applied because the project is not trusted; ``problems`` are one-line
    notes about malformed values (skipped).
    """

    mode: SandboxMode = "auto"
    network: bool = False
    writable_paths: tuple[Path, ...] = ()
    ignored: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def with_mode(self, mode: SandboxMode) -> SandboxSettings:
        """The same settings with ``mode`` chosen explicitly by the user (a flag)."""
        if not is_sandbox_mode(mode):
            raise ValueError(f"sandbox mode must be one of {', '.join(SANDBOX_MODES)}")
        return replace(self, mode=mode)


def _stricter(a: SandboxMode, b: SandboxMode) -> SandboxMode:
    return a if SANDBOX_MODES.index(a) >= SANDBOX_MODES.index(b) else b


def sandbox_settings(
    layers: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    trusted: bool,
    workspace: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
) -> SandboxSettings:
    """Merge the ``sandbox`` sections of already-loaded settings files. Never raises.

    ``layers`` are (source, whole settings mapping) in reading order (user first); the
    sources ``project`` and ``local`` are files inside the project. For the user's own
    files (any other source) a later value replaces an earlier one and writable paths
    add up; relative paths start at ``home``. For project files, unless ``trusted``,
    ``mode`` applies only if it is stricter, ``network`` only if false, and
    ``writable_paths`` never — each value skipped is named in `SandboxSettings.ignored`.
    Relative project paths start at ``workspace``.
    """
    home_dir = Path(home) if home is not None else Path.home()
    mode: SandboxMode = "auto"
    network = False
    paths: list[Path] = []
    ignored: list[str] = []
    problems: list[str] = []
    for source, data in layers:
        section = data.get("sandbox") if isinstance(data, Mapping) else None
        if section is None:
            continue
        where = f"{source} settings"
        if not isinstance(section, Mapping):
            problems.append(f"{where}: 'sandbox' must be an object")
            continue
        limited = source in _PROJECT_SOURCES and not trusted
        base = Path(workspace) if source in _PROJECT_SOURCES else home_dir
        for key in section:
            if key not in ("mode", "network", "writable_paths"):
                problems.append(f"{where}: unknown key sandbox.{key}")
        value = section.get("mode")
        if value is not None:
            if not is_sandbox_mode(value):
                problems.append(f"{where}: sandbox.mode must be one of {', '.join(SANDBOX_MODES)}")
            elif limited and _stricter(value, mode) != value:
                ignored.append(f"{where}: sandbox.mode={value} (the project is not trusted)")
            else:
                mode = value
        value = section.get("network")
        if value is not None:
            if not isinstance(value, bool):
                problems.append(f"{where}: sandbox.network must be true or false")
            elif limited and value:
                ignored.append(f"{where}: sandbox.network=true (the project is not trusted)")
            else:
                network = value
        value = section.get("writable_paths")
        if value is not None:
            if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
                problems.append(f"{where}: sandbox.writable_paths must be a list of paths")
            elif limited and value:
                ignored.append(f"{where}: sandbox.writable_paths (the project is not trusted)")
            else:
                for raw in value:
                    path = Path(os.path.normpath(base / os.path.expanduser(raw)))
                    if path not in paths:
                        paths.append(path)
    return SandboxSettings(mode, network, tuple(paths), tuple(ignored), tuple(problems))


def load_sandbox_settings(
    workspace: str | os.PathLike[str],
    *,
    trusted: bool,
    home: str | os.PathLike[str] | None = None,
) -> SandboxSettings:
    """Read ``~/.skillkit/settings.json``, ``<workspace>/.skillkit/settings.json`` and
    ``<workspace>/.skillkit/settings.local.json`` (those that exist) and merge their
    ``sandbox`` sections with `sandbox_settings`. A file that cannot be read or parsed is
    a problem in the result; never raises."""
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(workspace) / ".skillkit"
    files = [
        ("user", home_dir / ".skillkit" / "settings.json"),
        ("project", project / "settings.json"),
        ("local", project / "settings.local.json"),
    ]
    layers: list[tuple[str, Mapping[str, Any]]] = []
    problems: list[str] = []
    for source, path in files:
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            problems.append(f"{path}: cannot read: {' '.join(str(exc).split())[:200]}")
            continue
        if isinstance(data, Mapping):
            layers.append((source, data))
    merged = sandbox_settings(layers, trusted=trusted, workspace=workspace, home=home_dir)
    return replace(merged, problems=tuple(problems) + merged.problems)


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
            writable=[Path(scratch)],
            tmp=Path(scratch),
            network=False,
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


def _bwrap_argv(
    binary: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    writable: Iterable[Path],
    tmp: Path,
    network: bool,
    readable: Iterable[Path] = (),
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
    for path in readable:
        if path.exists():
            wrapped += ["--ro-bind", str(path), str(path)]
    seen: set[str] = set()
    for path in writable:
        text = str(path)
        if text not in seen and path.exists():
            seen.add(text)
            wrapped += ["--bind", text, text]
    wrapped += ["--chdir", str(cwd), "--", *argv]
    return wrapped


# --------------------------------------------------------------------------- the sandbox


@dataclass
class Sandbox:
    """How processes are confined: a policy, resolved against this machine on first use.

    ``workspace`` is the writable root (None: each call's working directory);
    ``writable_paths`` are writable too; ``network`` keeps the network. ``bwrap_path`` is
    the search path for ``bwrap`` (default ``$PATH``). Safe to share between runtimes;
    `close` removes the private ``/tmp`` directory (also done when the sandbox is garbage
    collected or the interpreter exits).
    """

    mode: SandboxMode = "auto"
    workspace: Path | None = None
    network: bool = False
    writable_paths: tuple[Path, ...] = ()
    bwrap_path: str | None = None
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
        )

    @classmethod
    def disabled(cls) -> Sandbox:
        """No confinement at all (mode ``off``)."""
        return cls(mode="off")

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
    ) -> list[str]:
        """The argument list that runs ``argv`` inside the sandbox, from ``cwd`` (default:
        the current directory). The workspace (or ``cwd`` when there is none), the
        sandbox's writable paths and ``writable`` stay writable; paths that do not exist
        are left out. Unconfined (``argv`` unchanged) when no sandbox is in force; raises
        `SandboxUnavailable` when the mode is ``on`` and none can run."""
        self.check()
        found = self._resolve()
        if not isinstance(found, Bubblewrap):
            return list(argv)
        where = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        roots = [self.workspace or where, *self.writable_paths]
        roots += [Path(os.path.abspath(p)) for p in writable]
        readable = sorted(self._exposed | _needed_from_host_tmp(argv))
        if not any(where == root or root in where.parents for root in roots):
            readable.append(where)  # e.g. a skill folder under the host's /tmp
        return _bwrap_argv(
            found.path,
            argv,
            cwd=where,
            writable=roots,
            tmp=self._private_tmp(),
            network=self.network,
            readable=readable,
        )

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
