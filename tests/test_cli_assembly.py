"""The explicit assembly: provider factories are instances passed down (a default one for
the ``skillkit`` command, a test's own here), and the command's subcommands get their
registry factories in the parsed arguments, not through module globals."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.factory import (
    Providers,
    UnknownModelError,
    create_adapter,
    default_providers,
)
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.cli import build_parser
from skillkit.frontends.setup import AgentOptions, build_agent
from skillkit.model_registry import ModelDefinition, ModelRegistry

HELLO = Path(__file__).resolve().parents[1] / "examples" / "scripts" / "hello.yaml"


def _echo(model: str, config: AgentConfig, *, on_retry: object = None) -> LLMAdapter:
    return ScriptedAdapter([f"echo {model}"])


def test_providers_of_their_own_see_only_their_registrations() -> None:
    mine, other = Providers(entry_points=False), Providers(entry_points=False)
    mine.register("echo", _echo)
    assert isinstance(mine.create_adapter(AgentConfig(model="echo:hi")), ScriptedAdapter)
    assert other.get("echo") is None and default_providers().get("echo") is None
    assert isinstance(other.create_adapter(AgentConfig(model=f"scripted:{HELLO}")), LLMAdapter)
    with pytest.raises(ValueError, match="already registered"):
        mine.register("echo", lambda model, config, on_retry=None: _echo(model, config))
    assert mine.unregister("echo") is _echo and mine.get("echo") is None


def test_a_model_registry_handed_to_the_providers_resolves_their_models() -> None:
    models = ModelRegistry()
    models.register(
        ModelDefinition(
            id="lab-model",
            provider="lab",
            api="openai-completions",
            base_url="http://127.0.0.1:9/v1",
            context_window=8000,
            max_output_tokens=1000,
        )
    )
    providers = Providers(entry_points=False, models=models)
    adapter = providers.create_adapter(AgentConfig(model="lab:lab-model", api_key="k"))
    assert adapter.provider == "lab"
    with pytest.raises(UnknownModelError):
        create_adapter(
            AgentConfig(model="lab:lab-model", api_key="k"),
            providers=Providers(entry_points=False, models=ModelRegistry()),
        )


def test_the_command_builds_its_agent_with_the_default_providers(tmp_path: Path) -> None:
    agent = build_agent(
        AgentOptions(model=f"scripted:{HELLO}", workspace=tmp_path, home=tmp_path / "home")
    )
    try:
        assert agent.providers is default_providers()
    finally:
        import asyncio

        asyncio.run(agent.aclose())


def test_the_subcommands_get_their_registry_factories_in_the_parsed_arguments() -> None:
    args = build_parser().parse_args(["skills", "list"])
    assert callable(args.make_skill_registry) and callable(args.make_agent_registry)
    import skillkit.skills.cli as skills_cli
    import skillkit.subagents.cli as agents_cli

    assert not hasattr(skills_cli, "_factory") and not hasattr(agents_cli, "_factory")


def test_each_agent_the_command_builds_gets_a_renderer_registry_of_its_own(
    tmp_path: Path,
) -> None:
    import asyncio

    from skillkit.models import CustomMessage, UserMessage

    options = AgentOptions(model=f"scripted:{HELLO}", workspace=tmp_path, home=tmp_path / "home")
    first, second = build_agent(options), build_agent(options)
    try:
        first.runner.renderers.register("memory", lambda m: UserMessage(str(m.payload)))
        assert first.runner.renderers is not second.runner.renderers
        assert second.runner.renderers.get("memory") is None
        note = CustomMessage(kind="memory", payload="kept")
        assert first.runner.renderers.render(note) == UserMessage("kept")
    finally:
        asyncio.run(first.aclose())
        asyncio.run(second.aclose())
