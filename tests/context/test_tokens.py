"""Token estimation: provider-reported usage first, a heuristic after it, images by size."""

from __future__ import annotations

import base64
import struct
import sys
import types
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.context import (
    RendererRegistry,
    boundary_message,
    estimate_tokens,
    heuristic_tokens,
    image_tokens,
    message_tokens,
)
from skillkit.context import tokens as tokens_module
from skillkit.context.tokens import prompt_overhead
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ImagePart,
    LLMRequest,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)
from tests.context.sim import read_file, request_tokens


def test_heuristic_counts_ascii_at_four_characters_a_token_and_cjk_near_one_each() -> None:
    assert heuristic_tokens("") == 0
    assert heuristic_tokens("abcd" * 100) == 100
    cjk = "漢字仮名交じり文" * 50  # 400 characters
    assert 380 <= heuristic_tokens(cjk) <= 520
    accented = "café " * 100  # mostly ASCII
    assert 125 <= heuristic_tokens(accented) <= 210


@given(st.text(max_size=500))
def test_heuristic_stays_between_a_quarter_and_two_tokens_a_character(text: str) -> None:
    count = heuristic_tokens(text)
    assert len(text) / 4 <= count <= len(text) * 2 + 1


def test_the_last_reported_usage_is_the_base_and_later_messages_are_estimated() -> None:
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="read_file", content=[TextPart("x" * 4000)]
    )
    messages: list[AgentMessage] = [
        UserMessage("y" * 40_000),  # ~10,000 tokens by the heuristic
        AssistantMessage(
            content=[ToolCall(id="c1", name="read_file", arguments={"path": "a.py"})],
            stop_reason="tool_use",
            usage=TokenUsage(input=20_000, cache_read=5_000, output=120),
        ),
        result,
    ]
    expected = 20_000 + 5_000 + 120 + message_tokens(result)
    assert estimate_tokens(messages) == expected
    # without usage every message is estimated, with the system prompt and tools
    no_usage = [messages[0], AssistantMessage(content=messages[1].content), result]  # type: ignore[union-attr]
    schema = ToolSchema(name="read_file", description="Read a file.", parameters={"type": "object"})
    plain = estimate_tokens(no_usage)
    assert 10_000 < plain < 12_000
    assert estimate_tokens(no_usage, system_prompt="s" * 400, tools=[schema]) > plain + 100
    # the system prompt is already inside the reported usage
    assert estimate_tokens(messages, system_prompt="s" * 400) == expected


def test_a_compaction_record_resets_the_base_to_the_size_it_left() -> None:
    stale = AssistantMessage(content=[TextPart("old")], usage=TokenUsage(input=90_000, output=10))
    after = UserMessage("next question")
    messages: list[AgentMessage] = [
        UserMessage("kept"),
        stale,
        boundary_message(
            type="full",
            reason="threshold",
            strategy="summary",
            tokens_before=90_010,
            tokens_after=1_500,
        ),
        after,
    ]
    assert estimate_tokens(messages) == 1_500 + message_tokens(after)
    # a record without a size makes older usage unusable: everything is counted
    bare = CustomMessage(kind="compaction", payload={})
    counted = estimate_tokens([*messages[:2], bare, after])
    assert counted == sum(message_tokens(m) for m in [messages[0], stale, bare, after])


async def test_estimate_tracks_provider_reported_usage_over_a_session() -> None:
    """A provider whose tokenizer counts 30% more than the heuristic: the estimate made
    before each call, from the usage reported by the previous call, stays within 5% of
    what the provider then reports (the error is only in the newest messages); the
    heuristic alone is ~23% off."""
    reported: list[int] = []

    def reply(request: LLMRequest) -> Reply:
        size = int(request_tokens(request) * 1.3)
        reported.append(size)
        step = len(reported)
        usage = TokenUsage(input=size, output=40)
        if step < 40:
            call = ToolCall(id=f"c{step}", name="read_file", arguments={"path": f"f{step}.py"})
            return Reply(text=f"step {step}", tool_calls=[call], usage=usage)
        return Reply(text="done", usage=usage)

    adapter = FunctionAdapter(reply, chunk_size=256)
    estimates: list[tuple[int, int]] = []

    async def measure(messages: list[AgentMessage]) -> list[AgentMessage]:
        schemas = adapter.requests[-1].tools if adapter.requests else []
        estimates.append(
            (
                estimate_tokens(messages, "sim", tools=schemas),
                prompt_overhead("", schemas) + sum(message_tokens(m) for m in messages),
            )
        )
        return messages

    agent = AgentRunner(
        AgentConfig(model="sim", max_iterations=60),
        adapter=adapter,
        tools=[read_file],
        transformers=[measure],
    )
    await agent.chat("read the files")
    assert len(reported) == 40
    for (estimate, heuristic_only), actual in list(zip(estimates, reported, strict=True))[5:]:
        assert abs(estimate - actual) / actual < 0.05
        assert abs(heuristic_only - actual) / actual > 0.2
    final_error = abs(estimates[-1][0] - reported[-1]) / reported[-1]
    assert final_error < 0.01


def test_a_callable_tokenizer_still_starts_from_reported_usage() -> None:
    messages: list[AgentMessage] = [
        UserMessage("hello"),
        AssistantMessage(content=[TextPart("hi")], usage=TokenUsage(input=777, output=3)),
    ]
    assert estimate_tokens(messages, tokenizer=lambda text: 1) == 780


def test_custom_messages_without_a_renderer_count_nothing_when_renderers_are_given() -> None:
    note = CustomMessage(kind="ui_row", payload="x" * 4000)
    assert message_tokens(note) > 1000
    assert message_tokens(note, renderers=RendererRegistry()) == 0
    assert (
        message_tokens(
            CustomMessage(kind="pinned", payload="abcd" * 10), renderers=RendererRegistry()
        )
        == 14
    )


# --------------------------------------------------------------------------- images


def png(width: int, height: int) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + b"\x00" * (width * 3) for _ in range(height))
    body = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(body).decode()


def jpeg_header(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00" * 3
    return base64.b64encode(b"\xff\xd8" + app0 + sof0 + b"\xff\xd9").decode()


def gif_header(width: int, height: int) -> str:
    return base64.b64encode(b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 8).decode()


def webp_header(width: int, height: int) -> str:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    vp8x += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    body = b"WEBP" + vp8x
    return base64.b64encode(b"RIFF" + struct.pack("<I", len(body)) + body).decode()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (png(300, 200), 80),  # 60,000 px / 750
        (jpeg_header(800, 600), 640),
        (gif_header(150, 100), 20),
        (webp_header(1000, 750), 1000),
        (jpeg_header(4000, 3000), 1600),  # downscaled to 1568 x 1176, then capped
        ("bm90IGFuIGltYWdl", 1600),  # unreadable: the cap
    ],
)
def test_images_count_by_their_pixel_size(data: str, expected: int) -> None:
    assert image_tokens(ImagePart(data=data, mime_type="image/png")) == expected


def test_a_large_image_costs_its_pixels_not_its_base64_length() -> None:
    data = png(1200, 900)
    message = UserMessage([TextPart("look"), ImagePart(data=data, mime_type="image/png")])
    assert len(data) > 4000
    assert message_tokens(message) == 4 + 1 + 1440


# --------------------------------------------------------------------------- tokenizers


def test_a_callable_tokenizer_counts_the_text() -> None:
    messages: list[AgentMessage] = [UserMessage("one two three four")]
    assert estimate_tokens(messages, tokenizer=lambda text: len(text.split())) == 4 + 4


def test_auto_uses_tiktoken_when_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("tiktoken")

    class Encoding:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    def encoding_for_model(model: str) -> Encoding:
        if model != "gpt-4o":
            raise KeyError(model)
        return Encoding()

    fake.encoding_for_model = encoding_for_model  # type: ignore[attr-defined]
    fake.get_encoding = lambda name: Encoding()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    monkeypatch.setattr(tokens_module, "_tiktoken_missing", False)
    monkeypatch.setattr(tokens_module, "_tiktoken_cache", {})
    messages: list[AgentMessage] = [UserMessage("a b c d e f")]
    assert estimate_tokens(messages, "gpt-4o") == 4 + 6
    assert estimate_tokens(messages, "other-model") == 4 + 6
    assert estimate_tokens(messages, "gpt-4o", tokenizer="heuristic") == 4 + 3


def test_auto_falls_back_to_the_heuristic_without_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import fails
    monkeypatch.setattr(tokens_module, "_tiktoken_missing", False)
    monkeypatch.setattr(tokens_module, "_tiktoken_cache", {})
    assert estimate_tokens([UserMessage("abcd" * 10)], "gpt-4o") == 4 + 10
    assert tokens_module._tiktoken_missing


def test_a_bad_tokenizer_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="tokenizer must be"):
        estimate_tokens([UserMessage("x")], tokenizer="exact")  # type: ignore[arg-type]


@given(
    st.binary(max_size=300),
    st.sampled_from(
        [b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBPVP8X"]
    ),
)
def test_image_tokens_never_fail_on_hostile_data(data: bytes, prefix: bytes) -> None:
    encoded = base64.b64encode(prefix + data).decode()
    assert 1 <= image_tokens(ImagePart(data=encoded, mime_type="image/png")) <= 1600
    assert 1 <= image_tokens(ImagePart(data=encoded[:-1] + "!", mime_type="image/png")) <= 1600
