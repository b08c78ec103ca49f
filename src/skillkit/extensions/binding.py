"""`RunnerBinding`: a plugin manager's hooks wired into one `AgentRunner`'s seams.

Nothing here patches the agent loop. The binding uses only what the runner offers
every caller:

- one contributor, placed before the others: the plugins' tools and the skill
  registry's tools, and a system-prompt part holding ``skillkit_system_prompt``'s
  answer (first of all sections) followed by the skill catalog; a second one, kept
  after `detach`, closes the adapters SkillKit made for the agent;
- the same contributor offers the lifecycle hooks as the runner's hooks: a context
  transform (``skillkit_transform_context``), ``before_tool_call`` and
  ``after_tool_result`` (``skillkit_before_tool_call`` / ``skillkit_after_tool_call``),
  each only while some plugin implements it (`Contributor.offers`); one ``*`` bus
  handler (``skillkit_on_event``) while a plugin implements that;
- the ``convert_to_llm`` seam (``skillkit_convert_to_llm``, then
  ``skillkit_render_custom_message`` per custom message, then the runner's own
  conversion);
- the runner's ``adapters`` registry, which sees the plugins' adapter registry live
  (`AdapterRegistry.see_also`): ``runner.set_adapter(NAME)`` reaches an adapter a plugin
  registers before or after the binding is made.

Implementations run in pluggy's order (LIFO). For ``before_tool_call`` the first block
wins and argument replacements apply in order; ``after_tool_call`` overrides fold in
order. A guarding hook (context transform, conversion, tool hooks) that raises fails
closed, as every hook does: it is reported and the call — or the model call — is refused.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from skillkit.agent.contributors import Contributor
from skillkit.confinement import Confinement
from skillkit.context import convert_message
from skillkit.events import (
    ErrorInfo,
    Event,
    EventBus,
    ToolCallEvent,
    ToolCallEventResult,
    ToolResultEvent,
    ToolResultEventResult,
)
from skillkit.extensions.calling import (
    DELEGATES_TO_REGISTRY,
    call_first,
    invoke,
    invoke_sync,
    is_async,
    ordered,
)
from skillkit.extensions.hookspecs import AgentContext
from skillkit.extensions.registries import Registries
from skillkit.models import AgentMessage, CustomMessage, LLMMessage, ToolCall, ToolResult

if TYPE_CHECKING:
    from pluggy import HookImpl, HookRelay

    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig
    from skillkit.tools.base import Tool

__all__ = ["PluginHooks", "RunnerBinding"]

_BUS_HOOKS = {"*": "skillkit_on_event"}

_PART_HOOKS = {
    "transform_context": "skillkit_transform_context",
    "before_tool_call": "skillkit_before_tool_call",
    "after_tool_result": "skillkit_after_tool_call",
}


class PluginHooks(Protocol):
    """What a binding uses of its plugin manager (`PluginManager` is one): the hooks
    to call, the registries to follow, and where a failing hook is reported."""

    @property
    def registries(self) -> Registries: ...

    @property
    def hook(self) -> HookRelay: ...

    def hook_failed(
        self, plugin: str, hook_name: str, exc: BaseException, bus: EventBus | None = None
    ) -> None: ...


class RunnerBinding:
    """The connection between one runner and one `PluginManager` (see the module
    docs). Made by `PluginManager.attach`; `sync` follows plugin changes; `detach`
    undoes everything the binding added."""

    def __init__(self, manager: PluginHooks, runner: AgentRunner) -> None:
        self.manager = manager
        self.runner = runner
        self._turn: int | None = None
        self._prompt: str | None = None
        self._prompt_ready = False
        self._subscriptions: dict[str, Callable[[], None]] = {}
        self._original_convert = runner.convert_to_llm
        self._convert_installed = False
        self._parts = _PluginParts(self)
        self._remove_parts: Callable[[], None] | None = None
        self._closer_added = False
        self._untrack_turn: Callable[[], None] | None = None
        self._unwatch_skills: Callable[[], None] | None = None
        self._history: list[tuple[LLMAdapter, AgentConfig]] = []
        self._call_cache: tuple[str, dict[str, Any], ToolCall, Any] | None = None
        self._created: list[LLMAdapter] = []
        self._unsee_adapters: Callable[[], None] | None = None

    # ----- wiring

    def install(self) -> None:
        runner = self.runner
        registries = self.manager.registries
        skills = registries.skills
        if skills is not None:
            self._unwatch_skills = skills.attach(runner.events)
        if self._remove_parts is None:
            self._remove_parts = runner.add_contributor(self._parts, first=True)
        if not self._closer_added:  # stays after detach: made adapters close with the agent
            runner.add_contributor(_AdapterCloser(self))
            self._closer_added = True
        self._untrack_turn = runner.events.on("turn_start", self._on_turn_start)
        self._unsee_adapters = runner.adapters.see_also(registries.adapters)
        self.sync()

    def sync(self) -> None:
        """Follow the manager's current plugins: subscribe the ``*`` handler while a
        plugin implements ``skillkit_on_event``, install the conversion seam while one
        converts (the hooks follow the plugins by themselves, from the next run on)."""
        hook = self.manager.hook
        bus = self.runner.events
        handlers: dict[str, Callable[[Event], Any]] = {"*": self._on_event}
        for event_type, hook_name in _BUS_HOOKS.items():
            wanted = bool(ordered(getattr(hook, hook_name)))
            subscribed = event_type in self._subscriptions
            if wanted and not subscribed:
                self._subscriptions[event_type] = bus.on(event_type, handlers[event_type])
            elif subscribed and not wanted:
                self._subscriptions.pop(event_type)()
        converts = bool(ordered(hook.skillkit_convert_to_llm)) or any(
            not getattr(impl.function, DELEGATES_TO_REGISTRY, False)
            for impl in ordered(hook.skillkit_render_custom_message)
        )
        if converts and not self._convert_installed:
            self._original_convert = self.runner.convert_to_llm
            self.runner.convert_to_llm = self._convert
            self._convert_installed = True
        elif not converts and self._convert_installed:
            self.runner.convert_to_llm = self._original_convert
            self._convert_installed = False
        self._prompt_ready = False

    def detach(self) -> None:
        runner = self.runner
        for unsubscribe in self._subscriptions.values():
            unsubscribe()
        self._subscriptions.clear()
        if self._untrack_turn is not None:
            self._untrack_turn()
            self._untrack_turn = None
        if self._unwatch_skills is not None:
            self._unwatch_skills()
            self._unwatch_skills = None
        if self._unsee_adapters is not None:
            self._unsee_adapters()
            self._unsee_adapters = None
        if self._convert_installed:
            runner.convert_to_llm = self._original_convert
            self._convert_installed = False
        if self._remove_parts is not None:
            self._remove_parts()
            self._remove_parts = None
        # the closer stays: adapters made for the agent are still closed with it

    # ----- adapters

    def switch_adapter(self, adapter: LLMAdapter, model: str, *, created: bool = False) -> None:
        """Use ``adapter`` (as ``model``) from the next call on, remembering the current
        one so `switch_back` can return to it. ``created``: SkillKit made the adapter
        for this agent, so it is closed when the agent closes."""
        runner = self.runner
        self._history.append((runner.adapter, runner.config))
        runner.set_adapter(adapter)
        runner.config = msgspec.structs.replace(runner.config, model=model)
        if created:
            self._created.append(adapter)

    def switch_back(self) -> bool:
        """Return to the adapter used before the last switch (False: there was none)."""
        if not self._history:
            return False
        adapter, config = self._history.pop()
        self.runner.set_adapter(adapter)
        self.runner.config = config
        return True

    async def close_created(self) -> None:
        """Close the adapters SkillKit made for this agent (a runner closer; the runner
        closes the adapter it is using itself)."""
        created, self._created = self._created, []
        for adapter in created:
            if adapter is not self.runner.adapter:
                await adapter.aclose()

    def adapters_removed(self, removed: Sequence[LLMAdapter]) -> None:
        """Some adapters left the registry: an agent using one goes back to the one it
        used before (repeatedly, if that one left too); the history forgets them."""
        gone = {id(a) for a in removed}
        while id(self.runner.adapter) in gone and self._history:
            self.switch_back()
        self._history = [(a, c) for a, c in self._history if id(a) not in gone]

    # ----- hooks

    def _context(self, turn: int | None = None) -> AgentContext:
        return AgentContext(self.runner, turn if turn is not None else self._turn)

    def _failed(self, impl: HookImpl, hook_name: str, exc: BaseException) -> None:
        self.manager.hook_failed(impl.plugin_name, hook_name, exc, self.runner.events)

    def _on_turn_start(self, event: Event) -> Any:
        self._turn = event.turn
        self._prompt_ready = False
        impls = ordered(self.manager.hook.skillkit_system_prompt)
        if any(is_async(impl) for impl in impls):
            return self._prepare_prompt(impls)
        return None

    async def _prepare_prompt(self, impls: list[HookImpl]) -> None:
        answer = await call_first(
            impls,
            "skillkit_system_prompt",
            {"context": self._context()},
            self._failed,
            accept=lambda value: isinstance(value, str),
        )
        self._prompt, self._prompt_ready = answer, True

    def _system_prompt(self) -> str | None:
        if self._prompt_ready:
            return self._prompt
        kwargs = {"context": self._context()}
        for impl in ordered(self.manager.hook.skillkit_system_prompt):
            if is_async(impl):
                continue  # answered at turn start; outside a turn only sync answers count
            answer = invoke_sync(impl, "skillkit_system_prompt", kwargs, self._failed)
            if answer is None:
                continue
            if isinstance(answer, str):
                return answer
            self._failed(impl, "skillkit_system_prompt", TypeError(f"returned {type(answer)}"))
        return None

    def offers(self, part: str) -> bool:
        """Whether some plugin implements the hook behind contributor ``part``."""
        hook_name = _PART_HOOKS.get(part)
        return hook_name is None or bool(ordered(getattr(self.manager.hook, hook_name)))

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        """``skillkit_transform_context``: the first list answered (fails closed)."""
        context = self._context()
        for impl in ordered(self.manager.hook.skillkit_transform_context):
            kwargs = {"messages": list(messages), "context": context}
            answer = await invoke(
                impl, "skillkit_transform_context", kwargs, self._failed, fail_closed=True
            )
            if answer is None:
                continue
            if isinstance(answer, list):
                return answer
            self._failed(impl, "skillkit_transform_context", TypeError("returned a non-list"))
        return messages

    async def _convert(self, messages: list[AgentMessage]) -> list[LLMMessage]:
        hook = self.manager.hook
        context = self._context()
        answer = await call_first(
            ordered(hook.skillkit_convert_to_llm),
            "skillkit_convert_to_llm",
            {"messages": list(messages), "context": context},
            self._failed,
            accept=lambda value: isinstance(value, list),
            fail_closed=True,
        )
        if answer is not None:
            return list(answer)
        if self._original_convert is not None:
            converted = self._original_convert(messages)
            if inspect.isawaitable(converted):
                converted = await converted
            return list(converted)
        renderers = ordered(hook.skillkit_render_custom_message)
        registry = self.runner.renderers
        out: list[LLMMessage] = []
        for message in messages:
            if type(message) is CustomMessage and renderers:
                rendered = await call_first(
                    renderers,
                    "skillkit_render_custom_message",
                    {"message": message, "context": context},
                    self._failed,
                )
                if rendered is not None:
                    out.append(rendered)
                    continue
            converted_one = convert_message(message, registry)
            if converted_one is not None:
                out.append(converted_one)
        return out

    async def before_tool_call(self, payload: ToolCallEvent) -> ToolCallEventResult:
        """``skillkit_before_tool_call``: the first block wins, argument replacements
        apply in order, confinements join; one that raises blocks the call."""
        args = payload.args
        changed = False
        confinement: Confinement | None = None
        for impl in ordered(self.manager.hook.skillkit_before_tool_call):
            call, validated = self._call(payload.tool_call_id, payload.tool_name, args)
            kwargs = {"tool_call": call, "args": validated, "context": self._context()}
            answer = await invoke(
                impl, "skillkit_before_tool_call", kwargs, self._failed, fail_closed=True
            )
            if answer is None:
                continue
            if not isinstance(answer, ToolCallEventResult):
                self._failed(impl, "skillkit_before_tool_call", _wrong(answer, "BlockDecision"))
                continue
            if answer.block:
                return ToolCallEventResult(
                    block=True, reason=answer.reason or "blocked by a plugin"
                )
            if answer.args is not None:
                args, changed = dict(answer.args), True
            if answer.confinement is not None:
                confinement = answer.confinement.join(confinement)
        return ToolCallEventResult(args=args if changed else None, confinement=confinement)

    async def after_tool_result(self, payload: ToolResultEvent) -> ToolResult:
        """``skillkit_after_tool_call``: overrides fold in order; one that raises
        withholds the result."""
        result = payload.result
        for impl in ordered(self.manager.hook.skillkit_after_tool_call):
            call, validated = self._call(payload.tool_call_id, payload.tool_name, payload.args)
            kwargs = {
                "tool_call": call,
                "args": validated,
                "result": result,
                "context": self._context(),
            }
            answer = await invoke(
                impl, "skillkit_after_tool_call", kwargs, self._failed, fail_closed=True
            )
            if answer is None:
                continue
            if not isinstance(answer, ToolResultEventResult):
                self._failed(impl, "skillkit_after_tool_call", _wrong(answer, "ResultOverride"))
                continue
            result = answer.result
        return result

    def _on_event(self, event: Event) -> Any:
        impls = ordered(self.manager.hook.skillkit_on_event)
        quiet = event.type == "error" and str(getattr(event.payload, "stage", "")).startswith(
            "plugin:"
        )

        def failed(impl: HookImpl, hook_name: str, exc: BaseException) -> None:
            bus = None if quiet else self.runner.events
            self.manager.hook_failed(impl.plugin_name, hook_name, exc, bus)

        kwargs = {"event": event, "context": self._context(event.turn)}
        waiting: list[HookImpl] = []
        for impl in impls:
            if is_async(impl):
                waiting.append(impl)
            else:
                invoke_sync(impl, "skillkit_on_event", kwargs, failed)
        if not waiting:
            return None

        async def run_async() -> None:
            for impl in waiting:
                await invoke(impl, "skillkit_on_event", kwargs, failed)

        return run_async()

    def _call(self, call_id: str, tool_name: str, args: dict[str, Any]) -> tuple[ToolCall, Any]:
        """The `ToolCall` and validated arguments for a hook, built once per call and
        argument set (every implementation of a hook sees the same values)."""
        cached = self._call_cache
        if cached is not None and cached[0] == call_id and cached[1] is args:
            return cached[2], cached[3]
        call = ToolCall(call_id, tool_name, args)
        validated = self._validated(tool_name, args)
        self._call_cache = (call_id, args, call, validated)
        return call, validated

    def _validated(self, tool_name: str, args: dict[str, Any]) -> Any:
        """The tool's validated argument model (the raw dict if it cannot be built)."""
        tool = self._find_tool(tool_name)
        if tool is None:
            return args
        try:
            return tool.args_model.model_validate(args)
        except Exception:
            return args

    def _find_tool(self, name: str) -> Tool | None:
        return self.runner.find_tool(name)


class _PluginParts(Contributor):
    """What the plugins add to every turn: their tools and the skill registry's, the
    ``skillkit_system_prompt`` answer and the skill catalog."""

    name = "plugins"

    def __init__(self, binding: RunnerBinding) -> None:
        self.binding = binding

    def offers(self, part: str) -> bool:
        return self.binding.offers(part)

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return await self.binding.transform_context(messages)

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult:
        return await self.binding.before_tool_call(call)

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult:
        return await self.binding.after_tool_result(event)

    def tools(self) -> Sequence[Tool]:
        registries = self.binding.manager.registries
        offered = list(registries.tools.tools())
        if registries.skills is not None:
            offered.extend(registries.skills.tools())
        return offered

    def system_prompt(self) -> str | None:
        sections = [self.binding._system_prompt()]
        skills = self.binding.manager.registries.skills
        if skills is not None:
            sections.append(skills.prompt_section())
        return "\n\n".join(s for s in sections if s) or None


class _AdapterCloser(Contributor):
    """Closes the adapters SkillKit made for the agent when the agent closes."""

    name = "plugin-adapters"

    def __init__(self, binding: RunnerBinding) -> None:
        self.binding = binding

    async def aclose(self) -> None:
        await self.binding.close_created()


def _wrong(answer: object, expected: str) -> TypeError:
    return TypeError(f"returned {type(answer).__name__}, expected {expected} or None")


def report(bus: EventBus, plugin: str, hook_name: str, message: str) -> None:
    """Tell an agent's observers that a plugin hook failed (stage ``plugin:NAME:HOOK``)."""
    bus.emit_nowait("error", ErrorInfo(stage=f"plugin:{plugin}:{hook_name}", message=message))
