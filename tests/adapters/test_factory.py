"""Model strings become the right adapter, driven end to end against a local wire server."""

from __future__ import annotations

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.factory import UnknownModelError, create_adapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.adapters.scripted import ScriptedAdapter


def test_provider_model_strings_pick_the_adapter_of_the_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
    assert isinstance(
        create_adapter(AgentConfig(model="anthropic:claude-sonnet-4-5")), AnthropicAdapter
    )
    chat = create_adapter(AgentConfig(model="openai:gpt-4o"))
    assert isinstance(chat, OpenAIAdapter | OpenAIResponsesAdapter)
    assert chat.provider == "openai"


def test_unknown_id_with_base_url_is_openai_compatible() -> None:
    adapter = create_adapter(
        AgentConfig(model="my-local-model", base_url="http://127.0.0.1:9/v1", api_key="x")
    )
    assert isinstance(adapter, OpenAIAdapter)
    assert adapter.base_url == "http://127.0.0.1:9/v1"


def test_unknown_model_is_a_one_line_error() -> None:
    with pytest.raises(UnknownModelError) as info:
        create_adapter(AgentConfig(model="gtp-4o-typo"))
    assert "\n" not in str(info.value) and "gtp-4o-typo" in str(info.value)


def test_scripted_model_string(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "s.yaml"
    script.write_text("replies: [hello]\n")
    assert isinstance(create_adapter(AgentConfig(model=f"scripted:{script}")), ScriptedAdapter)


async def test_runner_reports_cost_from_the_catalog(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from skillkit.adapters.scripted import Reply
    from skillkit.models import TokenUsage

    adapter = ScriptedAdapter([Reply(text="hi", usage=TokenUsage(input=1_000_000, output=0))])
    agent = AgentRunner(AgentConfig(model="openai:gpt-4o"), adapter=adapter)
    costs: list[float | None] = []
    agent.events.on("usage", lambda e: costs.append(e.turn_cost))
    await agent.chat("hello")
    assert costs and costs[0] is not None and costs[0] > 0
