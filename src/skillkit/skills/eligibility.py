"""Eligibility: what a skill needs from the machine before it is offered to the model.

A skill declares its requirements under ``metadata.skillkit`` (SkillKit's own form)::

    metadata:
      skillkit:
        requires:
          os: [linux, darwin]        # any of these operating systems
          bins: [git]                # every one of these executables on PATH
          any-bins: [rg, grep]       # at least one of these on PATH
          env: [GITHUB_TOKEN]        # these environment variables set and non-empty
          config: [github.enabled]   # these configuration keys set and truthy
          python: [yaml]             # these Python packages importable
        always: false                # true: skip every check except os

The widely used ``metadata.openclaw`` form (``os``, ``always``, ``requires.bins``,
``requires.anyBins``, ``requires.env``, ``requires.config``), and its older names
``clawdbot``, ``moltbot`` and ``clawdis``, are read the same way when no
``metadata.skillkit.requires`` is present, so public skills gate correctly.

`unmet_requirements` lists, in words, each requirement the `Environment` does not meet.

A ``python`` requirement is checked without running any code: the module is looked up
the way ``import`` would find it (`importlib.machinery.PathFinder` over ``sys.path``,
then the interpreter's other finders), but never imported — a package's
``__init__.py`` does not run even for a dotted name (``pkg.sub`` is looked up inside
``pkg``'s folders). The working directory and the project folder are not searched: a
module sitting in the project does not make a skill eligible, and is never executed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillkit.skills.diagnostics import Diagnostic, Findings

__all__ = [
    "GATING_KEYS",
    "Environment",
    "Requirements",
    "current_platform",
    "parse_requirements",
    "unmet_requirements",
]

#: ``metadata`` keys read for requirements, first found wins.
GATING_KEYS = ("skillkit", "openclaw", "clawdbot", "moltbot", "clawdis")

_OS_ALIASES = {
    "linux": "linux",
    "darwin": "darwin",
    "macos": "darwin",
    "mac": "darwin",
    "osx": "darwin",
    "win32": "win32",
    "windows": "win32",
    "win": "win32",
}

_LIST_KEYS = {
    "os": "os",
    "bins": "bins",
    "anyBins": "any_bins",
    "any-bins": "any_bins",
    "any_bins": "any_bins",
    "env": "env",
    "config": "config",
    "python": "python",
}


@dataclass(frozen=True, slots=True)
class Requirements:
    """What a skill needs. Empty tuples mean no requirement of that kind.

    ``source`` names the ``metadata`` key it was read from (``"skillkit"``,
    ``"openclaw"``...), or is empty when the skill declares nothing.
    """

    os: tuple[str, ...] = ()
    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    python: tuple[str, ...] = ()
    always: bool = False
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            k.replace("_", "-"): list(getattr(self, k))
            for k in ("os", "bins", "any_bins", "env", "config", "python")
            if getattr(self, k)
        }
        if self.always:
            out["always"] = True
        return out


def current_platform() -> str:
    """This machine as ``linux``, ``darwin`` or ``win32`` (else `sys.platform`)."""
    if sys.platform.startswith("linux"):
        return "linux"
    return sys.platform


# --------------------------------------------------------------------------- parsing


def parse_requirements(metadata: Mapping[str, Any], findings: Findings) -> Requirements:
    """Read the requirements from a skill's (plain) ``metadata``; never raises.

    Malformed declarations are findings; in lenient mode the malformed part is dropped.
    """
    for key in GATING_KEYS:
        block = metadata.get(key)
        if block is None:
            continue
        where = f"metadata.{key}"
        if not isinstance(block, Mapping):
            findings.problem(where, "must be a mapping; ignored")
            continue
        if key == "skillkit" and "requires" not in block and "always" not in block:
            continue  # a SkillKit block with only actions: look at the other forms
        if key == "skillkit":
            return _parse_block(block, key, where, findings)
        # Another client's namespace: what SkillKit does not understand there is that
        # client's business — a warning at most, also in strict mode.
        theirs = Findings(findings.path, strict=False)
        requirements = _parse_block(block, key, where, theirs)
        findings.items.extend(
            Diagnostic(d.path, d.field, d.message, "warning") for d in theirs.items
        )
        return requirements
    return Requirements()


def _parse_block(
    block: Mapping[str, Any], source: str, where: str, findings: Findings
) -> Requirements:
    values: dict[str, list[str]] = {k: [] for k in set(_LIST_KEYS.values())}
    requires = block.get("requires", {})
    if requires is None:
        requires = {}
    if not isinstance(requires, Mapping):
        findings.problem(f"{where}.requires", "must be a mapping; ignored")
        requires = {}
    parts: list[tuple[str, Mapping[str, Any]]] = [(f"{where}.requires", requires)]
    if "os" in block:
        parts.append((where, {"os": block["os"]}))
    for prefix, mapping in parts:
        for key, raw in mapping.items():
            target = _LIST_KEYS.get(key)
            if target is None:
                if prefix.endswith("requires"):
                    known = "os, bins, any-bins, env, config, python"
                    findings.problem(f"{prefix}.{key}", f"unknown requirement (known: {known})")
                continue
            items = _names(raw, f"{prefix}.{key}", findings)
            if target == "os":
                items = _os_names(items, f"{prefix}.{key}", findings)
            values[target].extend(items)
    always = block.get("always", False)
    if not isinstance(always, bool):
        findings.problem(f"{where}.always", "must be true or false; ignored")
        always = False
    return Requirements(
        os=tuple(dict.fromkeys(values["os"])),
        bins=tuple(dict.fromkeys(values["bins"])),
        any_bins=tuple(dict.fromkeys(values["any_bins"])),
        env=tuple(dict.fromkeys(values["env"])),
        config=tuple(dict.fromkeys(values["config"])),
        python=tuple(dict.fromkeys(values["python"])),
        always=always,
        source=source,
    )


def _names(raw: Any, where: str, findings: Findings) -> list[str]:
    """A list of non-empty names; a string is split at commas (``"git,jq"`` is two
    names, as other clients read it)."""
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        findings.problem(where, "must be a list of names; ignored")
        return []
    names: list[str] = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            names.extend(part.strip() for part in item.split(",") if part.strip())
        else:
            findings.problem(where, f"must hold only non-empty names (got {item!r}); skipped")
    return names


def _os_names(items: list[str], where: str, findings: Findings) -> list[str]:
    out: list[str] = []
    for item in items:
        known = _OS_ALIASES.get(item.lower())
        if known is None:
            findings.problem(where, f"unknown operating system {item!r} (use linux, darwin, win32)")
            out.append(item.lower())
        else:
            out.append(known)
    return out


# --------------------------------------------------------------------------- checking


@dataclass
class Environment:
    """What requirements are checked against.

    Defaults describe this process: its platform, ``os.environ``, its ``PATH`` and
    importable packages. ``config`` is the SkillKit configuration (a nested mapping;
    ``config`` requirements are dotted paths into it). ``project_dir`` (and the working
    directory) are never searched for Python modules. Lookups are cached, so build a new
    `Environment` to see a newly installed executable.
    """

    platform: str = field(default_factory=current_platform)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    config: Mapping[str, Any] = field(default_factory=dict)
    path: str | None = None
    which: Callable[[str], str | None] | None = None
    _bins: dict[str, bool] = field(default_factory=dict, repr=False)
    _packages: dict[str, bool] = field(default_factory=dict, repr=False)
    project_dir: str | None = None

    def has_executable(self, name: str) -> bool:
        hit = self._bins.get(name)
        if hit is None:
            if self.which is not None:
                hit = self.which(name) is not None
            else:
                search = self.path if self.path is not None else self.environ.get("PATH", "")
                hit = shutil.which(name, path=search) is not None
            self._bins[name] = hit
        return hit

    def has_env(self, name: str) -> bool:
        return bool(self.environ.get(name))

    def has_config(self, key: str) -> bool:
        node: Any = self.config
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return False
            node = node[part]
        return bool(node)

    def has_python_package(self, name: str) -> bool:
        """Whether module ``name`` (dotted names allowed) can be found; never imports or
        executes anything, and never finds a module in the project or working folder."""
        hit = self._packages.get(name)
        if hit is None:
            try:
                hit = _find_module(name, _search_path(self.project_dir))
            except Exception:  # a broken finder or path entry: not available
                hit = False
            self._packages[name] = hit
        return hit


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _search_path(project_dir: str | None) -> list[str]:
    """``sys.path`` without the entries that mean the working directory or the project."""
    excluded = {os.path.realpath(os.getcwd())}
    if project_dir is not None:
        excluded.add(os.path.realpath(project_dir))
    kept: list[str] = []
    for entry in sys.path:
        if not isinstance(entry, str) or entry in ("", "."):
            continue
        if os.path.realpath(entry) in excluded:
            continue
        kept.append(entry)
    return kept


def _find_module(name: str, path: list[str]) -> bool:
    """Find ``name`` without importing it: a module already imported counts; else the
    top-level module on ``path`` (then with the interpreter's other finders: built-in,
    frozen, editable installs), each further part inside the folders of the package
    found so far."""
    if not _MODULE_NAME.fullmatch(name):
        return False
    if name in sys.modules:  # imported already (by SkillKit itself): nothing to run
        return True
    parent = name.rpartition(".")[0]
    if parent and parent in sys.modules:  # its parent is loaded: finding it runs nothing
        return importlib.util.find_spec(name) is not None
    top, *rest = name.split(".")
    if top in sys.builtin_module_names:
        return not rest
    spec = importlib.machinery.PathFinder.find_spec(top, path)
    if spec is None:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None or _is_path_based(finder):
                continue
            spec = find(top, None)
            if spec is not None:
                break
    found = top
    for part in rest:
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            return False
        found = f"{found}.{part}"
        spec = importlib.machinery.PathFinder.find_spec(found, list(locations))
    return spec is not None


def _is_path_based(finder: object) -> bool:
    """Finders that search ``sys.path`` themselves (PathFinder and look-alikes) would
    see the working directory again; they are skipped."""
    return finder is importlib.machinery.PathFinder or (
        isinstance(finder, type) and issubclass(finder, importlib.machinery.PathFinder)
    )


def unmet_requirements(requirements: Requirements | None, env: Environment) -> list[str]:
    """Each requirement ``env`` does not meet, as a sentence; empty when eligible.

    ``always`` skips every check except the operating system.
    """
    if requirements is None:
        return []
    unmet: list[str] = []
    if requirements.os and env.platform not in requirements.os:
        wanted = " or ".join(requirements.os)
        unmet.append(f"needs operating system {wanted} (this is {env.platform})")
    if requirements.always:
        return unmet
    for name in requirements.bins:
        if not env.has_executable(name):
            unmet.append(f"needs executable '{name}' on PATH")
    if requirements.any_bins and not any(env.has_executable(n) for n in requirements.any_bins):
        listed = ", ".join(f"'{n}'" for n in requirements.any_bins)
        unmet.append(f"needs one of the executables {listed} on PATH")
    for name in requirements.env:
        if not env.has_env(name):
            unmet.append(f"needs environment variable {name}")
    for key in requirements.config:
        if not env.has_config(key):
            unmet.append(f"needs configuration key '{key}' to be set")
    for package in requirements.python:
        if not env.has_python_package(package):
            unmet.append(f"needs Python package '{package}'")
    return unmet
