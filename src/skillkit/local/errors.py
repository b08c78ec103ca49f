"""Errors of the embedded local model, each with a one-line message a user can act on.

Every error here is a `LocalModelError`; ``str(error)`` is one line that says what went
wrong and what to do about it, so a command-line caller prints it as is.
"""

from __future__ import annotations

__all__ = [
    "LocalModelError",
    "ModelFileError",
    "ModelNotInstalledError",
    "PortInUseError",
    "RuntimeUnavailableError",
    "ServerStartError",
]


class LocalModelError(Exception):
    """The local model cannot be used. The message is one line, fit to show a user."""


class ModelFileError(LocalModelError):
    """A GGUF file is missing, unreadable, or not a valid GGUF file."""


class ModelNotInstalledError(ModelFileError):
    """The default model's package is not installed; the message names the command."""


class PortInUseError(LocalModelError):
    """Another program listens on the requested port."""


class RuntimeUnavailableError(LocalModelError):
    """The inference runtime (``xllamacpp``) cannot be imported on this machine: not
    installed, no prebuilt wheel for the platform, or a system library is missing."""


class ServerStartError(LocalModelError):
    """The runtime refused to start the server or it did not become healthy in time."""
