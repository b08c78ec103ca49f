"""`AgentConfig`: what a runner is asked to do, as plain data."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

import msgspec

from skillkit.model_registry.definitions import ModelDefinition
from skillkit.secrets import hide_secret_values

__all__ = ["REASONING_LEVELS", "AgentConfig", "ReasoningLevel"]

ReasoningLevel: TypeAlias = Literal["off", "low", "medium", "high"]
"""How much a reasoning model thinks before it answers; see ``AgentConfig.reasoning``."""

REASONING_LEVELS: tuple[ReasoningLevel, ...] = get_args(ReasoningLevel)
"""The values `ReasoningLevel` allows, lowest first."""


class AgentConfig(msgspec.Struct, frozen=True):
    """Settings of an `AgentRunner`.

    ``model`` names the model: ``"scripted:PATH"`` for a script file, ``"local"`` or
    ``"local:PATH.gguf"`` for the embedded model, ``provider:model`` or a catalog id — or
    is a `ModelDefinition` for a model the catalog does not know. A definition is kept in
    ``model_definition`` and ``model`` becomes its name (``provider:id``), so ``model``
    is always a string; ``model_definition`` describes ``model`` only while ``model`` is
    that name (a copy made with another ``model`` has none). ``max_iterations`` bounds the
    model calls of one run; when reached the run pauses with ``stop_reason
    "max_iterations"`` and `AgentRunner.continue_` resumes it. ``tool_execution`` says
    whether the tool calls of one turn run concurrently (results are always reported in
    call order). ``options`` is passed to the adapter (temperature, max_tokens, ...).
    ``steering_delivery`` / ``follow_up_delivery`` say whether queued `steer` /
    `follow_up` messages are handed to the model all at once or one per turn / run.

    ``prompt_caching`` (on by default) asks the provider to cache the stable start of
    each request: Anthropic cache breakpoints, and on OpenAI a ``prompt_cache_key`` —
    ``prompt_cache_key`` when set (a frontend passes its session id), else a key made
    once per adapter, so every call of one runner shares it. ``reasoning`` is one knob
    for how much a reasoning model thinks (``"off"``, ``"low"``, ``"medium"``,
    ``"high"``), mapped per provider by the adapter (see ``docs/providers.md``); None
    (the default) sends nothing and leaves the provider's default. A level other than
    ``"off"`` for a model whose catalog entry says it cannot reason is refused when the
    adapter is made.

    ``repr()`` (and rich's pretty printing) never shows ``api_key`` — only whether one is
    set — nor the value of any ``options`` entry (at any depth, such as a ``headers``
    mapping) whose key names a credential (``Authorization``, ``x-api-key``, ``*_token``).

    ``approvals`` says what a run does at an approval nobody answers in process:
    ``"ask"`` (the default) waits for an answer — for at most ``approval_timeout``
    seconds when nothing is subscribed to ``approval_needed``, then refuses the call with
    an error saying so — and ``"defer"`` pauses the run instead
    (``stop_reason="approval_pending"``, resumed by `AgentRunner.resume`).
    ``max_cost_usd`` / ``max_tokens`` / ``max_turns`` limit one run (its child agents'
    spending included): the run ends with ``stop_reason="budget"`` before a model call
    that would pass one (None: no limit). ``max_repeats`` stops a run whose model makes
    the same tool calls with the same results that many turns in a row (0: never).
    ``input_guardrails`` / ``output_guardrails`` check the user's message and the final
    answer (see ``docs/sdk.md``). ``fallback_models`` are the models (model strings, or
    names in the runner's adapter registry) that continue a run, in order, when its model
    fails in a way another may not (rate limits and server errors that outlast the
    retries, a refusal, a context overflow: see `skillkit.agent.fallback`).
    """

    model: str = ""
    base_url: str | None = None
    api_key: str | None = None
    system_prompt: str = ""
    max_iterations: int = 50
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    agent_id: str = "main"
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    steering_delivery: Literal["all", "one_at_a_time"] = "all"
    follow_up_delivery: Literal["all", "one_at_a_time"] = "one_at_a_time"
    model_definition: ModelDefinition | None = None
    prompt_caching: bool = True
    prompt_cache_key: str | None = None
    reasoning: ReasoningLevel | None = None
    approvals: Literal["ask", "defer"] = "ask"
    approval_timeout: float = 60.0
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    max_repeats: int = 3
    input_guardrails: list[Any] = msgspec.field(default_factory=list)
    output_guardrails: list[Any] = msgspec.field(default_factory=list)
    fallback_models: list[str] = msgspec.field(default_factory=list)

    if TYPE_CHECKING:  # what the constructor accepts: ``model`` may be a definition

        def __init__(
            self,
            model: str | ModelDefinition = "",
            base_url: str | None = None,
            api_key: str | None = None,
            system_prompt: str = "",
            max_iterations: int = 50,
            tool_execution: Literal["parallel", "sequential"] = "parallel",
            agent_id: str = "main",
            options: dict[str, Any] = ...,
            steering_delivery: Literal["all", "one_at_a_time"] = "all",
            follow_up_delivery: Literal["all", "one_at_a_time"] = "one_at_a_time",
            model_definition: ModelDefinition | None = None,
            prompt_caching: bool = True,
            prompt_cache_key: str | None = None,
            reasoning: ReasoningLevel | None = None,
            approvals: Literal["ask", "defer"] = "ask",
            approval_timeout: float = 60.0,
            max_cost_usd: float | None = None,
            max_tokens: int | None = None,
            max_turns: int | None = None,
            max_repeats: int = 3,
            input_guardrails: list[Any] = ...,
            output_guardrails: list[Any] = ...,
            fallback_models: list[str] = ...,
        ) -> None: ...

    def __post_init__(self) -> None:
        model: object = self.model
        if isinstance(model, ModelDefinition):
            msgspec.structs.force_setattr(self, "model_definition", model)
            msgspec.structs.force_setattr(self, "model", model.key)
        elif not isinstance(model, str):
            raise TypeError(f"model must be a str or a ModelDefinition, got {type(model).__name__}")
        definition = self.model_definition
        if definition is not None and self.model != definition.key:
            if self.model:
                msgspec.structs.force_setattr(self, "model_definition", None)
            else:
                msgspec.structs.force_setattr(self, "model", definition.key)
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {self.max_iterations}")
        for name in ("steering_delivery", "follow_up_delivery"):
            if getattr(self, name) not in ("all", "one_at_a_time"):
                raise ValueError(f"{name} must be 'all' or 'one_at_a_time'")
        if self.reasoning is not None and self.reasoning not in REASONING_LEVELS:
            raise ValueError(
                f"reasoning must be one of {', '.join(REASONING_LEVELS)}, got {self.reasoning!r}"
            )
        if self.approvals not in ("ask", "defer"):
            raise ValueError(f"approvals must be 'ask' or 'defer', got {self.approvals!r}")
        if not self.approval_timeout > 0:
            raise ValueError(f"approval_timeout must be positive, got {self.approval_timeout}")
        for name in ("max_cost_usd", "max_tokens", "max_turns"):
            limit = getattr(self, name)
            if limit is not None and not limit > 0:
                raise ValueError(f"{name} must be positive (or None for no limit), got {limit}")
        if self.max_repeats < 0:
            raise ValueError(f"max_repeats must be 0 (off) or more, got {self.max_repeats}")
        if self.tool_execution not in ("parallel", "sequential"):
            raise ValueError(
                f"tool_execution must be 'parallel' or 'sequential', got {self.tool_execution!r}"
            )

    def _shown_fields(self) -> Iterator[tuple[str, Any]]:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if name == "api_key":
                value = None if value is None else "***"
            elif name == "options":
                value = hide_secret_values(value)
            yield name, value

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self._shown_fields())
        return f"AgentConfig({fields})"

    def __rich_repr__(self) -> list[tuple[str, Any]]:
        return list(self._shown_fields())
