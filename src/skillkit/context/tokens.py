"""Token estimation: how big a context is, without asking the provider.

`estimate_tokens(messages, model)` starts from the newest size the provider itself
reported — the prompt tokens plus output tokens of the last assistant message that
carries usage — and adds an estimate for every message after it. A ``compaction``
record (`BOUNDARY_KIND`) written after that usage resets the starting point to the
size the compaction left (older usage describes a context that no longer exists).
With no usage at all, every message is estimated, plus the system prompt and tools.

Counting text: a fast heuristic by default (4 characters a token for ASCII text, about
one token per character for CJK and other multi-byte text); a real tokenizer when one
is available — ``tokenizer="auto"`` uses ``tiktoken`` if it is installed and its
encoding loads (a callable ``str -> int`` may be given instead). Images count by their
pixel size (about ``width * height / 750`` tokens after downscaling to 1568 px on the
long side, at most 1,600), read from the PNG/JPEG/GIF/WebP header; an image whose size
cannot be read counts 1,600.
"""

from __future__ import annotations

import base64
import importlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from skillkit.context.convert import RendererRegistry
from skillkit.context.markers import BOUNDARY_KIND
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserContent,
    UserMessage,
)

__all__ = [
    "DEFAULT_IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "Tokenizer",
    "TokenizerSetting",
    "context_anchor",
    "estimate_tokens",
    "heuristic_tokens",
    "image_size",
    "image_tokens",
    "message_tokens",
    "prompt_overhead",
    "resolve_tokenizer",
    "text_chars",
    "tokens_bound",
]

Tokenizer: TypeAlias = Callable[[str], int]
"""Counts the tokens of one text."""

TokenizerSetting: TypeAlias = "Tokenizer | Literal['auto', 'heuristic']"

DEFAULT_IMAGE_TOKENS = 1_600
"""Tokens counted for an image whose size cannot be read (and the cap for any image)."""

MESSAGE_OVERHEAD = 4
"""Tokens counted per message for the role and framing."""

_IMAGE_MAX_EDGE = 1568
_IMAGE_PIXELS_PER_TOKEN = 750


def heuristic_tokens(text: str) -> int:
    """About 4 characters a token for ASCII; multi-byte characters count more (a CJK
    character about one token). Never fewer than the exact count by much for prose and
    code; costs O(1) for ASCII beyond one ``isascii`` scan."""
    n = len(text)
    if text.isascii():
        return (n + 3) >> 2
    return (2 * len(text.encode("utf-8", "surrogatepass")) - n + 3) >> 2


# --------------------------------------------------------------------------- images


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 PNG, JPEG, GIF or WebP image, or None if unreadable."""
    try:
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
        if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
            return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        if head[:4] == b"GIF8" and len(head) >= 10:
            return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
            return _webp_size(head)
        if head[:2] == b"\xff\xd8":
            limit = min(len(data), 96 * 1024) // 4 * 4
            return _jpeg_size(base64.b64decode(data[:limit]))
    except (ValueError, IndexError):
        return None
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 ":
        return int.from_bytes(head[26:28], "little") & 0x3FFF, int.from_bytes(
            head[28:30], "little"
        ) & 0x3FFF
    if chunk == b"VP8L":
        b = head[21:25]
        width = 1 + (b[0] | (b[1] & 0x3F) << 8)
        height = 1 + (b[1] >> 6 | b[2] << 2 | (b[3] & 0x0F) << 10)
        return width, height
    if chunk == b"VP8X":
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    return None


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        length = int.from_bytes(raw[i + 2 : i + 4], "big")
        if marker in _SOF:
            return int.from_bytes(raw[i + 7 : i + 9], "big"), int.from_bytes(
                raw[i + 5 : i + 7], "big"
            )
        i += 2 + length
    return None


def image_tokens(image: ImagePart) -> int:
    """Tokens of one image: its pixels after downscaling, 1,600 at most."""
    size = image_size(image.data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return DEFAULT_IMAGE_TOKENS
    width, height = size
    edge = max(width, height)
    if edge > _IMAGE_MAX_EDGE:
        scale = _IMAGE_MAX_EDGE / edge
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return max(1, min(DEFAULT_IMAGE_TOKENS, -(-width * height // _IMAGE_PIXELS_PER_TOKEN)))


# --------------------------------------------------------------------------- messages

_json = msgspec.json.Encoder()


def _json_tokens(value: Any, count: Tokenizer | None) -> int:
    try:
        raw = _json.encode(value)
    except (TypeError, ValueError, OverflowError):
        raw = repr(value).encode()
    if count is None:
        return (len(raw) + 3) >> 2
    return count(raw.decode("utf-8", "replace"))


def message_tokens(
    message: AgentMessage,
    count: Tokenizer | None = None,
    renderers: RendererRegistry | None = None,
) -> int:
    """Estimated tokens of one message as a model would be sent it. ``count`` counts
    text (None: `heuristic_tokens`). With ``renderers``, a custom message whose kind has
    no renderer counts 0 (it is never sent)."""
    text = count or heuristic_tokens
    kind = type(message)
    total = MESSAGE_OVERHEAD
    if kind is ToolResultMessage or kind is UserMessage:
        content = message.content  # type: ignore[union-attr]
        if type(content) is str:
            return total + text(content)
        for part in content:
            if type(part) is TextPart:
                total += text(part.text)
            elif type(part) is ImagePart:
                total += image_tokens(part)
        return total
    if kind is AssistantMessage:
        for part in message.content:  # type: ignore[union-attr]
            part_type = type(part)
            if part_type is TextPart:
                total += text(part.text)  # type: ignore[union-attr]
            elif part_type is ToolCall:
                total += 8 + text(part.name) + _json_tokens(part.arguments, count)  # type: ignore[union-attr]
            elif part_type is ThinkingPart:
                total += text(part.thinking)  # type: ignore[union-attr]
                if part.redacted and part.signature:  # type: ignore[union-attr]
                    total += len(part.signature) >> 2  # type: ignore[union-attr]
        return total
    assert isinstance(message, CustomMessage)
    if renderers is not None and renderers.get(message.kind) is None:
        return 0
    payload = message.payload
    if payload is None:
        return 0
    if type(payload) is str:
        return total + text(payload)
    return total + _json_tokens(payload, count)


def prompt_overhead(
    system_prompt: str = "", tools: Sequence[ToolSchema] = (), count: Tokenizer | None = None
) -> int:
    """Estimated tokens of the system prompt and the tool schemas."""
    text = count or heuristic_tokens
    total = text(system_prompt) if system_prompt else 0
    for schema in tools:
        total += 8 + text(schema.name) + text(schema.description)
        total += _json_tokens(schema.parameters, count)
    return total


def text_chars(content: Sequence[UserContent]) -> int:
    """The characters of the text parts of ``content``."""
    total = 0
    for part in content:
        if type(part) is TextPart:
            total += len(part.text)
    return total


def tokens_bound(messages: Sequence[AgentMessage], start: int = 0) -> int | None:
    """An upper bound of the tokens of ``messages[start:]`` that counts no tokens — a
    token is at least one UTF-8 byte, a character at most four — or None when one of
    them cannot be bounded so cheaply (an image, a custom message)."""
    total = 0
    for position in range(start, len(messages)):
        message = messages[position]
        kind = type(message)
        total += MESSAGE_OVERHEAD
        if kind is ToolResultMessage or kind is UserMessage:
            content = message.content  # type: ignore[union-attr]
            if type(content) is str:
                total += 4 * len(content)
                continue
            for part in content:
                if type(part) is not TextPart:
                    return None
                total += 4 * len(part.text)
        elif kind is AssistantMessage:
            for part in message.content:  # type: ignore[union-attr]
                part_type = type(part)
                if part_type is TextPart:
                    total += 4 * len(part.text)  # type: ignore[union-attr]
                elif part_type is ThinkingPart:
                    total += 4 * len(part.thinking) + len(part.signature or "")  # type: ignore[union-attr]
                else:
                    return None  # a tool call: its arguments are counted as JSON
        else:
            return None
    return total


def context_anchor(messages: Sequence[AgentMessage]) -> tuple[int, int | None]:
    """The newest reliable size: ``(index, tokens)`` where ``tokens`` is the context size
    up to and including ``messages[index]``; ``(index, None)`` when a compaction record
    at ``index`` carries no size (count everything); ``(-1, None)`` when nothing is
    known."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        kind = type(message)
        if kind is AssistantMessage:
            usage = message.usage  # type: ignore[union-attr]
            prompt = usage.input + usage.cache_read + usage.cache_write
            if prompt:
                return index, prompt + usage.output
        elif kind is CustomMessage and message.kind == BOUNDARY_KIND:  # type: ignore[union-attr]
            payload = message.payload  # type: ignore[union-attr]
            after = payload.get("tokens_after") if isinstance(payload, dict) else None
            if isinstance(after, int) and after > 0:
                return index, after
            return index, None
    return -1, None


def estimate_tokens(
    messages: Sequence[AgentMessage],
    model: str = "",
    *,
    system_prompt: str = "",
    tools: Sequence[ToolSchema] = (),
    renderers: RendererRegistry | None = None,
    tokenizer: TokenizerSetting = "auto",
) -> int:
    """Estimated input tokens of a model call on ``messages``.

    The provider-reported size of the newest call (see `context_anchor`) plus the
    estimate of each later message; the system prompt and tools are added only when no
    reported size exists (a reported size already includes them). ``model`` picks the
    tokenizer encoding when a real tokenizer is used. Never raises for message content.
    """
    count = resolve_tokenizer(tokenizer, model)
    index, base = context_anchor(messages)
    if base is None:
        total = prompt_overhead(system_prompt, tools, count)
        start = 0
    else:
        total = base
        start = index + 1
    for position in range(start, len(messages)):
        total += message_tokens(messages[position], count, renderers)
    return total


# --------------------------------------------------------------------------- tokenizers

_TIKTOKEN_LOAD_TIMEOUT = 5.0
_tiktoken_cache: dict[str, Tokenizer | None] = {}
_tiktoken_missing = False


def resolve_tokenizer(setting: TokenizerSetting, model: str = "") -> Tokenizer | None:
    """The text counter for a tokenizer setting: a callable as given, None for the
    heuristic (``"heuristic"``, or ``"auto"`` without a usable ``tiktoken``)."""
    if setting == "heuristic":
        return None
    if setting == "auto":
        if _tiktoken_missing:
            return None
        if model in _tiktoken_cache:
            return _tiktoken_cache[model]
        return _load_tiktoken(model)
    if callable(setting):
        return setting
    raise ValueError(f"tokenizer must be 'auto', 'heuristic' or a callable, got {setting!r}")


def _load_tiktoken(model: str) -> Tokenizer | None:
    """Load tiktoken's encoding for ``model`` once. tiktoken may download its encoding
    file on first use; the load runs in a thread and is given up after a few seconds so
    an offline machine falls back to the heuristic instead of hanging."""
    global _tiktoken_missing
    try:
        tiktoken: Any = importlib.import_module("tiktoken")
    except ImportError:
        _tiktoken_missing = True
        return None
    box: list[Tokenizer] = []

    def load() -> None:
        try:
            try:
                encoding = tiktoken.encoding_for_model(model)
            except KeyError:
                encoding = tiktoken.get_encoding("o200k_base")
        except Exception:
            return
        encode = encoding.encode_ordinary
        box.append(lambda text: len(encode(text)))

    worker = threading.Thread(target=load, name="skillkit-tiktoken", daemon=True)
    worker.start()
    worker.join(_TIKTOKEN_LOAD_TIMEOUT)
    counter = box[0] if box else None
    _tiktoken_cache[model] = counter
    return counter
