"""The model registry a runner is given: it prices and sizes by that one, and never by
the process's default registry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import Usage
from skillkit.model_registry import (
    ModelCost,
    ModelDefinition,
    ModelRegistry,
    default_registry,
    set_default_registry,
)
from skillkit.models import TokenUsage

LAB = ModelDefinition(
    id="m1",
    provider="lab",
    context_window=12_000,
    max_output_tokens=1_000,
    cost=ModelCost(input=2.0, output=10.0),
    capabilities=frozenset({"text", "structured_output"}),
)


@pytest.fixture
def own_default() -> Iterator[ModelRegistry]:
    """A process default of the test's own, restored afterwards."""
    before = default_registry()
    mine = ModelRegistry(include_builtin=False)
    set_default_registry(mine)
    try:
        yield mine
    finally:
        set_default_registry(before)


def _runner(models: ModelRegistry | None) -> AgentRunner:
    usage = TokenUsage(input=1_000_000, output=100_000)
    return AgentRunner(
        AgentConfig(model="lab:m1"),
        adapter=ScriptedAdapter([Reply(text="ok", usage=usage)], model="m1"),
        models=models,
    )


async def test_a_run_is_priced_by_the_registry_the_runner_was_given() -> None:
    runner = _runner(ModelRegistry([LAB], include_builtin=False))
    costs: list[float | None] = []
    runner.events.on("usage", lambda event: costs.append(event.payload.turn_cost))

    await runner.chat("hi")

    assert costs == [pytest.approx(2.0 + 1.0)]  # 1M in at $2, 100k out at $10 per 1M
    assert runner.context_window("lab:m1") == 12_000


async def test_a_runner_without_a_registry_never_reads_the_process_default(
    own_default: ModelRegistry,
) -> None:
    own_default.register(LAB)  # known to the process's registry only
    runner = _runner(None)
    seen: list[Usage] = []
    runner.events.on("usage", lambda event: seen.append(event.payload))

    await runner.chat("hi")

    assert runner.models is not own_default
    assert runner.context_window("lab:m1") is None
    assert [u.turn_cost for u in seen] == [None]  # the model is unknown to its own registry


async def test_sharing_the_process_registry_is_the_callers_choice(
    own_default: ModelRegistry,
) -> None:
    own_default.register(LAB)
    runner = _runner(default_registry())

    assert runner.models is own_default
    assert runner.context_window("lab:m1") == 12_000
