"""Model-string providers: `register_provider`, the ``skillkit.providers`` entry points
(``local``), and ``AgentConfig(model=ModelDefinition(...))`` built into a working agent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.factory import (
    Providers,
    UnknownModelError,
    create_adapter,
    default_providers,
    register_provider,
    unregister_provider,
)
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.model_registry import (
    ModelCost,
    ModelDefinition,
    ModelRegistry,
    default_registry,
    set_default_registry,
)
from tests.adapters.wire_formats import chat_text, chat_usage
from tests.adapters.wire_server import SSEReply, WireServer


@pytest.fixture
def echo_provider() -> Iterator[list[tuple[str, AgentConfig]]]:
    """A provider ``echo`` whose adapters answer the model string they were made for."""
    made: list[tuple[str, AgentConfig]] = []

    def make(model: str, config: AgentConfig, *, on_retry: object = None) -> LLMAdapter:
        made.append((model, config))
        return ScriptedAdapter([Reply(text=f"made for {model}")])

    register_provider("echo", make)
    try:
        yield made
    finally:
        unregister_provider("echo")


async def test_a_registered_provider_makes_the_agents_adapter(
    echo_provider: list[tuple[str, AgentConfig]],
) -> None:
    agent = AgentRunner(AgentConfig(model="echo:first"))
    assert (await agent.chat("hi")).text == "made for echo:first"
    assert [model for model, _ in echo_provider] == ["echo:first"]
    assert echo_provider[0][1] is agent.config


def test_a_provider_prefix_is_claimed_once(
    echo_provider: list[tuple[str, AgentConfig]],
) -> None:
    def other(model: str, config: AgentConfig, *, on_retry: object = None) -> LLMAdapter:
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="already registered"):
        register_provider("echo", other)
    with pytest.raises(ValueError, match="invalid provider prefix"):
        register_provider("Not A Word", other)


@pytest.fixture
def registering_provider() -> Iterator[list[ModelRegistry]]:
    """A provider ``lab`` whose factory takes the ``models`` keyword: it registers the
    model it serves (a 4,096-token window) in the registry it is handed."""
    handed: list[ModelRegistry] = []

    def make(
        model: str, config: AgentConfig, *, on_retry: object = None, models: ModelRegistry
    ) -> LLMAdapter:
        handed.append(models)
        models.register(ModelDefinition(id="m", provider="lab", context_window=4096,
                                        max_output_tokens=512, aliases=(model,)))  # fmt: skip
        return ScriptedAdapter([Reply(text="ok")], model="m")

    register_provider("lab", make)
    try:
        yield handed
    finally:
        unregister_provider("lab")


def test_a_provider_factory_is_handed_the_registry_of_the_agent_it_serves(
    registering_provider: list[ModelRegistry],
) -> None:
    mine = ModelRegistry(include_builtin=False)
    agent = AgentRunner(AgentConfig(model="lab:m"), models=mine)
    assert registering_provider == [mine]
    assert agent.context_window("lab:m") == 4096
    assert default_registry().get("lab:m") is None

    own = AgentRunner(AgentConfig(model="lab:m"))  # no registry given: the runner's own
    assert registering_provider[1] is own.models is not default_registry()
    assert own.context_window("lab:m") == 4096
    assert default_registry().get("lab:m") is None


def test_providers_hand_their_own_registry_when_the_caller_names_none(
    registering_provider: list[ModelRegistry],
) -> None:
    kept = ModelRegistry(include_builtin=False)
    providers = Providers(entry_points=False, models=kept)
    providers.register("lab", default_providers().get("lab"))  # type: ignore[arg-type]
    providers.create_adapter(AgentConfig(model="lab:m"))
    assert registering_provider == [kept] and kept.get("lab:m") is not None
    before = default_registry()
    set_default_registry(ModelRegistry(include_builtin=False))
    try:
        create_adapter(AgentConfig(model="lab:m"))  # the default providers: the SDK default
        assert registering_provider[1] is default_registry()
    finally:
        set_default_registry(before)


def test_an_unregistered_prefix_falls_back_to_the_model_registry() -> None:
    assert unregister_provider("echo") is None
    with pytest.raises(UnknownModelError, match="echo"):
        create_adapter(AgentConfig(model="echo:first"))


def test_the_local_provider_is_found_through_its_entry_point(tmp_path: Path) -> None:
    """A fresh interpreter that never imported ``skillkit.local`` reaches it from the
    model string alone: the factory loads the ``local`` entry point."""
    missing = tmp_path / "missing.gguf"
    code = (
        "import sys\n"
        "from skillkit import AgentConfig\n"
        "from skillkit.adapters.factory import create_adapter\n"
        "assert 'skillkit.local' not in sys.modules\n"
        "try:\n"
        f"    create_adapter(AgentConfig(model='local:{missing}'))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__module__, type(exc).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    module, name = result.stdout.split()
    assert module == "skillkit.local.errors" and name.endswith("Error")


async def test_an_agent_runs_on_a_model_definition_the_catalog_does_not_know(
    wire: WireServer,
) -> None:
    definition = ModelDefinition(
        id="house-model",
        provider="acme",
        context_window=8_000,
        max_output_tokens=1_000,
        base_url=wire.base_url,
        cost=ModelCost(input=1.0, output=2.0),
    )
    assert default_registry().get(definition.key) is None
    wire.reply(SSEReply(chat_text("Hel", "lo", usage=chat_usage(10, 2))))
    agent = AgentRunner(AgentConfig(model=definition, api_key="k-test"))
    assert isinstance(agent.adapter, OpenAIAdapter)
    assert (agent.adapter.model, agent.adapter.base_url) == ("house-model", wire.base_url)
    assert (await agent.chat("hi")).text == "Hello"
    assert wire.requests[0].headers.get("authorization") == "Bearer k-test"
