"""`Subagents`: the contributor that gives an agent child agents — the ``task`` tool,
`AgentRunner.spawn`, skills that run in a child context — and reports every child.

A child is an `AgentRunner` of its own: its own transcript (it starts from the prompt
alone), the tools its definition allows out of the parent's (never ``task``: the
hierarchy is exactly two levels), the parent's model unless its definition names one,
and the parent's permission gate (`ChildGate`). It runs inside the parent's tool call
(`spawn_child` is awaited by the ``task`` tool's ``execute``), so context variables of
that call reach it, and so does cancellation: aborting the parent aborts every child at
once (their processes included) and the abort's reason reaches them first.

Every child event reaches the parent's sinks and ``*`` subscribers tagged with the
child's ``agent_id`` and the parent's as ``parent_id`` (`ParentStream`). The parent's
bus also gets ``store_update`` events of domain ``subagent`` (``id``: the child's
``agent_id``): ``created`` when a child starts, ``phase`` when it calls the model
(``phase: model``) or a tool (``phase: tool``, ``tool: NAME``), ``done`` when it ends
(``status`` ``completed`` / ``failed`` / ``aborted``, its usage and cost). A child's
usage and cost are added to the parent's (`AgentRunner.add_usage`), so the parent's next
``usage`` event, `AgentRunner.usage` and ``/cost`` include them. Steering the parent
never reaches a child: a child reads only its own queue.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.agent.handoffs import (
    DEFAULT_MAX_HANDOFFS,
    Handoff,
    HandoffFilter,
    Handoffs,
    is_transfer_tool,
)
from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, Event, EventBus, StoreUpdate, ToolResultEvent
from skillkit.subagents.child import (
    ChildGate,
    ChildResult,
    ChildStatus,
    ChildTranscript,
    SharedAdapter,
)
from skillkit.subagents.definition import AgentDefinition
from skillkit.subagents.forward import ParentStream
from skillkit.subagents.registry import AgentRegistry
from skillkit.subagents.skills import fork_target
from skillkit.subagents.task_tool import TASK_TOOL_NAME, TaskTool
from skillkit.tools.base import Tool, ToolResult
from skillkit.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.runner import AgentRunner
    from skillkit.skills.registry import SkillRegistry

__all__ = ["SUBAGENT_DOMAIN", "Subagents", "TranscriptKeeper"]

SUBAGENT_DOMAIN = "subagent"
"""The ``store_update`` domain of child lifecycle events."""

TranscriptKeeper = Callable[[ChildTranscript], None]
"""Keeps a finished child's transcript (the session does, as a branch of its own)."""

_CHILD_PREAMBLE = (
    "You are a child agent working for another agent on one task. You cannot talk to "
    "the user. Your final message is your answer: the other agent sees it and nothing "
    "else, so make it complete and self-contained."
)


class Subagents(Contributor):
    """Child agents for the runner it is attached to (see the module docs).

    ``registry`` holds the definitions (default: the project's and the user's agent
    folders plus the built-in ``general-purpose`` agent). ``skills`` is the parent's
    skill registry: definitions' ``skills`` are read from it, and its skills that
    declare a child context run in a child when loaded. ``tools`` (`child_tools`) are
    tools for children only: a definition that names one gets it, the parent's model
    is never offered it. ``transcripts`` keeps each
    finished child's transcript. Attach it to one runner only
    (``AgentRunner(contributors=[..., Subagents()])``).
    """

    name = "subagents"

    def __init__(
        self,
        registry: AgentRegistry | None = None,
        *,
        skills: SkillRegistry | None = None,
        transcripts: TranscriptKeeper | None = None,
        tools: Iterable[Tool] = (),
    ) -> None:
        self.registry = registry if registry is not None else AgentRegistry()
        self.child_tools = ToolRegistry(tools)
        self.skills = skills
        self.transcripts = transcripts
        self._parent: AgentRunner | None = None
        self._ids = itertools.count(1)
        self._tool: TaskTool | None = None
        self._running: dict[str, AgentRunner] = {}
        self.handoff_targets: dict[str, AgentRunner] = {}
        """The runners built for handoffs, by agent name (each built once)."""

    # ----- contributor parts

    def attach(self, agent: AgentHandle) -> None:
        from skillkit.agent.runner import AgentRunner

        if not isinstance(agent, AgentRunner):
            raise TypeError("Subagents needs an AgentRunner")
        if self._parent is not None and self._parent is not agent:
            raise RuntimeError("Subagents is already attached to another runner")
        self._parent = agent

    def tools(self) -> Sequence[Tool]:
        """The ``task`` tool, rebuilt when the definitions change (checked once per
        turn, so an edited agent file is live on the next turn)."""
        self.registry.refresh()
        definitions = tuple(self.registry.definitions())
        tool = self._tool
        if tool is None or tool.definitions != definitions:
            tool = self._tool = TaskTool(definitions, self._run_task)
        return [tool]

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        """Run a skill that declares a child context in a child: the skill's
        instructions become the child's prompt and its answer the result."""
        if self.skills is None or event.tool_name != "skill" or event.result.is_error:
            return None
        if event.args.get("path") or not isinstance(event.args.get("name"), str):
            return None
        skill = self.skills.get(event.args["name"])
        if skill is None:
            return None
        agent = fork_target(skill)
        if agent is None:
            return None
        definition = self.registry.get(agent)
        if definition is None:
            return ToolResult.error(
                f"Skill '{skill.name}' runs in a child agent '{agent}', which does not exist "
                f"(agents: {', '.join(self.registry.names())})."
            )
        result = await self._spawn(definition, event.result.output, f"skill {skill.name}")
        outcome = result.to_tool_result()
        if not result.ok:
            return outcome
        return ToolResult.text(
            f"Skill '{skill.name}' ran in a child agent ({result.agent_id}). Its answer:\n"
            + outcome.output,
            details=result.details(),
        )

    @property
    def running(self) -> list[str]:
        """The ``agent_id`` of every child running now."""
        return list(self._running)

    # ----- running children

    async def _run_task(self, agent: str, description: str, prompt: str) -> ToolResult:
        definition = self.registry.get(agent)
        if definition is None:
            known = ", ".join(self.registry.names())
            return ToolResult.error(f"No agent named '{agent}' (agents: {known}).")
        result = await self._spawn(definition, prompt, description)
        return result.to_tool_result()

    async def _spawn(
        self, definition: AgentDefinition, prompt: str, description: str
    ) -> ChildResult:
        """One child run (`spawn_child` counts its usage in the parent's)."""
        result = await self.spawn_child(definition, prompt, description=description)
        if not isinstance(result, ChildResult):
            raise TypeError(f"spawn returned {type(result).__name__}, not a ChildResult")
        return result

    async def spawn_child(
        self, definition: Any, prompt: str, *, description: str = ""
    ) -> ChildResult:
        """Run one child to its end (the `ChildSpawner` part behind
        `AgentRunner.spawn`). ``definition`` is an `AgentDefinition` or the name of one.
        Never raises for the child's failure (a `ChildResult` says it); an unknown name
        raises `UnknownAgentError`; cancelling the caller aborts the child and
        propagates once it has ended."""
        parent = self._require_parent()
        if isinstance(definition, str):
            definition = self.registry.require(definition)
        if not isinstance(definition, AgentDefinition):
            raise TypeError(f"expected an AgentDefinition, got {type(definition).__name__}")
        child_id = f"{definition.name}-{next(self._ids)}"
        tracker = _Tracker(parent.events, child_id, definition.name)
        bus = EventBus(
            agent_id=child_id,
            parent_id=parent.events.agent_id,
            redactor=parent.redactor or None,
            strict=parent.events.strict,
        )
        bus.add_sink(ParentStream(parent.events, observe=tracker.observe))
        tracker.update(
            "created", {"agent": definition.name, "description": description, "prompt": prompt}
        )
        try:
            child = self._build(parent, definition, bus)
        except Exception as exc:
            reason = f"could not start: {_one_line(describe_exception(exc))}"
            return tracker.finish(
                ChildResult(child_id, definition.name, description, "failed", error=reason)
            )
        self._running[child_id] = child
        unlink = _link_abort(parent, child)
        result: ChildResult | None = None
        try:
            response = await child.chat(prompt)
            stop = response.stop_reason
            status = _STATUS.get(stop, "failed")
            error = response.error
            if stop == "max_iterations":
                error = f"it stopped at its turn limit ({response.iterations} model calls)"
            elif stop == "aborted":
                error = child.abort_signal.reason or "aborted"
            result = ChildResult(
                child_id,
                definition.name,
                description,
                status,
                text=response.text,
                error=_one_line(error) if error else None,
                usage=child.usage,
                cost=tracker.cost,
                turns=response.iterations,
            )
            return result
        finally:
            unlink()
            self._running.pop(child_id, None)
            if result is None:  # cancelled: the child was aborted and has ended
                result = ChildResult(
                    child_id,
                    definition.name,
                    description,
                    "aborted",
                    error=child.abort_signal.reason or "aborted",
                    usage=child.usage,
                    cost=tracker.cost,
                )
            parent.add_usage(result.usage, result.cost)
            tracker.finish(result)
            self._keep(child, definition, description, prompt, result.status)
            await asyncio.shield(child.aclose())

    def handoff(
        self,
        definition: AgentDefinition | str,
        *,
        description: str | None = None,
        input_filter: HandoffFilter | None = None,
    ) -> Handoff:
        """A `Handoff` to the agent ``definition`` (or the name of one): it answers the
        user in place of the runner that hands over, with the definition's model, tools
        and mode, judged by that runner's permission gate (see ``docs/subagents.md``).
        Its runner is built when first handed to and kept."""
        if isinstance(definition, str):
            definition = self.registry.require(definition)
        return Handoff(
            lambda origin: self._handoff_runner(origin, definition),
            name=definition.name,
            description=description or definition.description,
            input_filter=input_filter,
        )

    def handoffs(self, *names: str, max_handoffs: int = DEFAULT_MAX_HANDOFFS) -> Handoffs:
        """A `Handoffs` contributor for the agents ``names`` (add it to the runner's
        contributors)."""
        return Handoffs([self.handoff(name) for name in names], max_handoffs=max_handoffs)

    def _handoff_runner(self, origin: AgentRunner, definition: AgentDefinition) -> AgentRunner:
        """The runner that answers for ``definition`` after a handoff (built once): its
        events reach ``origin``'s subscribers; its definition's ``handoff_to`` names the
        agents it may hand on to (``origin``'s ``agent_id`` names ``origin``)."""
        runner = self.handoff_targets.get(definition.name)
        if runner is not None:
            return runner
        bus = EventBus(
            agent_id=definition.name,
            parent_id=origin.events.agent_id,
            redactor=origin.redactor or None,
            strict=origin.events.strict,
        )
        bus.add_sink(ParentStream(origin.events))
        onward = [
            Handoff(origin) if name == origin.config.agent_id else self.handoff(name)
            for name in definition.handoff_to
        ]
        extra = [Handoffs(onward)] if onward else []
        runner = self._build(origin, definition, bus, answers_user=True, extra=extra)
        self.handoff_targets[definition.name] = runner
        return runner

    def _build(
        self,
        parent: AgentRunner,
        definition: AgentDefinition,
        bus: EventBus,
        *,
        answers_user: bool = False,
        extra: Sequence[Contributor] = (),
    ) -> AgentRunner:
        """The child's runner: config, adapter, tools and gate (see the module docs).
        ``answers_user``: a handoff's target, which talks to the user in the parent's
        place (its own system prompt, the parent's approvals and guardrails)."""
        import msgspec

        from skillkit.agent.runner import AgentRunner
        from skillkit.config import AgentConfig

        base = (
            parent.config
            if answers_user
            else msgspec.structs.replace(  # a child answers its parent, not the user
                parent.config, approvals="ask", input_guardrails=[], output_guardrails=[]
            )
        )
        system_prompt = self._system_prompt(definition, parent, preamble=not answers_user)
        turns = definition.max_turns or base.max_iterations
        adapter: LLMAdapter | None
        if definition.model is None:
            adapter = SharedAdapter(parent.adapter)
            config = msgspec.structs.replace(
                base, agent_id=bus.agent_id, system_prompt=system_prompt, max_iterations=turns
            )
        else:
            adapter = (
                SharedAdapter(parent.adapters.get(definition.model))
                if definition.model in parent.adapters
                else None
            )
            config = AgentConfig(  # its own model: none of the parent's model settings
                model=definition.model,
                agent_id=bus.agent_id,
                system_prompt=system_prompt,
                max_iterations=turns,
                tool_execution=base.tool_execution,
                approvals=base.approvals,
                approval_timeout=base.approval_timeout,
                max_repeats=base.max_repeats,
                input_guardrails=base.input_guardrails,
                output_guardrails=base.output_guardrails,
            )
        tools = self._tools_of(parent, definition)
        permissions = _permissions_of(parent)
        gate = getattr(permissions, "gate", None)
        bind = getattr(permissions, "bind_path_policy", None)  # the parent's file policy
        inherited = []  # the parent's guards a child must meet too (shell hooks)
        for contributor in parent.contributors:
            for_child = getattr(contributor, "for_child", None)
            child = for_child() if callable(for_child) else None
            if child is not None:
                inherited.append(child)
        return AgentRunner(
            config,
            adapter=adapter,
            tools=tools,
            events=bus,
            contributors=[
                *inherited,
                ChildGate(definition, gate, bind_tool=bind if callable(bind) else None),
                *extra,
            ],
            redactor=parent.redactor,
            compaction=parent.compaction,
            models=parent.models,
        )

    def _tools_of(self, parent: AgentRunner, definition: AgentDefinition) -> list[Tool]:
        """The child's tools: its own, then the named ones from the parent's offered
        tools or the children's registry (all the parent's but ``task`` when its
        definition names none). Raises `LookupError` for a name found in neither."""
        offered = [
            t
            for t in parent.offered_tools()
            if _offered_to_child(definition, t.name) and not is_transfer_tool(t)
        ]
        if definition.tools is None:
            return offered
        tools: dict[str, Tool] = {t.name: t for t in definition.own_tools}
        by_name = {t.name: t for t in offered}
        missing = []
        for name in definition.tool_names:
            if name in tools or name in _NEVER_OFFERED:
                continue
            found = by_name.get(name) or self.child_tools.get(name)
            if found is None:
                missing.append(name)
            else:
                tools[name] = found
        if missing:
            raise LookupError(
                f"agent {definition.name!r} names tools that neither the parent nor the "
                f"child tool registry has: {', '.join(missing)}"
            )
        return list(tools.values())

    def _system_prompt(
        self, definition: AgentDefinition, parent: AgentRunner, *, preamble: bool = True
    ) -> str:
        parts = [_CHILD_PREAMBLE] if preamble else []
        if definition.prompt:
            parts.append(definition.prompt)
        for name in definition.skills:
            skill = self.skills.get(name) if self.skills is not None else None
            if skill is None:
                parent.events.emit_nowait(
                    ErrorInfo(
                        stage=f"subagent:{definition.name}",
                        message=f"skill '{name}' named by agent '{definition.name}' is not loaded",
                    )
                )
                continue
            from skillkit.skills.prompt import render_skill_content

            parts.append(render_skill_content(skill))
        return "\n\n".join(parts)

    def _keep(
        self,
        child: AgentRunner,
        definition: AgentDefinition,
        description: str,
        prompt: str,
        status: ChildStatus,
    ) -> None:
        keeper = self.transcripts
        if keeper is None:
            return
        transcript = ChildTranscript(
            child.events.agent_id,
            definition.name,
            description,
            prompt,
            status,
            tuple(child.messages),
        )
        try:
            keeper(transcript)
        except Exception as exc:  # a full disk must not fail the parent's run
            parent = self._require_parent()
            parent.events.emit_nowait(
                ErrorInfo(stage="subagent:transcript", message=_one_line(describe_exception(exc)))
            )

    def abort_all(self, reason: str = "aborted") -> int:
        """Abort every running child; returns how many there were."""
        children = list(self._running.values())
        for child in children:
            child.abort(reason)
        return len(children)

    def _require_parent(self) -> AgentRunner:
        if self._parent is None:
            raise RuntimeError("Subagents is not attached to a runner")
        return self._parent


_STATUS: dict[str, ChildStatus] = {
    "stop": "completed",
    "tool_use": "completed",
    "length": "completed",
    "aborted": "aborted",
}
"""A child's status by its run's stop reason (any other reason: ``failed``)."""


class _Tracker:
    """Follows one child's events for the parent's subagent panel: ``store_update``
    events and the child's running cost."""

    __slots__ = ("agent_id", "bus", "cost", "name", "phase")

    def __init__(self, bus: EventBus, agent_id: str, name: str) -> None:
        self.bus = bus
        self.agent_id = agent_id
        self.name = name
        self.cost: float | None = None
        self.phase: tuple[str, str | None] = ("", None)

    def observe(self, event: Event[Any]) -> None:
        if event.agent_id != self.agent_id:
            return
        match event.type:
            case "turn_start":
                self._phase("model", None)
            case "tool_execution_start":
                self._phase("tool", str(event.payload.tool_name))
            case "usage":
                self.cost = event.payload.cumulative_cost
            case _:
                pass

    def _phase(self, phase: str, tool: str | None) -> None:
        if (phase, tool) == self.phase:
            return
        self.phase = (phase, tool)
        self.update("phase", {"agent": self.name, "phase": phase, "tool": tool})

    def update(self, op: str, payload: dict[str, Any]) -> None:
        self.bus.emit_nowait(
            StoreUpdate(domain=SUBAGENT_DOMAIN, op=op, id=self.agent_id, payload=payload)
        )

    def finish(self, result: ChildResult) -> ChildResult:
        self.update("done", result.details())
        return result


_NEVER_OFFERED = frozenset({TASK_TOOL_NAME, "exit_plan_mode", "ask_user"})
"""Tools a child never gets: ``task`` (two levels), and the two that talk to the user
(a child works for its parent, not the user)."""


def _offered_to_child(definition: AgentDefinition, name: str) -> bool:
    return name not in _NEVER_OFFERED and definition.allows(name)


def _permissions_of(parent: AgentRunner) -> object | None:
    """The parent's permission layer (the contributor holding its gate), if any."""
    for contributor in reversed(parent.contributors):
        gate = getattr(contributor, "gate", None)
        if gate is not None and callable(getattr(gate, "check", None)):
            return contributor
    return None


def _link_abort(parent: AgentRunner, child: AgentRunner) -> Callable[[], None]:
    """Abort ``child`` when the parent's run in flight is aborted (nothing to link when
    the parent is idle: cancelling the caller reaches the child then)."""
    if not parent.is_running:
        return lambda: None
    signal = parent.abort_signal
    if signal.aborted:
        child.abort(signal.reason or "aborted")
        return lambda: None
    return signal.on_abort(lambda: child.abort(signal.reason or "aborted"))


def _one_line(text: str) -> str:
    return " ".join(text.split())
