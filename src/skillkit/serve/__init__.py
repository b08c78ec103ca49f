"""``skillkit serve``: one agent session over HTTP and Server-Sent Events, with a web page.

`WebServer` serves any `ServedSession` (an `AgentSession`, or anything with its
``handle`` and ``subscribe``) on 127.0.0.1, every request guarded by a random token;
`skillkit.serve.cli` is the ``skillkit serve`` command. See docs/serve.md.

Names are loaded on first use: the ``skillkit`` command imports `skillkit.serve.cli` to
build its parser, and that must not import the server.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["ServedSession", "WebServer", "new_token"]

_EXPORTS = {
    "ServedSession": "skillkit.serve.protocol",
    "WebServer": "skillkit.serve.server",
    "new_token": "skillkit.serve.server",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillkit.serve' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from skillkit.serve.protocol import ServedSession
    from skillkit.serve.server import WebServer, new_token
