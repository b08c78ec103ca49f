"""``/cost`` says what prompt caching saved, from the catalog's cache-read and input
prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import CommandContext
from skillkit.extensions import PluginManager, Registries
from skillkit.model_registry import default_registry
from skillkit.models import TokenUsage
from skillkit.skills import SkillRegistry


@pytest.fixture
def manager(tmp_path: Path) -> PluginManager:
    skills = SkillRegistry(cwd=tmp_path, home=tmp_path / "home", default_sources=False)
    manager = PluginManager(Registries(skills=skills))
    manager.load_builtin()
    return manager


async def cost_of(manager: PluginManager, runner: AgentRunner) -> str:
    result = await manager.registries.commands.dispatch(
        "/cost", CommandContext(runner=runner, manager=manager)
    )
    assert result is not None
    return result.output


async def test_cost_shows_the_cache_saving_at_catalog_prices(manager: PluginManager) -> None:
    usage = TokenUsage(input=1_000, output=100, cache_read=50_000, cache_write=2_000)
    adapter = ScriptedAdapter([Reply(text="hi", usage=usage)], model="claude-sonnet-4-5")
    runner = AgentRunner(AgentConfig(model="anthropic:claude-sonnet-4-5"), adapter=adapter)
    await runner.chat("hello")

    lines = (await cost_of(manager, runner)).splitlines()

    model = default_registry().get("anthropic:claude-sonnet-4-5")
    assert model is not None
    prices = model.cost
    saved = 50_000 * (prices.input - prices.cache_read) / 1e6
    assert saved > 0
    assert lines[0] == "tokens: 1000 in, 100 out, 50000 cache read, 2000 cache write"
    assert lines[2] == (
        f"caching saved: ${saved:.4f} (50000 tokens read from cache at "
        f"${prices.cache_read:g}/M instead of ${prices.input:g}/M)"
    )


async def test_cost_without_cache_reads_has_no_saving_line(manager: PluginManager) -> None:
    adapter = ScriptedAdapter([Reply(text="hi", usage=TokenUsage(input=10, output=1))])
    runner = AgentRunner(AgentConfig(model="openai:gpt-4.1"), adapter=adapter)
    await runner.chat("hello")
    assert "caching" not in await cost_of(manager, runner)


async def test_cost_of_an_unknown_model_counts_cache_reads_without_a_price(
    manager: PluginManager,
) -> None:
    usage = TokenUsage(input=10, output=1, cache_read=500)
    adapter = ScriptedAdapter([Reply(text="hi", usage=usage)], model="no-such-model")
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    await runner.chat("hello")
    output = await cost_of(manager, runner)
    assert output.splitlines()[-1] == (
        "caching: 500 tokens read from cache (saving unknown: no prices)"
    )


def test_cache_savings_use_the_long_context_tier() -> None:
    model = default_registry().get("anthropic:claude-sonnet-4-5")
    assert model is not None and model.cost.tiers
    tier = model.cost.tiers[0]
    usage = TokenUsage(input=tier.above, cache_read=10_000)
    expected = 10_000 * (tier.input - tier.cache_read) / 1e6
    assert model.cost.cache_savings(usage) == pytest.approx(expected)
    assert model.cost.cache_savings(TokenUsage(input=5)) == 0.0
    assert default_registry().cache_savings("no-such-model", usage) is None


async def test_cost_prices_child_agents_at_their_own_models(manager: PluginManager) -> None:
    own = TokenUsage(input=10_000, output=1_000)
    adapter = ScriptedAdapter([Reply(text="hi", usage=own)], model="claude-sonnet-4-5")
    runner = AgentRunner(AgentConfig(model="anthropic:claude-sonnet-4-5"), adapter=adapter)
    await runner.chat("hello")
    runner.add_usage(TokenUsage(input=500_000, output=50_000), cost=0.25)  # a cheap child

    lines = (await cost_of(manager, runner)).splitlines()

    model = default_registry().get("anthropic:claude-sonnet-4-5")
    assert model is not None
    expected = model.cost.cost_of(own) + 0.25
    assert lines[0] == "tokens: 510000 in, 51000 out"
    assert lines[1] == f"cost: ${expected:.4f}"
    runner.add_usage(TokenUsage(input=1, output=1), cost=None)  # a child without prices
    assert (await cost_of(manager, runner)).splitlines()[1].startswith("cost: unknown")
