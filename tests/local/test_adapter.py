"""`create_local_adapter`: the ``local`` model strings as the agent uses them."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.local import LocalServer, create_local_adapter
from skillkit.local.adapter import local_model_definition
from skillkit.model_registry import ModelRegistry, default_registry, set_default_registry


@pytest.fixture(autouse=True)
def fresh_registry() -> object:
    set_default_registry(ModelRegistry())
    yield
    set_default_registry(None)


def _refused(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=5).close()
    except urllib.error.URLError:
        return True
    return False


async def test_local_runs_the_default_model_and_stops_it_on_close(default_gguf: Path) -> None:
    adapter = create_local_adapter("local", threads=1, context_window=512, reproducible=True)
    url = adapter.server.url
    runner = AgentRunner(AgentConfig(model="local", options={"max_tokens": 6}), adapter=adapter)
    try:
        response = await runner.chat("Say hi.")
        assert response.text and response.usage.output > 0
        definition = default_registry().get("local")
        assert definition is not None and definition.id == "smollm2-135m-instruct"
        assert definition.context_window == 512 and definition.provider == "local"
    finally:
        await runner.aclose()
    assert _refused(url + "/health")


async def test_a_user_gguf_is_registered_under_its_model_string(
    default_gguf: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "my-model.gguf"
    shutil.copyfile(default_gguf, copy)
    adapter = create_local_adapter(f"local:{copy}", threads=1, context_window=256)
    try:
        assert adapter.server.template == "model"
        definition = default_registry().get(f"local:{copy}")
        assert definition is not None and definition.context_window == 256
        assert adapter.server.model_id.startswith("Smollm2 135M")
    finally:
        await adapter.aclose()


async def test_a_shared_server_is_left_running(local_server: LocalServer) -> None:
    adapter = create_local_adapter(server=local_server, register=False)
    await adapter.aclose()
    assert local_server.running


def test_the_definition_of_a_running_default_model(local_server: LocalServer) -> None:
    definition = local_model_definition(local_server)
    assert definition.key == "local:smollm2-135m-instruct"
    assert "local" in definition.aliases
    assert definition.max_output_tokens <= definition.context_window
    assert definition.compat.reasoning_field == "reasoning_content"


def test_a_string_that_is_not_local_is_refused() -> None:
    with pytest.raises(ValueError, match="not a local model string"):
        create_local_adapter("openai:gpt-4o")
