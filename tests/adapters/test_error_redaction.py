"""Error texts from providers never carry an API key: the key sent with the request,
keys from the environment and keys passed in code are redacted."""

from __future__ import annotations

import pytest

from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.errors import ProviderLabel, classify_failure
from skillkit.adapters.openai import OpenAIAdapter
from tests.adapters.helpers import ask, collect, sdk_adapter
from tests.adapters.wire_formats import anthropic_error, openai_error
from tests.adapters.wire_server import WireServer

SENT_KEY = "sk-test-sent-key-4f9a2c7e1b"
ENV_TOKEN = "ghp_environment_token_99887766"


async def test_a_server_echoing_the_key_sent_gets_it_redacted(wire: WireServer) -> None:
    wire.reply(openai_error(401, f"Incorrect API key provided: {SENT_KEY}.", "invalid_api_key"))
    adapter = sdk_adapter(OpenAIAdapter, "gpt-test", wire.base_url, SENT_KEY)

    events = await collect(adapter, ask())

    message = events[-1].error or ""
    assert events[-1].type == "error" and "401" in message
    assert SENT_KEY not in message
    assert "[REDACTED:" in message
    assert wire.requests[0].headers.get("authorization") == f"Bearer {SENT_KEY}"


async def test_environment_secrets_are_redacted_from_anthropic_errors(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", ENV_TOKEN)
    wire.reply(anthropic_error(400, "invalid_request_error", f"bad header value {ENV_TOKEN}"))
    adapter = sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, SENT_KEY)

    events = await collect(adapter, ask())

    message = events[-1].error or ""
    assert ENV_TOKEN not in message
    assert "[REDACTED:GITHUB_TOKEN]" in message


class _Failure(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.status_code = 500
        self.body = {"error": {"message": text, "type": "server_error"}}


def test_secrets_passed_by_the_caller_are_redacted() -> None:
    label = ProviderLabel("OpenAI", "OPENAI_API_KEY", "http://127.0.0.1:9", "m")
    failure = classify_failure(
        _Failure("upstream said no to code-key-0123456789"),
        label,
        secrets={"api_key": "code-key-0123456789"},
    )
    assert "code-key-0123456789" not in failure.message
    assert "[REDACTED:api_key]" in failure.message
    assert failure.kind == "server"


def test_short_environment_values_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRY_TOKEN", "500")
    label = ProviderLabel("OpenAI", "OPENAI_API_KEY")
    failure = classify_failure(_Failure("status 500 from upstream"), label)
    assert "status 500 from upstream" in failure.message
