"""What the plugin manager reports about its plugins: `PluginInfo` for each one loaded,
`PluginFailure` for each one that failed."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PluginFailure", "PluginInfo"]


@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin that failed to import, to register, or in one of its hooks.

    ``stage`` is ``import``, ``register`` or ``hook``; ``hook`` names the hook for the
    last two (when known). ``str()`` is a one-line message naming the plugin.
    """

    plugin: str
    stage: str
    message: str
    hook: str | None = None

    def __str__(self) -> str:
        where = {"import": "failed to load", "register": "failed to register"}.get(
            self.stage, "failed"
        )
        in_hook = f" in {self.hook}" if self.hook else ""
        return f"plugin '{self.plugin}' {where}{in_hook}: {self.message}"


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A loaded plugin. ``origin`` is ``built-in``, ``entry point``, ``project`` or
    ``code`` (registered by a program); ``location`` is the distribution, file or module
    it came from; ``hooks`` the hooks it implements."""

    name: str
    origin: str
    version: str | None = None
    location: str = ""
    hooks: tuple[str, ...] = ()
