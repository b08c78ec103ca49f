"""JSONL RPC: drive SkillKit from another program over a pipe.

``skillkit --mode rpc`` reads one JSON command per line on stdin and writes, one JSON
record per line on stdout, a header, the response to each command, and the session's
events and ``ui_request`` records as they happen (`serve_rpc`; the records are
described in ``docs/faces.md``). `RpcClient` starts such a process and drives it from
asyncio code.
"""

from __future__ import annotations

from skillkit.rpc.client import RpcClient, RpcError
from skillkit.rpc.framing import MAX_LINE_BYTES
from skillkit.rpc.server import serve_rpc

__all__ = ["MAX_LINE_BYTES", "RpcClient", "RpcError", "serve_rpc"]
