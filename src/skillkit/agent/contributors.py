"""`Contributor`: the one seam through which a layer adds to an agent.

A contributor may offer any of these parts; each is optional (the base class's versions
do nothing and are skipped):

- ``tools()`` — tools to offer, asked once per turn;
- ``transform_input(content)`` — the user's message before it enters the transcript
  (answer an `InputResult`, new content, or None);
- ``system_prompt()`` — a system-prompt section, asked once per turn (None: nothing);
- ``transform_context(messages)`` — reshape the messages before each model call;
- ``before_tool_call(call)`` — block a call or replace its arguments;
- ``after_tool_result(event)`` — replace a tool's result;
- ``boundary_messages()`` — messages to fold in before each model call (background
  results, monitor lines);
- ``stop_check(messages)`` — asked with the transcript when a run is about to end with
  ``stop`` (no follow-up waiting); a text answer is sent to the model as the next user
  message and the run goes on (None: the run may end);
- ``offers(part)`` — whether a part it defines is offered now (default: yes); asked
  when a run's `Hooks` are built;
- ``attach(agent)`` — called once when the runner is built (subscribe to its bus...);
- ``aclose()`` — release what it holds when the runner closes.

The runner builds one `Hooks` value per run from its contributors (see
`skillkit.agent.hooks`). Contributors apply in the order of the ``contributors`` list,
after the bus's own control handlers: the permission gate goes last so it judges the
final arguments of a call. Every hook fails closed (see `Hooks`).
`AgentRunner.contributors` shows that order. Skills, the permission gate, plugin
bindings, subagents, MCP servers and the session store are contributors.

State of a layer that does not know the agent — the runtime's `TodoList` and
`BackgroundTasks`, which the built-in tools use — cannot subclass `Contributor`; it is an
`Attachable` (a ``name`` and ``attach``, with ``boundary_messages`` and ``aclose`` where
it defines them), and the runner takes it as a contributor all the same (`adopt`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.agent.roles import ApprovalResponder, ModeControl
from skillkit.config import AgentConfig
from skillkit.events import (
    EventBus,
    InputResult,
    ToolCallEvent,
    ToolCallEventResult,
    ToolResultEvent,
)
from skillkit.models import AgentMessage, ToolResult, UserContent
from skillkit.tools.base import Tool

if TYPE_CHECKING:
    from skillkit.model_registry import ModelRegistry

__all__ = [
    "Adopted",
    "AgentHandle",
    "ApprovalResponder",
    "Attachable",
    "Contributor",
    "ModeControl",
    "PromptSection",
    "ToolProvider",
    "adopt",
    "contributes",
]

PromptSection = Callable[[], "str | None"]
"""A provider of one system-prompt section, called once per turn (None: nothing)."""


class ToolProvider(Protocol):
    """A provider of tools, asked once per turn which tools to offer."""

    def tools(self) -> Sequence[Tool]: ...


class AgentHandle(Protocol):
    """What `Contributor.attach` gets: the agent's configuration, event bus and model
    registry (an `AgentRunner` is one)."""

    @property
    def config(self) -> AgentConfig: ...

    @property
    def events(self) -> EventBus: ...

    @property
    def models(self) -> ModelRegistry: ...


class Contributor:
    """Base class of contributors; override the parts you offer (see the module docs).

    ``name`` labels the contributor in `AgentRunner.contributors` and error events.
    Every part must be cheap: the per-turn parts run on every turn. A part that raises
    is reported as an ``error`` event; a hook that raises fails closed (see `Hooks`): a
    ``before_tool_call`` blocks the call, a ``transform_context`` stops the model call.
    """

    name: str = ""

    def tools(self) -> Sequence[Tool]:
        return ()

    async def transform_input(
        self, content: str | list[UserContent]
    ) -> InputResult | str | list[UserContent] | None:
        return None

    def offers(self, part: str) -> bool:
        return True

    def system_prompt(self) -> str | None:
        return None

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return messages

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        return None

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        return None

    def boundary_messages(self) -> list[AgentMessage]:
        return []

    async def stop_check(self, messages: list[AgentMessage]) -> str | None:
        return None

    def attach(self, agent: AgentHandle) -> None:
        return None

    async def aclose(self) -> None:
        return None


def contributes(contributor: Any, part: str) -> bool:
    """Whether ``contributor`` offers ``part`` (it defines it, and not as the base
    class's do-nothing version)."""
    method = getattr(type(contributor), part, None)
    return method is not None and method is not getattr(Contributor, part, None)


class Attachable(Protocol):
    """A contributor from a layer that does not know the agent, so cannot subclass
    `Contributor`: it is told the agent once (``attach``); ``boundary_messages()`` and
    ``aclose()``, where it defines them, are its parts too."""

    @property
    def name(self) -> str: ...

    def attach(self, agent: AgentHandle) -> None: ...


class Adopted(Contributor):
    """An `Attachable` as a contributor (what `adopt` makes): its parts are the target's,
    as far as the target defines them; ``target`` is the object itself."""

    def __init__(self, target: Attachable) -> None:
        self.target = target
        self.name = target.name or type(target).__name__

    def offers(self, part: str) -> bool:
        return callable(getattr(self.target, part, None))

    def attach(self, agent: AgentHandle) -> None:
        self.target.attach(agent)

    def boundary_messages(self) -> list[AgentMessage]:
        messages: list[AgentMessage] = getattr(self.target, "boundary_messages")()  # noqa: B009
        return messages

    async def aclose(self) -> None:
        await getattr(self.target, "aclose")()  # noqa: B009


def adopt(contributor: Contributor | Attachable) -> Contributor:
    """``contributor`` as the runner keeps it: a `Contributor` as it is, an `Attachable`
    in an `Adopted` (asked for its parts only where ``offers`` says it has them)."""
    return contributor if isinstance(contributor, Contributor) else Adopted(contributor)


def adopted(contributor: Contributor) -> Contributor | Attachable:
    """The object a contributor was made from: an `Adopted`'s target, else itself."""
    return contributor.target if isinstance(contributor, Adopted) else contributor
