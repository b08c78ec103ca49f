"""`chat_sync` keeps what a runner holds between calls alive: an HTTP client made in the
first call still works in the second (one loop serves every synchronous call)."""

from __future__ import annotations

import asyncio
import threading

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.openai import OpenAIAdapter
from tests.adapters.wire_formats import chat_text
from tests.adapters.wire_server import SSEReply, WireServer


def test_two_sync_calls_reuse_one_http_client() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = asyncio.run_coroutine_threadsafe(WireServer().start(), loop).result(timeout=10)
    try:
        server.reply(SSEReply(chat_text("one")), SSEReply(chat_text("two")))
        adapter = OpenAIAdapter("gpt-4o", base_url=server.base_url + "/v1", api_key="sk-test")
        agent = AgentRunner(AgentConfig(model="openai:gpt-4o"), adapter=adapter)
        first = agent.chat_sync("hi")
        second = agent.chat_sync("again")
        assert (first.text, second.text) == ("one", "two")
        assert first.stop_reason == second.stop_reason == "stop"
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
