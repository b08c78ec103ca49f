"""The ``local`` provider registers the model it starts in the registry of the agent it
serves (handed in by `Providers`), never in the process's default model registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.local.adapter import LocalAdapter
from skillkit.model_registry import ModelRegistry, default_registry, set_default_registry

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def process_default() -> Iterator[ModelRegistry]:
    """A process default of the test's own (the built-in catalog), restored afterwards."""
    before = default_registry()
    mine = ModelRegistry()
    set_default_registry(mine)
    try:
        yield mine
    finally:
        set_default_registry(before)


async def test_an_sdk_runner_with_its_own_registry_learns_the_local_window(
    default_gguf: Path, process_default: ModelRegistry
) -> None:
    models = ModelRegistry()
    assert models.get("local") is None  # the catalog names the model, not the string
    runner = AgentRunner(AgentConfig(model="local", options={"max_tokens": 4}), models=models)
    try:
        assert isinstance(runner.adapter, LocalAdapter)
        window = runner.adapter.server.context_window
        assert runner.context_window("local") == window
        definition = models.get("local")
        assert definition is not None and definition.provider == "local"
        assert process_default.get("local") is None  # nothing written into the default
        assert len(process_default) == len(ModelRegistry())
    finally:
        await runner.aclose()


async def test_a_runner_without_a_registry_keeps_the_local_model_in_its_own(
    default_gguf: Path, process_default: ModelRegistry
) -> None:
    runner = AgentRunner(AgentConfig(model="local"))
    try:
        assert isinstance(runner.adapter, LocalAdapter)
        assert runner.models is not process_default
        assert runner.context_window("local") == runner.adapter.server.context_window
        assert process_default.get("local") is None
    finally:
        await runner.aclose()
