"""The scripted adapter: deterministic model replies for tests, demos and offline use.

`ScriptedAdapter` plays a list of `Reply` items, one per model call, as the event
sequence a real streaming provider would produce (thinking, then text, then tool calls,
each in deltas of ``chunk_size`` characters, then ``done`` with usage). `FunctionAdapter`
computes each reply from the request instead. Both record every request they receive in
``requests`` so tests can assert on exactly what the model was sent.

Script files (YAML or JSON) for ``--model scripted:PATH``::

    replies:
      - text: "Let me check."
        tool_calls:
          - {name: get_weather, arguments: {city: Paris}}
      - thinking: "The tool said sunny."
        text: "It is sunny in Paris."
      - output: {city: Paris, sky: sunny}   # a structured answer (see Reply.output)
    cycle: false        # true: start again from the first reply when the script ends

A bare list of replies is accepted too. Running past the end of a script ends that call
with an ``error`` event that says so; it never hangs.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.models import (
    LLMRequest,
    StopReason,
    StreamEvent,
    TokenUsage,
    ToolCall,
    message_text,
)

__all__ = ["FunctionAdapter", "Reply", "ScriptError", "ScriptedAdapter", "load_script"]


class ScriptError(ValueError):
    """A script file could not be read; the message names the file and the problem."""


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted model reply.

    ``tool_calls`` items are ``(name, arguments)`` pairs or `ToolCall` values (ids are
    made up as ``call_<n>`` when not given). ``error`` ends the reply with an ``error``
    event after whatever text was given (``stop_reason`` defaults to ``"error"``).
    ``usage`` defaults to an estimate (4 characters a token). ``delay`` sleeps before
    each delta, to simulate a slow model. ``error_kind`` is the failure's kind on the
    ``error`` event (``rate_limit``, ``server``, ``refusal``, ...), as a provider adapter
    reports it (fallback models switch on it).

    ``output`` is a structured answer (JSON data, in the shape the request's
    ``output.schema`` describes): played as JSON text after ``text`` when the request
    asks for native structured output or none, and as a call of the final tool (after
    ``tool_calls``) in tool mode — so one script serves both modes.
    """

    text: str = ""
    thinking: str = ""
    thinking_signature: str | None = None
    tool_calls: Sequence[tuple[str, dict[str, Any]] | ToolCall] = ()
    error: str | None = None
    stop_reason: StopReason | None = None
    usage: TokenUsage | None = None
    delay: float = 0.0
    output: Any = None
    error_kind: str | None = None


ReplyFunction = Callable[[LLMRequest], "Reply | str | Awaitable[Reply | str]"]


class _ScriptedBase(LLMAdapter):
    provider = "scripted"
    native_output = True
    """Plays structured answers natively (see `Reply.output`); the runner reads this
    instead of the model catalog."""

    def __init__(self, *, chunk_size: int = 8, model: str = "scripted") -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.chunk_size = chunk_size
        self.model = model
        self.requests: list[LLMRequest] = []
        self._call_ids = 0
        self._sizes: list[object] = []

    @abstractmethod
    async def _reply_for(self, request: LLMRequest) -> Reply | str:
        """The reply to play for ``request``."""

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        return self._play(request, abort)

    async def _play(
        self, request: LLMRequest, abort: AbortSignal | None
    ) -> AsyncIterator[StreamEvent]:
        """Fetch the reply for ``request`` and stream it (one generator: no per-event
        cost of a second level)."""
        try:
            found = await self._reply_for(request)
            reply = _with_output(Reply(text=found) if isinstance(found, str) else found, request)
        except _ScriptExhausted as exc:
            yield StreamEvent("error", error=str(exc), stop_reason="error")
            return
        except Exception as exc:  # a reply function's failure is the provider failing
            yield StreamEvent("error", error=f"scripted reply failed: {exc}", stop_reason="error")
            return
        size = self.chunk_size
        delay = reply.delay
        output_chars = 0

        def aborted() -> bool:
            return abort is not None and abort.aborted

        if reply.thinking:
            yield StreamEvent("thinking_start")
            for i in range(0, len(reply.thinking), size):
                if delay:
                    await asyncio.sleep(delay)
                if aborted():
                    yield _aborted()
                    return
                yield StreamEvent("thinking_delta", content=reply.thinking[i : i + size])
            yield StreamEvent(
                "thinking_end", content=reply.thinking, signature=reply.thinking_signature
            )
            output_chars += len(reply.thinking)
        if reply.text:
            yield StreamEvent("text_start")
            for i in range(0, len(reply.text), size):
                if delay:
                    await asyncio.sleep(delay)
                if aborted():
                    yield _aborted()
                    return
                yield StreamEvent("text_delta", content=reply.text[i : i + size])
            yield StreamEvent("text_end", content=reply.text)
            output_chars += len(reply.text)
        if reply.error is not None:
            yield StreamEvent(
                "error",
                error=reply.error,
                stop_reason=reply.stop_reason or "error",
                usage=reply.usage or _estimate(request, output_chars, self._sizes),
                error_kind=reply.error_kind,
            )
            return
        for item in reply.tool_calls:
            call = self._as_call(item)
            raw = json.dumps(call.arguments, ensure_ascii=False)
            yield StreamEvent("tool_call_start", tool_call_id=call.id, tool_name=call.name)
            for i in range(0, len(raw), size):
                if delay:
                    await asyncio.sleep(delay)
                if aborted():
                    yield _aborted()
                    return
                yield StreamEvent(
                    "tool_call_delta", content=raw[i : i + size], tool_call_id=call.id
                )
            yield StreamEvent(
                "tool_call_end",
                content=raw,
                tool_call_id=call.id,
                tool_name=call.name,
                arguments=dict(call.arguments),
            )
            output_chars += len(raw)
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "stop")
        usage = reply.usage or _estimate(request, output_chars, self._sizes)
        yield StreamEvent("done", stop_reason=stop, usage=usage)

    def _as_call(self, item: tuple[str, dict[str, Any]] | ToolCall) -> ToolCall:
        if isinstance(item, ToolCall):
            return item
        name, arguments = item
        self._call_ids += 1
        return ToolCall(id=f"call_{self._call_ids}", name=name, arguments=dict(arguments))


def _with_output(reply: Reply, request: LLMRequest) -> Reply:
    """``reply`` with its ``output`` turned into text or a final tool call."""
    if reply.output is None:
        return reply
    wanted = request.output
    if wanted is not None and wanted.mode == "tool":
        if not isinstance(reply.output, dict):
            raise TypeError("a scripted output for a final tool must be a JSON object")
        calls = [*reply.tool_calls, (wanted.name, reply.output)]
        return msgspec.structs.replace(reply, tool_calls=calls, output=None)
    answer = json.dumps(reply.output, ensure_ascii=False)
    text = f"{reply.text}{answer}" if not reply.text else f"{reply.text}\n{answer}"
    return msgspec.structs.replace(reply, text=text, output=None)


class ScriptedAdapter(_ScriptedBase):
    """Plays ``replies`` in order, one per model call (a string is a text reply).

    With ``cycle=True`` the script starts over when it ends; otherwise a call past the
    end gets an ``error`` event naming how many replies were played.

    ``strict=True`` makes a script that does not match its run an error of the test:
    `verify` (and `aclose`, so ``await runner.aclose()`` too) raises `ScriptError` when
    a request ran past the end of the script or a reply was left unused.
    """

    def __init__(
        self,
        replies: Sequence[Reply | str],
        *,
        chunk_size: int = 8,
        cycle: bool = False,
        model: str = "scripted",
        strict: bool = False,
    ) -> None:
        super().__init__(chunk_size=chunk_size, model=model)
        self.replies = [Reply(text=r) if isinstance(r, str) else r for r in replies]
        self.cycle = cycle
        self.strict = strict
        self._next = 0
        self._overrun: str | None = None

    def verify(self) -> None:
        """Raise `ScriptError` if a request found no reply or (without ``cycle``) a
        reply was never played; does nothing otherwise."""
        if self._overrun is not None:
            raise ScriptError(self._overrun)
        unused = len(self.replies) - self._next
        if unused > 0 and not self.cycle:
            raise ScriptError(
                f"{unused} of {len(self.replies)} scripted replies were never played "
                f"(the run made {len(self.requests)} model calls)"
            )

    async def aclose(self) -> None:
        await super().aclose()
        if self.strict:
            self.verify()

    @classmethod
    def from_file(cls, path: str | Path, *, chunk_size: int = 8) -> ScriptedAdapter:
        """Load a YAML/JSON script file (see the module docs); `ScriptError` if unusable."""
        replies, cycle = load_script(path)
        return cls(replies, chunk_size=chunk_size, cycle=cycle, model=f"scripted:{path}")

    async def _reply_for(self, request: LLMRequest) -> Reply | str:
        if self._next >= len(self.replies):
            if self.cycle and self.replies:
                self._next = 0
            else:
                text = (
                    f"script exhausted: all {len(self.replies)} scripted replies were played; "
                    f"request #{len(self.requests)} has no reply"
                )
                if self._overrun is None:
                    self._overrun = text
                raise _ScriptExhausted(text)
        reply = self.replies[self._next]
        self._next += 1
        return reply


class FunctionAdapter(_ScriptedBase):
    """Computes each reply with ``fn(request)`` (sync or async; a `Reply` or a string).

    An exception from ``fn`` ends that call with an ``error`` event.
    """

    def __init__(self, fn: ReplyFunction, *, chunk_size: int = 8, model: str = "function") -> None:
        super().__init__(chunk_size=chunk_size, model=model)
        self.fn = fn

    async def _reply_for(self, request: LLMRequest) -> Reply | str:
        result = self.fn(request)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, Reply | str):
            raise TypeError(f"reply function returned {type(result).__name__}, not Reply or str")
        return result


class _ScriptExhausted(Exception):
    pass


def _aborted() -> StreamEvent:
    return StreamEvent("error", error="aborted", stop_reason="aborted")


def _estimate(request: LLMRequest, output_chars: int, memo: list[object]) -> TokenUsage:
    """Usage estimated at 4 characters a token. ``memo`` remembers the previous request's
    messages and size, so a growing transcript is measured incrementally."""
    messages = request.messages
    start, chars = 0, 0
    if memo:
        last, count, size = memo
        if (
            isinstance(count, int)
            and isinstance(size, int)
            and 0 < count <= len(messages)
            and messages[count - 1] is last
        ):
            start, chars = count, size
    for message in messages[start:] if start else messages:
        chars += len(message_text(message))
    memo[:] = [messages[-1] if messages else None, len(messages), chars]
    total = chars + len(request.system_prompt)
    return TokenUsage(input=max(1, total // 4), output=max(1, output_chars // 4))


class _ScriptCall(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    id: str | None = None


class _ScriptReply(msgspec.Struct, forbid_unknown_fields=True):
    text: str = ""
    thinking: str = ""
    tool_calls: list[_ScriptCall] = msgspec.field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    stop_reason: StopReason | None = None
    delay: float = 0.0
    output: Any = None


class _ScriptFile(msgspec.Struct, forbid_unknown_fields=True):
    replies: list[_ScriptReply | str]
    cycle: bool = False


def load_script(path: str | Path) -> tuple[list[Reply], bool]:
    """Read a script file: returns (replies, cycle). Raises `ScriptError` with a one-line
    message naming the file and what is wrong."""
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ScriptError(f"script file not found: {file}") from None
    except UnicodeDecodeError as exc:
        raise ScriptError(
            f"script file {file} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    except OSError as exc:
        raise ScriptError(f"cannot read script file {file}: {exc.strerror or exc}") from None
    try:
        if file.suffix.lower() == ".json":
            data: Any = json.loads(raw)
        else:
            import yaml

            data = yaml.safe_load(raw)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ScriptError(f"{file}: not valid YAML/JSON: {first}") from None
    if isinstance(data, list):
        data = {"replies": data}
    try:
        script = msgspec.convert(data, _ScriptFile)
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{file}: {exc}") from None
    if not script.replies:
        raise ScriptError(f"{file}: the script has no replies")
    replies: list[Reply] = []
    for item in script.replies:
        if isinstance(item, str):
            replies.append(Reply(text=item))
            continue
        calls: list[tuple[str, dict[str, Any]] | ToolCall] = [
            ToolCall(id=c.id, name=c.name, arguments=c.arguments) if c.id else (c.name, c.arguments)
            for c in item.tool_calls
        ]
        replies.append(
            Reply(
                text=item.text,
                thinking=item.thinking,
                tool_calls=calls,
                error=item.error,
                error_kind=item.error_kind,
                stop_reason=item.stop_reason,
                delay=item.delay,
                output=item.output,
            )
        )
    return replies, script.cycle
