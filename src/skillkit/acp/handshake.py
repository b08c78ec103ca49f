"""The answer to ``initialize``, without the ACP SDK.

Editors start ``skillkit acp`` and send ``initialize`` at once; importing the SDK (its
protocol schema is a few thousand pydantic models) costs more than the rest of start-up.
So the first ``initialize`` is answered here, from plain data, before the SDK is
imported; `SkillKitAcpAgent.initialize` answers any later one from the same data.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROTOCOL_VERSION", "initialize_answer", "initialize_result"]

PROTOCOL_VERSION = 1
"""The ACP version SkillKit speaks (the SDK's ``acp.PROTOCOL_VERSION``; a test keeps
them equal)."""


def initialize_result(protocol_version: int, skillkit_version: str) -> dict[str, Any]:
    """The ``initialize`` result for a client asking for ``protocol_version``."""
    return {
        "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "fork": {},
                "close": {},
                "additionalDirectories": {},
            },
        },
        "authMethods": [],
        "agentInfo": {"name": "skillkit", "title": "SkillKit", "version": skillkit_version},
    }


def initialize_answer(params: object, skillkit_version: str) -> dict[str, Any]:
    """``{"result": ...}`` for well-formed ``initialize`` params, else ``{"error": ...}``
    (invalid params, as the SDK would answer)."""
    if not isinstance(params, dict):
        return _invalid("params must be an object")
    version = params.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        return _invalid("protocolVersion must be a non-negative integer")
    capabilities = params.get("clientCapabilities")
    if capabilities is not None and not isinstance(capabilities, dict):
        return _invalid("clientCapabilities must be an object")
    return {"result": initialize_result(version, skillkit_version)}


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"code": -32602, "message": f"Invalid params: {message}"}}
