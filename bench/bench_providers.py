"""SkillKit's added cost over the bare official SDKs, on the same local stream.

For OpenAI Chat Completions and Anthropic Messages, a local server (the test suite's
`WireServer`, run in its own process so it does not share the event loop) streams a
reply of ``--deltas`` text deltas. Each run consumes it once with the bare SDK (reading
every delta's text) and once through SkillKit's adapter (reading every event), in
alternating order; time to first token is measured the same way on short streams.
Printed: medians for both, and SkillKit's added cost as the median over the paired
runs (targets: at most 5% on the whole stream, at most 1 ms on time to first token).
Last, SkillKit's own work is timed alone, on parsed chunks replayed without HTTP.

    .venv/bin/python bench/bench_providers.py [--runs 60] [--deltas 1000] [--first-token-runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import anthropic  # noqa: E402
import openai  # noqa: E402

from skillkit.adapters.anthropic import AnthropicAdapter  # noqa: E402
from skillkit.adapters.errors import RetryPolicy  # noqa: E402
from skillkit.adapters.openai import OpenAIAdapter, OpenAICompat, _ChatTranslator  # noqa: E402
from skillkit.adapters.streaming import drive_stream  # noqa: E402
from skillkit.models import LLMRequest, UserMessage  # noqa: E402

Timed = tuple[float, float]  # (time to first token, total), seconds


# --------------------------------------------------------------------------- server process


def _serve(connection: Connection, deltas: int, replies: int) -> None:
    """Serve ``replies`` streams of ``deltas`` text deltas per endpoint, in order."""
    from tests.adapters.wire_formats import chat_text, message_end, message_start, text_block
    from tests.adapters.wire_server import SSEReply, WireServer

    async def main() -> None:
        async with WireServer() as server:
            pieces = [f"tok{i} " for i in range(deltas)]
            for _ in range(replies):
                server.reply(SSEReply(chat_text(*pieces)), path="/v1/chat/completions")
                server.reply(
                    SSEReply([message_start(), *text_block(0, *pieces), *message_end()]),
                    path="/v1/messages",
                )
            connection.send(server.base_url)
            await asyncio.get_running_loop().run_in_executor(None, connection.recv)

    asyncio.run(main())


# --------------------------------------------------------------------------- consumers


async def bare_openai(client: openai.AsyncOpenAI) -> Timed:
    start = time.perf_counter()
    stream = await client.chat.completions.create(
        model="gpt-bench",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    first_token = 0.0
    text = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text.append(chunk.choices[0].delta.content)
            if not first_token:
                first_token = time.perf_counter() - start
    return first_token, time.perf_counter() - start


async def bare_anthropic(client: anthropic.AsyncAnthropic) -> Timed:
    start = time.perf_counter()
    stream = await client.messages.create(
        model="claude-bench",
        max_tokens=8192,
        messages=[{"role": "user", "content": "go"}],
        stream=True,
    )
    first_token = 0.0
    text = []
    async for event in stream:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            text.append(event.delta.text)
            if not first_token:
                first_token = time.perf_counter() - start
    return first_token, time.perf_counter() - start


async def skillkit_stream(adapter: OpenAIAdapter | AnthropicAdapter, model: str) -> Timed:
    request = LLMRequest(model=model, messages=[UserMessage("go")])
    start = time.perf_counter()
    first_token = 0.0
    text = []
    async for event in adapter.chat_stream_events(request):
        if event.type == "text_delta":
            text.append(event.content)
            if not first_token:
                first_token = time.perf_counter() - start
        elif event.type == "error":
            raise RuntimeError(event.error)
    return first_token, time.perf_counter() - start


# --------------------------------------------------------------------------- runs


async def paired(
    bare: Callable[[], Awaitable[Timed]], ours: Callable[[], Awaitable[Timed]], runs: int
) -> list[tuple[Timed, Timed]]:
    """``runs`` back-to-back pairs (alternating which goes first), after a warm-up."""
    for _ in range(3):  # warm up connections, imports, caches
        await bare()
        await ours()
    pairs: list[tuple[Timed, Timed]] = []
    for run in range(runs):
        if run % 2 == 0:
            first = await bare()
            pairs.append((first, await ours()))
        else:
            second = await ours()
            pairs.append((await bare(), second))
    return pairs


def report_total(name: str, pairs: list[tuple[Timed, Timed]]) -> None:
    # The two measurements of a pair were taken back to back: comparing them pairwise
    # cancels the machine's drift between runs.
    added = statistics.median((o[1] - b[1]) / b[1] * 100 for b, o in pairs)
    bare = statistics.median(b[1] for b, _ in pairs) * 1000
    ours = statistics.median(o[1] for _, o in pairs) * 1000
    print(f"  {name:24s} bare SDK {bare:8.2f} ms  SkillKit {ours:8.2f} ms  added {added:+.1f}%")


def report_first(name: str, pairs: list[tuple[Timed, Timed]]) -> None:
    added = statistics.median(o[0] - b[0] for b, o in pairs) * 1000
    bare = statistics.median(b[0] for b, _ in pairs) * 1000
    ours = statistics.median(o[0] for _, o in pairs) * 1000
    print(f"  {name:24s} bare SDK {bare:8.3f} ms  SkillKit {ours:8.3f} ms  added {added:+.3f} ms")


class _ReplayStream:
    """Yields already-parsed SDK objects: isolates SkillKit's own per-delta work."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items

    async def __aiter__(self) -> AsyncIterator[Any]:
        for item in self._items:
            yield item

    async def close(self) -> None:
        return None


async def own_cost_per_delta(deltas: int, runs: int) -> None:
    """The translator and the stream shell alone, on parsed chunks (no HTTP, no SSE)."""
    from openai.types.chat import ChatCompletionChunk

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Any:
        return ChatCompletionChunk.model_validate(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    items = [chunk({"content": f"tok{i} "}) for i in range(deltas)] + [chunk({}, "stop")]

    async def bare() -> float:
        start = time.perf_counter()
        text = []
        async for item in _ReplayStream(items):
            if item.choices and item.choices[0].delta.content:
                text.append(item.choices[0].delta.content)
        return time.perf_counter() - start

    async def open_stream() -> Any:
        return _ReplayStream(items)

    def fail(exc: BaseException) -> Any:
        raise exc

    async def ours() -> float:
        start = time.perf_counter()
        text = []
        events = drive_stream(
            open_stream,
            lambda: _ChatTranslator(OpenAICompat(), None, []),
            fail,
            policy=RetryPolicy(0),
        )
        async for event in events:
            if event.type == "text_delta":
                text.append(event.content)
        return time.perf_counter() - start

    bare_times = [await bare() for _ in range(runs)]
    our_times = [await ours() for _ in range(runs)]
    added = statistics.median(our_times) - statistics.median(bare_times)
    print("SkillKit's own work (parsed chunks replayed, no HTTP)")
    print(f"  {added * 1000:.2f} ms per {deltas} deltas = {added / deltas * 1e6:.2f} µs per delta")

    adapter = OpenAIAdapter(api_key="sk-bench", base_url="http://127.0.0.1:9/v1")

    async def first_event(request: LLMRequest) -> float:
        start = time.perf_counter()
        messages = adapter.build_messages(request, request.model)
        adapter.build_options(request)
        events = drive_stream(
            open_stream,
            lambda: _ChatTranslator(OpenAICompat(), None, messages),
            fail,
            policy=RetryPolicy(0),
        )
        await events.__anext__()
        elapsed = time.perf_counter() - start
        await events.aclose()
        return elapsed

    async def bare_first() -> float:
        start = time.perf_counter()
        await _ReplayStream(items).__aiter__().__anext__()
        return time.perf_counter() - start

    for size, request in [
        (1, LLMRequest(model="m", messages=[UserMessage("go")])),
        (60, _agent_turns(20)),
    ]:
        ours_first = statistics.median([await first_event(request) for _ in range(runs)])
        bare = statistics.median([await bare_first() for _ in range(runs)])
        print(
            f"  before the first token, {size:2d}-message request: "
            f"{(ours_first - bare) * 1e6:.0f} µs (request conversion and stream start)"
        )


def _agent_turns(turns: int) -> LLMRequest:
    """A transcript of ``turns`` tool-using turns made by another provider."""
    from skillkit.models import (
        AssistantMessage,
        TextPart,
        ThinkingPart,
        ToolCall,
        ToolResultMessage,
    )

    messages: list[Any] = []
    for turn in range(turns):
        messages.append(UserMessage(f"step {turn}: read the file and summarise it"))
        messages.append(
            AssistantMessage(
                [
                    ThinkingPart("I should read it first.", signature="sig"),
                    ToolCall(f"toolu_{turn:024d}", "read_file", {"path": f"src/file_{turn}.py"}),
                ],
                provider="anthropic",
                model="claude-test",
            )
        )
        messages.append(
            ToolResultMessage(f"toolu_{turn:024d}", "read_file", [TextPart("x" * 2000)])
        )
    return LLMRequest(model="m", messages=messages)


class _Server:
    """The wire server in a child process, serving ``replies`` streams per endpoint."""

    def __init__(self, deltas: int, replies: int) -> None:
        self._parent, child = multiprocessing.Pipe()
        self._process = multiprocessing.Process(
            target=_serve, args=(child, deltas, replies), daemon=True
        )

    def __enter__(self) -> str:
        self._process.start()
        url: str = self._parent.recv()
        return url

    def __exit__(self, *exc: object) -> None:
        self._parent.send("stop")
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.terminate()


async def both_providers(
    base_url: str, runs: int
) -> tuple[list[tuple[Timed, Timed]], list[tuple[Timed, Timed]]]:
    openai_url = base_url + "/v1"
    openai_client = openai.AsyncOpenAI(api_key="sk-bench", base_url=openai_url, max_retries=0)
    openai_adapter = OpenAIAdapter(api_key="sk-bench", base_url=openai_url, max_retries=0)
    anthropic_client = anthropic.AsyncAnthropic(
        api_key="sk-bench", base_url=base_url, max_retries=0
    )
    anthropic_adapter = AnthropicAdapter(
        api_key="sk-bench", base_url=base_url, max_retries=0, prompt_caching=False
    )
    openai_pairs = await paired(
        lambda: bare_openai(openai_client),
        lambda: skillkit_stream(openai_adapter, "gpt-bench"),
        runs,
    )
    anthropic_pairs = await paired(
        lambda: bare_anthropic(anthropic_client),
        lambda: skillkit_stream(anthropic_adapter, "claude-bench"),
        runs,
    )
    return openai_pairs, anthropic_pairs


async def main(runs: int, deltas: int, first_token_runs: int) -> None:
    print(f"Whole stream: {deltas} text deltas, {runs} paired runs (medians)")
    with _Server(deltas, 2 * (runs + 3)) as base_url:
        openai_pairs, anthropic_pairs = await both_providers(base_url, runs)
    report_total("OpenAI Chat Completions", openai_pairs)
    report_total("Anthropic Messages", anthropic_pairs)

    print(f"\nTime to first token: 10-delta streams, {first_token_runs} paired runs (medians)")
    with _Server(10, 2 * (first_token_runs + 3)) as base_url:
        openai_pairs, anthropic_pairs = await both_providers(base_url, first_token_runs)
    report_first("OpenAI Chat Completions", openai_pairs)
    report_first("Anthropic Messages", anthropic_pairs)

    print()
    await own_cost_per_delta(deltas, runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="SkillKit adapters vs the bare SDKs")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--deltas", type=int, default=1000)
    parser.add_argument("--first-token-runs", type=int, default=200)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.deltas, arguments.first_token_runs))
