"""The model registry reaches ``skillkit models`` and ``skillkit doctor`` from the
assembly, through the parsed arguments: a caller (a test) hands in its own."""

from __future__ import annotations

import pytest

from skillkit.cli import build_parser
from skillkit.doctor import collect_report
from skillkit.model_registry import ModelDefinition, ModelRegistry
from skillkit.model_registry.registry import default_registry

pytestmark = pytest.mark.timeout(60)


def own_registry() -> ModelRegistry:
    registry = ModelRegistry()
    registry.register(
        ModelDefinition(
            id="house-model-1", provider="openai", context_window=8000, max_output_tokens=1000
        )
    )
    return registry


def test_models_lists_the_registry_it_is_handed(capsys: pytest.CaptureFixture[str]) -> None:
    registry = own_registry()
    args = build_parser().parse_args(["models", "house-model"])
    args.make_model_registry = lambda: registry
    assert args.handler(args) == 0
    assert "house-model-1" in capsys.readouterr().out
    assert default_registry().get("openai:house-model-1") is None


def test_by_default_the_command_sees_the_assemblys_registry() -> None:
    from skillkit.frontends.setup import model_registry

    args = build_parser().parse_args(["models"])
    assert args.make_model_registry() is model_registry()


def test_doctor_reports_the_providers_of_the_registry_it_is_handed() -> None:
    class Empty(ModelRegistry):
        def providers(self):  # type: ignore[no-untyped-def]
            return []

    sections = collect_report(environ={}, models=Empty())
    providers = next(s for s in sections if s.title == "Providers")
    assert all("API_KEY" not in value for _, value in providers.rows)
