"""``skillkit serve``: one agent session over HTTP and Server-Sent Events, with a web page.

`WebServer` serves any `ServedSession` (an `AgentSession`, or anything with its
``handle`` and ``subscribe``) on 127.0.0.1, every request guarded by a random token;
`skillkit.serve.cli` is the ``skillkit serve`` command. See docs/serve.md.
"""

from __future__ import annotations

from skillkit.serve.protocol import ServedSession
from skillkit.serve.server import WebServer, new_token

__all__ = ["ServedSession", "WebServer", "new_token"]
