"""What every SDK adapter shares (`SDKAdapter`): the key and its placeholder, the lazily
built client, a caller's own client. Each test runs against all three adapters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.adapters.sdk import NO_KEY_PLACEHOLDER, SDKAdapter, SDKClient
from tests.adapters.helpers import ask, collect, kinds
from tests.adapters.wire_formats import (
    ResponsesScript,
    anthropic_error,
    chat_text,
    message_end,
    message_start,
    openai_error,
    text_block,
)
from tests.adapters.wire_server import JSONReply, RecordedRequest, SSEReply, WireServer


@dataclass(frozen=True)
class Provider:
    """One adapter, its SDK client and how its wire format says "ok" and fails."""

    adapter_class: Callable[..., SDKAdapter[Any]]
    base_path: str
    key_env: str
    ok: Callable[[], SSEReply]
    server_error: Callable[[], JSONReply]
    client_class: Callable[..., SDKClient]

    def url(self, wire: WireServer) -> str:
        return wire.base_url + self.base_path


def key_sent(request: RecordedRequest) -> str:
    """The API key a request carried (``x-api-key`` or a bearer token)."""
    if "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    return request.headers["authorization"].removeprefix("Bearer ")


PROVIDERS = [
    Provider(
        OpenAIAdapter,
        "/v1",
        "OPENAI_API_KEY",
        lambda: SSEReply(chat_text("ok")),
        lambda: openai_error(500, "boom", "server_error"),
        openai.AsyncOpenAI,
    ),
    Provider(
        OpenAIResponsesAdapter,
        "/v1",
        "OPENAI_API_KEY",
        lambda: SSEReply(ResponsesScript().created().message(0, "m", "ok").completed().items),
        lambda: openai_error(500, "boom", "server_error"),
        openai.AsyncOpenAI,
    ),
    Provider(
        AnthropicAdapter,
        "",
        "ANTHROPIC_API_KEY",
        lambda: SSEReply([message_start(), *text_block(0, "ok"), *message_end()]),
        lambda: anthropic_error(500, "api_error", "boom"),
        anthropic.AsyncAnthropic,
    ),
]


@pytest.fixture(params=PROVIDERS, ids=["chat_completions", "responses", "messages"])
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Provider:
    """Each adapter in turn, with its key variable unset."""
    chosen: Provider = request.param
    monkeypatch.delenv(chosen.key_env, raising=False)
    return chosen


async def test_a_keyless_local_server_is_sent_the_placeholder_key(
    provider: Provider, wire: WireServer
) -> None:
    wire.reply(provider.ok())
    adapter = provider.adapter_class("m", base_url=provider.url(wire))

    events = await collect(adapter, ask(model="m"))

    assert kinds(events)[-1] == "done"
    assert key_sent(wire.requests[0]) == NO_KEY_PLACEHOLDER
    await adapter.aclose()


async def test_the_key_variable_is_read_again_at_each_call(
    provider: Provider, wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire.reply(provider.ok(), provider.ok())
    adapter = provider.adapter_class("m", base_url=provider.url(wire))

    monkeypatch.setenv(provider.key_env, "key-one")
    await collect(adapter, ask(model="m"))
    monkeypatch.setenv(provider.key_env, "key-two")
    await collect(adapter, ask(model="m"))

    assert [key_sent(r) for r in wire.requests] == ["key-one", "key-two"]
    await adapter.aclose()


async def test_a_callers_client_is_used_with_its_own_retries_turned_off(
    provider: Provider, wire: WireServer
) -> None:
    wire.reply(provider.server_error())
    own = provider.client_class(api_key="own-key", base_url=provider.url(wire), max_retries=5)
    adapter = provider.adapter_class("m", client=own, max_retries=0)

    events = await collect(adapter, ask(model="m"))

    assert kinds(events) == ["error"]
    assert len(wire.requests) == 1
    assert key_sent(wire.requests[0]) == "own-key"
    await own.close()
