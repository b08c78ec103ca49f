"""The context pipeline's conversion step: `convert_to_llm` and custom-message renderers.

`convert_to_llm` is the only road from the agent's transcript (`AgentMessage`) to what a
model is sent (`LLMMessage`). User, assistant and tool-result messages pass through
unchanged; a `CustomMessage` is sent only if a renderer is registered for its ``kind``
(`RendererRegistry`), and is dropped otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    LLMMessage,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["CustomMessageRenderer", "RendererRegistry", "convert_message", "convert_to_llm"]

CustomMessageRenderer = Callable[[CustomMessage], LLMMessage | None]
"""Turns one custom message into a message for the model, or None to leave it out."""

_LLM_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


class RendererRegistry:
    """One renderer per custom-message kind. Registering a kind twice is an error unless
    ``replace=True`` (so two plugins cannot silently shadow each other)."""

    def __init__(self, renderers: Mapping[str, CustomMessageRenderer] | None = None) -> None:
        self._renderers: dict[str, CustomMessageRenderer] = dict(renderers or {})

    def register(
        self, kind: str, renderer: CustomMessageRenderer, *, replace: bool = False
    ) -> None:
        if kind in self._renderers and not replace:
            raise ValueError(f"a renderer for custom message kind {kind!r} is already registered")
        self._renderers[kind] = renderer

    def unregister(self, kind: str) -> None:
        self._renderers.pop(kind, None)

    def get(self, kind: str) -> CustomMessageRenderer | None:
        return self._renderers.get(kind)

    def kinds(self) -> list[str]:
        return list(self._renderers)


def convert_message(
    message: AgentMessage, renderers: RendererRegistry | None = None
) -> LLMMessage | None:
    """Convert one message: LLM messages pass through, custom ones are rendered or dropped."""
    if type(message) is not CustomMessage:
        return message  # type: ignore[return-value]
    renderer = renderers.get(message.kind) if renderers is not None else None
    return renderer(message) if renderer is not None else None


def convert_to_llm(
    messages: Iterable[AgentMessage], renderers: RendererRegistry | None = None
) -> list[LLMMessage]:
    """The default conversion: a new list of the messages a model may be sent."""
    out: list[LLMMessage] = []
    for message in messages:
        converted = convert_message(message, renderers)
        if converted is not None:
            out.append(converted)
    return out
