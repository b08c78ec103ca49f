"""Sandbox settings: the ``sandbox`` section of the settings files, merged safely.

::

    {"sandbox": {"mode": "auto", "network": false, "writable_paths": ["~/.cache/pip"],
                 "protected_paths": ["deploy/hooks"], "masked_paths": ["~/.config/op"],
                 "unmasked_paths": ["~/.npmrc"]}}

`sandbox_settings` merges the sections of several settings files. Values from files in
the project (``project`` and ``local`` sources) may only tighten the policy until the
project is trusted: a stricter mode (``off`` < ``auto`` < ``on``), or network off; they
can never turn the network on, add writable paths or loosen the mode. Project files may
add protected and masked paths (trusted or not) but never remove one:
``unmasked_paths`` (which takes entries off `DEFAULT_MASKED_PATHS`) is read from the
user's own files only. Everything here is re-exported by `skillkit.runtime.sandbox`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeGuard

__all__ = [
    "DEFAULT_MASKED_PATHS",
    "SANDBOX_MODES",
    "SandboxMode",
    "SandboxSettings",
    "default_masked_paths",
    "is_sandbox_mode",
    "load_sandbox_settings",
    "sandbox_settings",
]

SandboxMode = Literal["auto", "on", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("off", "auto", "on")
"""The modes from loosest to strictest."""

_PROJECT_SOURCES = frozenset({"project", "local"})

DEFAULT_MASKED_PATHS: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/git/credentials",
    "~/.docker/config.json",
    "~/.kube",
    "~/.gnupg",
    "~/.netrc",
    "~/.npmrc",
    "~/.pypirc",
    "~/.git-credentials",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
)
"""Credential stores every sandbox hides behind an empty mount (``~`` is the user's
home). The user's settings add to it (``sandbox.masked_paths``) or take entries off it
(``sandbox.unmasked_paths``); a project's settings can only add."""


def is_sandbox_mode(value: object) -> TypeGuard[SandboxMode]:
    """True when ``value`` names a mode (``auto``, ``on`` or ``off``)."""
    return isinstance(value, str) and value in SANDBOX_MODES


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
    protected_paths: tuple[Path, ...] = ()
    masked_paths: tuple[Path, ...] = field(default_factory=lambda: default_masked_paths())
    """The credential stores and further paths to mask: `DEFAULT_MASKED_PATHS` (with the
    home the settings were read for) plus ``masked_paths``, minus ``unmasked_paths``."""

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
    ``protected_paths`` and ``masked_paths`` add up from every file; ``unmasked_paths``
    counts from the user's own files only. Relative project paths start at ``workspace``.
    """
    home_dir = Path(home) if home is not None else Path.home()
    mode: SandboxMode = "auto"
    network = False
    paths: list[Path] = []
    protected: list[Path] = []
    masked: list[Path] = [_expand(raw, home_dir, home_dir) for raw in DEFAULT_MASKED_PATHS]
    unmasked: list[Path] = []
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
            if key not in _KEYS:
                problems.append(f"{where}: unknown key sandbox.{key}")
        mode, network = _switches(section, where, limited, mode, network, ignored, problems)
        value = section.get("writable_paths")
        if value is not None:
            if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
                problems.append(f"{where}: sandbox.writable_paths must be a list of paths")
            elif limited and value:
                ignored.append(f"{where}: sandbox.writable_paths (the project is not trusted)")
            else:
                for raw in value:
                    path = _expand(raw, base, home_dir)
                    if path not in paths:
                        paths.append(path)
        for key, into in (("protected_paths", protected), ("masked_paths", masked)):
            value = section.get(key)
            if value is None:
                continue
            if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
                problems.append(f"{where}: sandbox.{key} must be a list of paths")
                continue
            into.extend(_expand(raw, base, home_dir) for raw in value)
        value = section.get("unmasked_paths")
        if value is not None:
            if source in _PROJECT_SOURCES:
                ignored.append(f"{where}: sandbox.unmasked_paths (only the user's settings)")
            elif not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
                problems.append(f"{where}: sandbox.unmasked_paths must be a list of paths")
            else:
                unmasked.extend(_expand(raw, base, home_dir) for raw in value)
    return SandboxSettings(
        mode,
        network,
        tuple(paths),
        tuple(ignored),
        tuple(problems),
        tuple(dict.fromkeys(protected)),
        tuple(p for p in dict.fromkeys(masked) if p not in unmasked),
    )


def _switches(
    section: Mapping[str, Any],
    where: str,
    limited: bool,
    mode: SandboxMode,
    network: bool,
    ignored: list[str],
    problems: list[str],
) -> tuple[SandboxMode, bool]:
    """``mode`` and ``network`` after one file's section: a wrong value is a problem, a
    looser one from a ``limited`` (untrusted project) file is ignored."""
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
    return mode, network


_KEYS = frozenset(
    {"mode", "network", "writable_paths", "protected_paths", "masked_paths", "unmasked_paths"}
)


def _expand(raw: str, base: Path, home: Path) -> Path:
    """``raw`` as an absolute, normalised path: ``~`` is ``home``, relative is ``base``."""
    if raw == "~" or raw.startswith("~/"):
        return Path(os.path.normpath(str(home) + raw[1:]))
    return Path(os.path.normpath(base / os.path.expanduser(raw)))


def default_masked_paths(home: str | os.PathLike[str] | None = None) -> tuple[Path, ...]:
    """`DEFAULT_MASKED_PATHS` with ``~`` as ``home`` (default: the user's home)."""
    home_dir = Path(home) if home is not None else Path.home()
    return tuple(_expand(raw, home_dir, home_dir) for raw in DEFAULT_MASKED_PATHS)


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
