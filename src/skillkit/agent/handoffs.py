"""Handoffs: an agent hands the conversation to another agent, which answers the user.

An agent given `Handoffs` offers its model one tool per target, ``transfer_to_<name>``.
When the model calls one, the turn's calls are answered as usual and the run's loop ends
there (``agent_end`` with ``stop_reason="handoff"``); a ``handoff`` event names the agent
that now answers, and that agent's loop continues the same run on the transcript so far
(through the target's ``input_filter`` if it has one) — with its own model, system
prompt, tools and contributors (its permission gate among them), nothing of the agent
that handed over. The caller gets the target's answer; the runner's later runs go to the
agent that answers now (`Handoffs.active`) until it hands the conversation on again.

A run hands over at most ``max_handoffs`` times (a cycle of agents handing back and
forth ends with ``stop_reason="error"``). One handoff per turn: a second
``transfer_to_*`` call of the same turn is answered with an error and not taken.

The target is an `AgentRunner` (its loop runs inside the run of the runner that was
asked: that runner's event bus, abort signal and usage) or a function that builds one
the first time it is needed (`skillkit.subagents.Subagents.handoff` builds it from an
`AgentDefinition`). Which agent answers is `Handoffs.active_name`: a paused run's
`RunState` carries it (``active_agent``), so `AgentRunner.resume` in another process
gives the paused calls to the agent that made them (`Handoffs.restore`), and an
application keeping a conversation can record it and restore it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from skillkit.agent.contributors import Contributor
from skillkit.events import ErrorInfo, Payload
from skillkit.models import AgentMessage, TextPart, ToolResult, ToolResultMessage
from skillkit.tools.base import ToolContext

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.agent.loop_context import LoopContext, RunOutcome
    from skillkit.tools.base import Tool

__all__ = [
    "DEFAULT_MAX_HANDOFFS",
    "Handoff",
    "HandoffChoice",
    "HandoffFilter",
    "HandoffTaken",
    "Handoffs",
    "chooser",
    "handed_to",
    "handoffs_of",
    "is_transfer_tool",
    "restore_active_agent",
    "spliced",
]

DEFAULT_MAX_HANDOFFS = 5
"""How many times one run may hand the conversation on (`Handoffs.max_handoffs`)."""

HandoffFilter = Callable[[list[AgentMessage]], list[AgentMessage]]
"""What the target sees of the transcript: given the transcript so far (ending with the
``transfer_to_*`` call's result), the messages the target's model is sent. Every tool
call it keeps must keep its result."""

AgentRunner = Any
"""An `skillkit.agent.AgentRunner` (named loosely: the runner's own module imports
this one)."""

_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")


class HandoffTaken(Payload, frozen=True, kw_only=True):
    """The conversation was handed on: ``to_agent`` answers from now on, in place of
    ``from_agent`` (``count``: the handoffs of this run so far)."""

    kind: ClassVar[str] = "handoff"

    from_agent: str
    to_agent: str
    count: int = 1


@cache
def _no_arguments() -> type[BaseModel]:
    """The transfer tools' argument model (none), made on the first call's validation:
    pydantic is not imported for an agent that only offers the tool."""
    from pydantic import BaseModel, ConfigDict

    class NoArguments(BaseModel):
        model_config = ConfigDict(extra="forbid")

    return NoArguments


class Handoff:
    """One agent the conversation can be handed to.

    ``agent`` is an `AgentRunner`, or a function of the runner handing over that builds
    one (called once, when first needed). ``name`` (default: the runner's
    ``config.agent_id``; required for a builder) names the tool ``transfer_to_<name>``;
    ``description`` tells the model when to use it. ``input_filter`` (a `HandoffFilter`)
    trims what the target sees."""

    __slots__ = ("_agent", "_build", "description", "input_filter", "name")

    def __init__(
        self,
        agent: AgentRunner | Callable[[AgentRunner], AgentRunner],
        *,
        name: str | None = None,
        description: str = "",
        input_filter: HandoffFilter | None = None,
    ) -> None:
        self._agent: AgentRunner | None = None
        self._build: Callable[[AgentRunner], AgentRunner] | None = None
        if hasattr(agent, "config") and hasattr(agent, "chat"):  # a runner
            self._agent = agent
            name = name or agent.config.agent_id
        elif callable(agent):
            self._build = agent
            if not name:
                raise ValueError("a handoff built by a function needs a name")
        else:
            raise TypeError(f"a handoff needs an AgentRunner, got {type(agent).__name__}")
        assert name is not None
        self.name = name
        self.description = description
        self.input_filter = input_filter

    @property
    def tool_name(self) -> str:
        return "transfer_to_" + _UNSAFE.sub("_", self.name).strip("_").lower()

    def runner(self, origin: AgentRunner) -> AgentRunner:
        """The target's runner (built on first use, from ``origin``, when given a builder)."""
        if self._agent is None:
            assert self._build is not None
            self._agent = self._build(origin)
        return self._agent


class _TransferTool:
    """The ``transfer_to_<name>`` tool: it records the choice on its `Handoffs`."""

    args_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    sequential = True
    read_only = True  # it changes nothing; the target's own calls are judged as they come

    def __init__(self, owner: Handoffs, handoff: Handoff) -> None:
        self.owner = owner
        self.handoff = handoff
        self.name = handoff.tool_name
        about = handoff.description or f"the {handoff.name} agent"
        self.description = (
            f"Hand the conversation to the {handoff.name} agent, which answers the user "
            f"from then on: {about}"
        )

    @property
    def args_model(self) -> type[BaseModel]:
        return _no_arguments()

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:
        raise AttributeError("a transfer tool takes no arguments")

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        chosen = self.owner._chosen
        if chosen is not None and chosen is not self.handoff:
            text = f"Not transferred: this turn already hands the conversation to {chosen.name}."
            return ToolResult(content=[TextPart(text=text)], is_error=True)
        self.owner._chosen = self.handoff
        text = f"Transferred to {self.handoff.name}; it answers from here."
        return ToolResult(content=[TextPart(text=text)], details={"handoff": self.handoff.name})


class Handoffs(Contributor):
    """The agents a runner may hand the conversation to (a contributor: add it to the
    runner's ``contributors``). ``targets`` are `Handoff` values or runners;
    ``max_handoffs`` bounds the handoffs of one run (see the module docs).

    ``active`` is the agent that answers the runner's next run (None: the runner
    itself) and ``active_name`` its name (the ``to_agent`` of the ``handoff`` event that
    gave it the conversation); `reset` gives the conversation back to the runner and
    `restore` hands it to an agent by name (a recorded conversation reopened)."""

    name = "handoffs"

    def __init__(
        self,
        targets: Iterable[Handoff | AgentRunner],
        *,
        max_handoffs: int = DEFAULT_MAX_HANDOFFS,
    ) -> None:
        if max_handoffs < 1:
            raise ValueError(f"max_handoffs must be at least 1, got {max_handoffs}")
        self.targets = [t if isinstance(t, Handoff) else Handoff(t) for t in targets]
        names = [t.tool_name for t in self.targets]
        if len(set(names)) != len(names):
            raise ValueError(f"two handoffs share a tool name: {', '.join(names)}")
        self.max_handoffs = max_handoffs
        self.active: AgentRunner | None = None
        self.active_name: str | None = None
        self._chosen: Handoff | None = None
        self._tools: Sequence[Tool] = [_TransferTool(self, t) for t in self.targets]

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def take_handoff(self) -> Handoff | None:
        """The handoff the current turn chose (and forget it); None: none."""
        chosen, self._chosen = self._chosen, None
        return chosen

    def reset(self) -> None:
        """The runner itself answers from its next run on."""
        self.active = None
        self.active_name = None
        self._chosen = None

    def answered_by(self, handoff: Handoff, agent: AgentRunner, origin: AgentRunner) -> None:
        """``agent`` (``handoff``'s runner) answers ``origin``'s conversation from now on
        (``origin`` itself: it answers again)."""
        if agent is origin:
            self.reset()
        else:
            self.active, self.active_name = agent, handoff.name

    def restore(self, name: str | None, origin: AgentRunner) -> None:
        """Give the conversation to the agent ``name`` (None, or ``origin``'s own
        ``agent_id``: ``origin`` answers), as a run that handed it there would have.
        The agent is looked for among the targets, then among the targets' own
        handoffs (building them). Raises `LookupError` when none has that name — the
        caller decides; nothing is changed then."""
        if name is None or name == origin.config.agent_id:
            self.reset()
            return
        handoff = _find(self.targets, name, origin)
        if handoff is None:
            known = ", ".join(t.name for t in self.targets) or "none"
            raise LookupError(f"no agent named {name!r} to hand the conversation to ({known})")
        self.answered_by(handoff, handoff.runner(origin), origin)


def _find(targets: Sequence[Handoff], name: str, origin: AgentRunner) -> Handoff | None:
    """The handoff named ``name`` among ``targets``, else among the handoffs of the
    targets' runners (breadth first, each runner once)."""
    seen: set[int] = set()
    level = list(targets)
    while level:
        for handoff in level:
            if handoff.name == name:
                return handoff
        onward: list[Handoff] = []
        for handoff in level:
            try:
                runner = handoff.runner(origin)
            except Exception:  # a target that cannot be built hands nothing on
                continue
            if id(runner) in seen or runner is origin:
                continue
            seen.add(id(runner))
            own = handoffs_of(getattr(runner, "contributors", ()))
            if own is not None:
                onward.extend(own.targets)
        level = onward
    return None


def restore_active_agent(runner: AgentRunner, name: str | None) -> None:
    """Make the agent ``name`` answer ``runner``'s conversation (None: the runner
    itself), through the runner's `Handoffs`. `LookupError` when the runner has no
    `Handoffs` that reaches it: calls an agent made must not go to another one."""
    own = handoffs_of(runner.contributors)
    if own is not None:
        own.restore(name, runner)
    elif name is not None and name != runner.config.agent_id:
        raise LookupError(
            f"the run was answered by agent {name!r}, and this runner hands the "
            "conversation to no agent"
        )


def handed_to(messages: Iterable[AgentMessage]) -> str | None:
    """The agent the last ``transfer_to_*`` call of ``messages`` handed the conversation
    to, by the name its result records (None: no transfer in them). What a transcript
    says when nothing else recorded who answers; it cannot tell a transfer a run
    refused over ``max_handoffs`` from one it took."""
    for message in reversed(list(messages)):
        if type(message) is ToolResultMessage and not message.is_error:
            details = message.details
            name = details.get("handoff") if isinstance(details, dict) else None
            if isinstance(name, str) and name and message.tool_name.startswith("transfer_to_"):
                return name
    return None


def is_transfer_tool(tool: object) -> bool:
    """Whether ``tool`` is a ``transfer_to_*`` tool of some `Handoffs` (a child built
    from the runner's tools must not get it: the choice would land on the runner's
    `Handoffs`, not the child's)."""
    return isinstance(tool, _TransferTool)


def handoffs_of(contributors: Iterable[object]) -> Handoffs | None:
    """The `Handoffs` among a runner's contributors (None: it hands nothing over)."""
    for contributor in contributors:
        if callable(getattr(type(contributor), "take_handoff", None)):
            return contributor  # type: ignore[return-value]
    return None


class HandoffChoice:
    """What a turn's ``transfer_to_*`` call asks for: the `Handoff`, and the run's
    handoff count with it (``refused``: over ``max_handoffs``, the run ends with an
    error instead)."""

    __slots__ = ("from_agent", "handoff", "limit", "number")

    def __init__(self, handoff: Handoff, from_agent: str, number: int, limit: int) -> None:
        self.handoff = handoff
        self.from_agent = from_agent
        self.number = number
        self.limit = limit

    @property
    def refused(self) -> bool:
        return self.number > self.limit

    async def end_run(self, ctx: LoopContext, outcome: RunOutcome, turn: int) -> None:
        """End the run on this choice (called by the loop after the turn's calls):
        ``handoff`` and the ``handoff`` event, or an error when it is refused."""
        if self.refused:
            outcome.stop_reason = "error"
            outcome.error = (
                f"the run stopped: {self.from_agent} tried to hand the conversation to "
                f"{self.handoff.name}, over the limit of {self.limit} handoffs in one run"
            )
            await ctx.bus.emit(ErrorInfo(stage="handoff", message=outcome.error), turn=turn)
            return
        outcome.stop_reason, outcome.handoff = "handoff", self.handoff
        if ctx.bus.wants("handoff"):
            await ctx.bus.emit(
                HandoffTaken(
                    from_agent=self.from_agent, to_agent=self.handoff.name, count=self.number
                ),
                turn=turn,
            )


def chooser(
    contributors: Iterable[object], from_agent: str, handed: int, limit: int
) -> Callable[[], HandoffChoice | None] | None:
    """The loop's ``handoff`` seam for an agent with these contributors (None: it
    hands nothing over), ``handed`` handoffs into a run that allows ``limit``."""
    own = handoffs_of(contributors)
    if own is None:
        return None

    def choose() -> HandoffChoice | None:
        handoff = own.take_handoff()
        if handoff is None:
            return None
        return HandoffChoice(handoff, from_agent, handed + 1, limit)

    return choose


def spliced(
    messages: list[AgentMessage], shown: list[AgentMessage], after: list[AgentMessage]
) -> list[AgentMessage]:
    """The runner's transcript after a run on ``shown`` (``messages`` as a handoff's
    filter let the target see them) left ``after``: ``messages`` and what the run added."""
    if shown is messages:
        return after
    return [*messages, *after[len(shown) :]]
