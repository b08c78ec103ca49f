"""A plugin's adapter: registered, used by a running agent, removed, and the agent goes back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from skillkit.adapters.registry import AdapterRegistry
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.commands import CommandContext
from skillkit.extensions import PluginManager, hookimpl
from skillkit.models import LLMRequest, UserMessage
from tests.extensions.conftest import Model, make_runner

Factory = Callable[..., PluginManager]


def parrot(request: LLMRequest) -> str:
    last = [m for m in request.messages if isinstance(m, UserMessage)][-1]
    return f"parrot says: {last.content}"


class ParrotPlugin:
    def __init__(self) -> None:
        self.adapter = FunctionAdapter(parrot, model="parrot-1")

    @hookimpl
    def skillkit_register_adapters(self, registry: AdapterRegistry) -> None:
        registry.register("parrot", self.adapter)


async def test_runner_switches_to_a_plugin_adapter_and_back_when_it_is_removed(
    manager_factory: Factory,
) -> None:
    model = Model("first", "third")
    runner = make_runner(model)
    original = runner.adapter
    manager = manager_factory()
    manager.attach(runner)
    commands = manager.registries.commands
    ctx = CommandContext(runner=runner, manager=manager)

    plugin = ParrotPlugin()
    manager.register(plugin, "parrot-plugin")
    assert manager.registries.adapters.source_of("parrot") == "parrot-plugin"

    assert (await runner.chat("one")).text == "first"
    result = await commands.dispatch("/model parrot", ctx)
    assert result is not None and result.ok, result
    assert runner.adapter is plugin.adapter and runner.config.model == "parrot-1"
    assert (await runner.chat("two")).text == "parrot says: two"

    removed = manager.unregister("parrot-plugin")
    assert removed == {"adapters": ["parrot"]}
    assert runner.adapter is original and runner.config.model == ""
    assert (await runner.chat("three")).text == "third"
    assert "parrot" not in manager.registries.adapters

    result = await commands.dispatch("/model parrot", ctx)
    assert result is not None and result.error is not None
    assert "unknown model 'parrot'" in result.error


async def test_model_command_shows_the_current_model_and_adapters(
    manager_factory: Factory,
) -> None:
    runner = make_runner()
    manager = manager_factory(ParrotPlugin())
    manager.attach(runner)
    result = await manager.registries.commands.dispatch(
        "/model", CommandContext(runner=runner, manager=manager)
    )
    assert result is not None
    assert result.output == "model: test-model (provider: scripted)\nadapters: parrot"


async def test_switching_is_refused_during_a_run(manager_factory: Factory) -> None:
    runner = make_runner()
    manager = manager_factory(ParrotPlugin())
    ctx = CommandContext(runner=runner, manager=manager)
    release = asyncio.Event()
    started = asyncio.Event()

    @runner.events.on("agent_start")
    async def hold(event: object) -> None:
        started.set()
        await release.wait()

    run = asyncio.ensure_future(runner.chat("hi"))
    await asyncio.wait_for(started.wait(), 10)
    try:
        result = await manager.registries.commands.dispatch("/model parrot", ctx)
    finally:
        release.set()
        await asyncio.wait_for(run, 10)
    assert result is not None and result.error is not None and "in progress" in result.error


async def test_model_command_builds_an_adapter_from_a_model_string(
    manager_factory: Factory, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n  - text: from the script\n")
    runner = make_runner(Model("from the function"))
    manager = manager_factory()
    manager.attach(runner)
    ctx = CommandContext(runner=runner, manager=manager)
    result = await manager.registries.commands.dispatch(f"/model scripted:{script}", ctx)
    assert result is not None and result.output == f"using model scripted:{script}"
    assert (await runner.chat("hi")).text == "from the script"
    assert runner.config.model == f"scripted:{script}"
    bad = await manager.registries.commands.dispatch("/model scripted:", ctx)
    assert (
        bad is not None
        and bad.error == "'scripted:' needs a script file: --model scripted:PATH.yaml"
    )
    await runner.aclose()


async def test_set_adapter_reaches_an_adapter_a_plugin_registers_after_attach(
    manager_factory: Factory,
) -> None:
    runner = make_runner(Model("from the first model"))
    manager = manager_factory()
    manager.attach(runner)
    assert "parrot" not in runner.adapters

    plugin = ParrotPlugin()
    manager.register(plugin, "parrot-plugin")
    runner.set_adapter("parrot")
    assert runner.adapter is plugin.adapter
    assert runner.adapters.source_of("parrot") == "parrot-plugin"
    assert (await runner.chat("hello")).text == "parrot says: hello"


async def test_set_adapter_reaches_an_adapter_registered_directly_after_attach(
    manager_factory: Factory,
) -> None:
    runner = make_runner(Model("unused"))
    manager = manager_factory()
    manager.attach(runner)
    direct = FunctionAdapter(parrot, model="parrot-2")
    manager.registries.adapters.register("direct", direct, "my-extension")
    runner.set_adapter("direct")
    assert (await runner.chat("hi")).text == "parrot says: hi"

    manager.detach(runner)
    assert "direct" not in runner.adapters
