"""`AgentConfig`: a model string or a `ModelDefinition`, and the constructor the type
checker sees stays the one msgspec builds."""

from __future__ import annotations

import ast
import inspect

import msgspec
import pytest

import skillkit.config
from skillkit import AgentConfig
from skillkit.model_registry import ModelDefinition

DEFINITION = ModelDefinition(
    id="house-model", provider="acme", context_window=8_000, max_output_tokens=1_000
)


def test_the_typed_constructor_lists_every_field_in_order_with_its_default() -> None:
    tree = ast.parse(inspect.getsource(skillkit.config))
    [stub] = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    ]
    names = [arg.arg for arg in stub.args.args[1:]]
    assert names == list(AgentConfig.__struct_fields__)
    real = inspect.signature(AgentConfig).parameters
    for arg, default in zip(stub.args.args[1:], stub.args.defaults, strict=True):
        if not (isinstance(default, ast.Constant) and default.value is Ellipsis):
            assert ast.literal_eval(default) == real[arg.arg].default, arg.arg


def test_a_definition_becomes_the_model_name_and_is_kept() -> None:
    config = AgentConfig(model=DEFINITION, max_iterations=5)
    assert (config.model, config.model_definition) == ("acme:house-model", DEFINITION)
    assert AgentConfig(model_definition=DEFINITION).model == "acme:house-model"


def test_a_copy_for_another_model_has_no_definition() -> None:
    config = AgentConfig(model=DEFINITION)
    assert msgspec.structs.replace(config, model="openai:gpt-4o").model_definition is None
    assert msgspec.structs.replace(config, max_iterations=3).model_definition is DEFINITION
    assert AgentConfig(model="openai:gpt-4o", model_definition=DEFINITION).model_definition is None


def test_a_model_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="model must be a str or a ModelDefinition"):
        AgentConfig(model=42)  # type: ignore[arg-type]
