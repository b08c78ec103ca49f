"""`ModelProfile`: how requests are shaped for the default model."""

from __future__ import annotations

from skillkit.local.adapter import ModelProfile
from skillkit.models import LLMRequest, ToolSchema, UserMessage


def _request(**options: object) -> LLMRequest:
    tools = [ToolSchema(name, name, {"type": "object"}) for name in ("ls", "read", "bash")]
    return LLMRequest(
        model="m",
        messages=[UserMessage("hi")],
        system_prompt="the agent's long prompt",
        tools=tools,
        options=dict(options),
    )


def test_a_profile_offers_its_tools_and_its_prompt() -> None:
    profile = ModelProfile(tools={"ls", "read"}, system_prompt="short", options={"stop": ["x"]})
    shaped = profile.apply(_request())
    assert [t.name for t in shaped.tools] == ["ls", "read"]
    assert shaped.system_prompt == "short" and shaped.options == {"stop": ["x"]}


def test_the_requests_own_options_win() -> None:
    profile = ModelProfile(options={"stop": ["x"], "temperature": 0.0})
    shaped = profile.apply(_request(stop=["y"]))
    assert shaped.options == {"stop": ["y"], "temperature": 0.0}


def test_an_empty_profile_changes_nothing() -> None:
    request = _request()
    assert ModelProfile().apply(request) is request
