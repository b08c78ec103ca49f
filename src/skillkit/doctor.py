"""What SkillKit sees on this machine, for ``skillkit doctor``.

`collect_report` gathers facts without side effects (it starts no server and reads no
file beyond package metadata and the default model's GGUF header). API keys are reported
as set or not set; their values never enter the report.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.model_registry import ModelRegistry

__all__ = ["DISTRIBUTION", "Section", "collect_report", "format_report", "register", "run_doctor"]


@dataclass(slots=True)
class Section:
    """A titled list of (label, value) rows. ``problems`` are one-line findings a user
    should act on."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def collect_report(
    environ: Mapping[str, str] | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    sandbox: str | None = None,
    home: str | os.PathLike[str] | None = None,
    models: ModelRegistry | None = None,
) -> list[Section]:
    """The doctor's sections: SkillKit, packages and extras, the local model, providers
    (those of ``models``; None: the default registry), the model a session started here
    would use (and what chose it), and the sandbox commands would run in from
    ``workspace`` (default: the current folder) with the ``--sandbox`` mode ``sandbox``
    (None: the settings files')."""
    env = os.environ if environ is None else environ
    return [
        _skillkit_section(),
        _packages_section(),
        _local_section(env),
        _providers(env, models),
        _model_section(env, workspace, home),
        _sandbox_section(workspace, sandbox, home),
    ]


def format_report(sections: list[Section]) -> str:
    """Plain text, one row per line, values aligned within a section."""
    lines: list[str] = []
    for section in sections:
        lines.append(section.title)
        width = max((len(label) for label, _ in section.rows), default=0)
        for label, value in section.rows:
            lines.append(f"  {label.ljust(width)}  {value}")
        for problem in section.problems:
            lines.append(f"  ! {problem}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


DISTRIBUTION = "skillkit-agent"
"""SkillKit's distribution name (what pip installs; the import name is ``skillkit``)."""


def _skillkit_section() -> Section:
    import platform

    section = Section("SkillKit")
    section.rows.append(("version", _version(DISTRIBUTION) or "unknown (not installed)"))
    section.rows.append(("python", f"{platform.python_version()} ({sys.executable})"))
    section.rows.append(("platform", f"{sys.platform} {platform.machine()}".strip()))
    return section


def _version(distribution: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _packages_section() -> Section:
    from importlib import metadata

    section = Section("Packages")
    for name in ("openai", "anthropic", "xllamacpp"):
        section.rows.append((name, _version(name) or "not installed"))
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        requirements = []
    extras: dict[str, list[str]] = {}
    for requirement in requirements:
        extra = _EXTRA.search(requirement)
        package = _NAME.match(requirement)
        if extra is None or package is None:
            continue
        extras.setdefault(extra.group(1), []).append(package.group(1))
    for extra_name, packages in sorted(extras.items()):
        missing = [package for package in packages if _version(package) is None]
        state = "installed" if not missing else f"not installed (missing {', '.join(missing)})"
        section.rows.append((f"extra [{extra_name}]", state))
    return section


def _local_section(env: Mapping[str, str]) -> Section:
    from skillkit.local.errors import LocalModelError
    from skillkit.local.gguf import read_gguf_info
    from skillkit.local.model import default_model, find_default_gguf
    from skillkit.local.runtime import default_threads, load_runtime, usable_cpus

    section = Section("Local model")
    model = default_model()
    section.rows.append(("default", f"{model.display_name} ({model.requirement})"))
    try:
        runtime = load_runtime()
        version = getattr(runtime, "__version__", None) or _version("xllamacpp") or "?"
        section.rows.append(("runtime", f"xllamacpp {version}"))
    except LocalModelError as exc:
        section.rows.append(("runtime", "unavailable"))
        section.problems.append(str(exc))
    try:
        path = find_default_gguf()
        info = read_gguf_info(path)
        size = info.file_size / 1_000_000
        section.rows.append(("weights", f"{path} ({size:.0f} MB)"))
        section.rows.append(
            ("gguf", f"{info.architecture}, context {info.context_length or '?'} tokens")
        )
    except LocalModelError as exc:
        section.rows.append(("weights", "not available"))
        section.problems.append(str(exc))
    try:
        threads = str(default_threads())
    except ValueError as exc:
        threads = "invalid"
        section.problems.append(str(exc))
    source = " (from SKILLKIT_LOCAL_THREADS)" if env.get("SKILLKIT_LOCAL_THREADS") else ""
    section.rows.append(("threads", f"{threads} of {usable_cpus()} CPUs{source}"))
    return section


def _providers(env: Mapping[str, str], models: ModelRegistry | None) -> Section:
    if models is None:
        from skillkit.model_registry import default_registry

        models = default_registry()
    section = Section("Providers")
    configured: list[str] = []
    for info in models.providers():
        label = info.display_name or info.name
        if info.local:
            where = f" ({info.base_url})" if info.base_url else ""
            section.rows.append((info.name, f"{label}: no key needed{where}"))
            continue
        if not info.api_key_env:
            continue
        states = [f"{name} {'set' if env.get(name) else 'not set'}" for name in info.api_key_env]
        if any(env.get(name) for name in info.api_key_env):
            configured.append(info.name)
        section.rows.append((info.name, f"{label}: {', '.join(states)}"))
    section.rows.append(("configured", ", ".join(configured) or "none (the local model is used)"))
    return section


def _model_section(
    env: Mapping[str, str],
    workspace: str | os.PathLike[str] | None,
    home: str | os.PathLike[str] | None,
) -> Section:
    """The model ``skillkit`` would use here without ``--model``, where that choice came
    from, its endpoint and whether its key is set (never the key)."""
    from pathlib import Path

    from skillkit.frontends.setup import AgentOptions, choose_model_for
    from skillkit.model_registry import ModelNotFoundError, resolve_model

    section = Section("Model")
    folder = Path(os.path.abspath(workspace if workspace is not None else os.getcwd()))
    options = AgentOptions(workspace=folder, home=Path(home) if home is not None else None)
    choice, settings = choose_model_for(options, folder, environ=env)
    section.rows.append(("model", choice.model))
    section.rows.append(("chosen by", choice.source))
    section.problems.extend(settings.problems)
    section.problems.extend(settings.ignored)
    prefix = choice.model.partition(":")[0]
    if prefix in ("local", "scripted"):
        return section
    try:
        resolved = resolve_model(choice.model, base_url=choice.base_url, env=env)
    except ModelNotFoundError as exc:
        section.problems.append(" ".join(str(exc).split()))
        return section
    section.rows.append(("endpoint", resolved.base_url or "the provider's default"))
    if choice.api_key_env:
        state = "set" if env.get(choice.api_key_env) else "not set"
        section.rows.append(("key", f"{choice.api_key_env} {state}"))
    elif resolved.api_key_env:
        state = "set" if resolved.api_key else "not set"
        section.rows.append(("key", f"{resolved.api_key_env} {state}"))
        if not resolved.api_key and not resolved.local:
            section.problems.append(f"set {resolved.api_key_env} to use {choice.model}")
    return section


def _sandbox_section(
    workspace: str | os.PathLike[str] | None,
    flag: str | None,
    home: str | os.PathLike[str] | None,
) -> Section:
    from skillkit.runtime.sandbox import Sandbox, is_sandbox_mode, load_sandbox_settings

    section = Section("Sandbox")
    folder = os.path.abspath(workspace if workspace is not None else os.getcwd())
    # Project settings are read as untrusted: the doctor shows the safe reading.
    settings = load_sandbox_settings(folder, trusted=False, home=home)
    origin = "settings files, default auto"
    if flag is not None and is_sandbox_mode(flag):
        settings = settings.with_mode(flag)
        origin = "--sandbox"
    sandbox = Sandbox.from_settings(settings, workspace=folder)
    section.rows.append(("sandbox", sandbox.describe()))
    section.rows.append(("mode", f"{settings.mode} ({origin})"))
    if sandbox.active:
        section.rows.append(("network", "allowed" if settings.network else "off"))
        writable = [folder, *(str(p) for p in settings.writable_paths)]
        section.rows.append(("writable", ", ".join(writable) + ", private /tmp"))
    elif settings.mode == "auto":
        section.problems.append(
            "commands run unconfined; install bubblewrap to confine them "
            "(Debian/Ubuntu: apt-get install bubblewrap)"
        )
    elif settings.mode == "on":
        section.problems.append("every command will be refused until bubblewrap works here")
    section.problems.extend(settings.problems)
    section.problems.extend(f"ignored {line}" for line in settings.ignored)
    return section


def register(subparsers: Any) -> None:
    """Add the ``doctor`` subcommand."""
    doctor = subparsers.add_parser(
        "doctor",
        help="show Python, packages, the local model, the model in use, the sandbox and "
        "which API keys are set",
        description="Report what SkillKit sees: Python, installed extras, the local model, "
        "the model a session here would use and what chose it, the sandbox in force, "
        "configured providers and which API-key variables are set (never their values).",
    )
    doctor.set_defaults(handler=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    """Print the report; exit 0 (problems are reported, not failures of the command)."""
    make_models = getattr(args, "make_model_registry", None)  # the assembly's registry
    models = make_models() if make_models is not None else None
    report = collect_report(sandbox=getattr(args, "sandbox", None), models=models)
    sys.stdout.write(format_report(report))
    return 0
