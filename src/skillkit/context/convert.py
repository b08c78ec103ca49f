"""The conversion step: `convert_to_llm` and the per-kind custom-message renderers.

`convert_to_llm` is the only road from the agent's transcript (`AgentMessage`) to what a
model is sent (`LLMMessage`). User, assistant and tool-result messages pass through
unchanged (an empty assistant message left by a failed call is dropped); a
`CustomMessage` is sent only if a renderer is registered for its ``kind``
(`RendererRegistry`), and is dropped otherwise.

A registry starts with the built-in renderers of the pipeline's own kinds
(``compaction_summary`` and ``pinned``, see `skillkit.context.markers`); a plugin that
wants to render them differently registers its own with ``replace=True``.

There is no process-wide registry: whoever assembles an agent makes one and hands it
down (`AgentRunner(renderers=...)`, a runner makes its own when given none), and a
conversion given no registry renders with `BUILTIN_RENDERERS`, which cannot be changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType

from skillkit.context.markers import PINNED_KIND, SUMMARY_KIND, render_pinned, render_summary
from skillkit.models import AgentMessage, AssistantMessage, CustomMessage, LLMMessage

__all__ = [
    "BUILTIN_RENDERERS",
    "ContextTransformer",
    "ConvertToLLM",
    "CustomMessageRenderer",
    "RendererRegistry",
    "convert_message",
    "convert_to_llm",
]

ContextTransformer = Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]]
"""An async function that reshapes the messages before each model call (prune, inject):
it gets a copy and returns the list to use. A transformer that raises is reported as an
``error`` event and skipped."""

ConvertToLLM = Callable[[list[AgentMessage]], list[LLMMessage] | Awaitable[list[LLMMessage]]]
"""Replaces the default `AgentMessage` -> `LLMMessage` conversion (sync or async)."""

CustomMessageRenderer = Callable[[CustomMessage], LLMMessage | None]
"""Turns one custom message into a message for the model, or None to leave it out."""

BUILTIN_RENDERERS: Mapping[str, CustomMessageRenderer] = MappingProxyType(
    {SUMMARY_KIND: render_summary, PINNED_KIND: render_pinned}
)
"""The renderers every registry starts with (unless ``builtins=False``), and those a
conversion given no registry uses. Read-only: register in a `RendererRegistry`."""


class RendererRegistry:
    """One renderer per custom-message kind. Registering a kind twice is an error unless
    ``replace=True`` (so two plugins cannot silently shadow each other).

    A renderer that raises never breaks a run: the message is left out and ``on_error``
    (if set) is called with the kind and the exception (`AgentRunner` reports it as an
    ``error`` event with stage ``render:<kind>``).
    """

    def __init__(
        self,
        renderers: Mapping[str, CustomMessageRenderer] | None = None,
        *,
        builtins: bool = True,
    ) -> None:
        self._renderers: dict[str, CustomMessageRenderer] = (
            dict(BUILTIN_RENDERERS) if builtins else {}
        )
        self._renderers.update(renderers or {})
        self.on_error: Callable[[str, Exception], None] | None = None

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

    def render(self, message: CustomMessage) -> LLMMessage | None:
        """Render ``message`` with the renderer of its kind (None: no renderer, or the
        renderer declined or failed)."""
        renderer = self._renderers.get(message.kind)
        if renderer is None:
            return None
        try:
            return renderer(message)
        except Exception as exc:
            if self.on_error is not None:
                self.on_error(message.kind, exc)
            return None


def convert_message(
    message: AgentMessage, renderers: RendererRegistry | None = None
) -> LLMMessage | None:
    """Convert one message: LLM messages pass through, custom ones are rendered or dropped.

    Without ``renderers`` the built-in renderers apply (`BUILTIN_RENDERERS`; one that
    fails leaves the message out). An assistant message with no content (a model call
    that failed before producing anything) is left out: providers refuse empty messages
    and it tells the model nothing.
    """
    kind = type(message)
    if kind is CustomMessage:
        if renderers is not None:
            return renderers.render(message)  # type: ignore[arg-type]
        return _render_builtin(message)  # type: ignore[arg-type]
    if kind is AssistantMessage and not message.content:  # type: ignore[union-attr]
        return None
    return message  # type: ignore[return-value]


def _render_builtin(message: CustomMessage) -> LLMMessage | None:
    renderer = BUILTIN_RENDERERS.get(message.kind)
    if renderer is None:
        return None
    try:
        return renderer(message)
    except Exception:
        return None


def convert_to_llm(
    messages: Iterable[AgentMessage], renderers: RendererRegistry | None = None
) -> list[LLMMessage]:
    """The default conversion: a new list of the messages a model may be sent
    (custom messages rendered by ``renderers``, else by `BUILTIN_RENDERERS`)."""
    out: list[LLMMessage] = []
    for message in messages:
        converted = convert_message(message, renderers)
        if converted is not None:
            out.append(converted)
    return out
