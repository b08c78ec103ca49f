"""The plugin layer's own slash commands, registered by the built-in plugin:
``/plugins`` lists the plugins and what each registered, ``/reload`` loads them again
with the skills. Both need the session's `PluginManager` (`CommandContext.manager`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from skillkit.commands.dispatch import Command, CommandContext, CommandError
from skillkit.extensions.hookspecs import LIFECYCLE_HOOKS
from skillkit.extensions.info import PluginFailure, PluginInfo
from skillkit.extensions.registries import Registries

__all__ = ["PluginHost", "format_plugins", "plugin_commands"]


@runtime_checkable
class PluginHost(Protocol):
    """What these commands read of a plugin manager (`PluginManager` is one)."""

    @property
    def registries(self) -> Registries: ...

    @property
    def failures(self) -> list[PluginFailure]: ...

    @property
    def notices(self) -> list[str]: ...

    def plugins(self) -> list[PluginInfo]: ...

    def registered_by(self, name: str) -> dict[str, list[str]]: ...

    def reload(self) -> list[str]: ...


def _manager(ctx: CommandContext) -> PluginHost:
    manager = ctx.require_manager()
    if not isinstance(manager, PluginHost):
        raise CommandError("plugins are not enabled in this session")
    return manager


def reload_command(ctx: CommandContext, args: str) -> str:
    manager = _manager(ctx)
    lines = manager.reload()
    plugins = len(manager.plugins())
    skills = manager.registries.skills
    summary = f"reloaded {plugins} plugin(s)"
    if skills is not None:
        summary += f" and {len(skills)} skill(s)"
    return "\n".join([summary, *(f"  {line}" for line in lines)])


def format_plugins(manager: PluginHost) -> str:
    """The ``/plugins`` listing: each plugin's name, version, origin and what it
    registered; then what other code registered under a name of its own (a frontend's
    commands: ``frontend:interactive (not a plugin)``); then failures and notices."""
    lines: list[str] = []
    for info in manager.plugins():
        version = f" {info.version}" if info.version else ""
        origin = info.origin + (f": {info.location}" if info.location else "")
        lines.append(f"{info.name}{version} ({origin})")
        for kind, names in manager.registered_by(info.name).items():
            lines.append(f"  {kind.replace('_', ' ')}: {', '.join(names)}")
        lifecycle = [h.removeprefix("skillkit_") for h in info.hooks if h in LIFECYCLE_HOOKS]
        if lifecycle:
            lines.append(f"  hooks: {', '.join(lifecycle)}")
    if not lines:
        lines.append("no plugins loaded")
    for source in _other_sources(manager):
        lines.append(f"{source} (not a plugin)")
        for kind, names in manager.registered_by(source).items():
            lines.append(f"  {kind.replace('_', ' ')}: {', '.join(names)}")
    if manager.failures:
        lines.append("Problems:")
        lines.extend(f"  {failure}" for failure in manager.failures)
    if manager.notices:
        lines.append("Notes:")
        lines.extend(f"  {notice}" for notice in manager.notices)
    return "\n".join(lines)


def _other_sources(manager: PluginHost) -> list[str]:
    """Named sources of registrations that are not loaded plugins."""
    registries = manager.registries
    found: set[str | None] = set()
    for registry in (registries.tools, registries.commands, registries.frontends):
        found.update(registry.source_of(name) for name in registry.names())
    found.update(registries.adapters.source_of(name) for name in registries.adapters.list())
    plugins = {info.name for info in manager.plugins()}
    return sorted(s for s in found if s is not None and s not in plugins)


def plugins_command(ctx: CommandContext, args: str) -> str:
    return format_plugins(_manager(ctx))


def plugin_commands() -> list[Command]:
    """New `Command` values for ``/reload`` and ``/plugins``."""
    return [
        Command("reload", "reload plugins and skills", reload_command),
        Command("plugins", "list the plugins and what each added", plugins_command),
    ]
