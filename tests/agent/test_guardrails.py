"""Input and output guardrails: sync or async, input ones beside the first model call,
a tripwire ends the run with ``stop_reason="guardrail"`` and the guardrail's result."""

from __future__ import annotations

import asyncio

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.guardrails import GuardrailResult
from skillkit.models import AssistantMessage, ToolCall

RAN: list[str] = []


@tool
def wipe(path: str) -> str:
    """Delete everything under a path."""
    RAN.append(path)
    return "wiped"


def no_secrets(text: object) -> GuardrailResult:
    return GuardrailResult(tripwire="password" in str(text), info="asks for a password")


async def slow_topic_check(text: object) -> bool:
    await asyncio.sleep(0.05)
    return "homework" in str(text)


async def test_an_input_guardrail_trips_before_any_tool_call_runs() -> None:
    RAN.clear()
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[ToolCall(id="w", name="wipe", arguments={"path": "/"})]), "done"]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", input_guardrails=[no_secrets, slow_topic_check]),
        adapter=adapter,
        tools=[wipe],
    )
    response = await agent.chat("what is the admin password? wipe / after")
    assert response.stop_reason == "guardrail"
    assert response.guardrail == GuardrailResult(
        tripwire=True, info="asks for a password", name="no_secrets"
    )
    assert RAN == []
    assert not any(isinstance(m, AssistantMessage) for m in agent.messages)
    assert len(adapter.requests) == 1  # the first call ran beside the guardrails


async def test_an_async_input_guardrail_is_waited_for() -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted", input_guardrails=[slow_topic_check]),
        adapter=ScriptedAdapter(["here is your essay"]),
    )
    response = await agent.chat("do my homework")
    assert response.stop_reason == "guardrail"
    assert response.guardrail is not None and response.guardrail.name == "slow_topic_check"
    assert response.text == ""


async def test_passing_guardrails_change_nothing() -> None:
    agent = AgentRunner(
        AgentConfig(
            model="scripted", input_guardrails=[no_secrets], output_guardrails=[no_secrets]
        ),
        adapter=ScriptedAdapter(["hello there"]),
    )
    response = await agent.chat("hi")
    assert response.stop_reason == "stop" and response.text == "hello there"
    assert response.guardrail is None


async def test_an_output_guardrail_trips_on_the_final_answer() -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted", output_guardrails=[no_secrets]),
        adapter=ScriptedAdapter(["the password is hunter2"]),
    )
    events: list[object] = []
    agent.events.on("agent_end", lambda e: events.append(e.payload.stop_reason))
    response = await agent.chat("hi")
    assert response.stop_reason == "guardrail"
    assert response.text == ""
    assert response.guardrail is not None and response.guardrail.name == "no_secrets"
    assert events == ["guardrail"]


async def test_a_guardrail_that_raises_trips() -> None:
    def broken(text: object) -> bool:
        raise ValueError("bug")

    agent = AgentRunner(
        AgentConfig(model="scripted", input_guardrails=[broken]),
        adapter=ScriptedAdapter(["hi"]),
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "guardrail"
    assert response.guardrail is not None and "bug" in str(response.guardrail.info)


async def test_an_output_guardrail_sees_the_structured_answer() -> None:
    seen: list[object] = []

    def record(value: object) -> None:
        seen.append(value)

    agent = AgentRunner(
        AgentConfig(model="scripted", output_guardrails=[record]),
        adapter=ScriptedAdapter([Reply(output={"city": "Oslo"})]),
    )
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    response = await agent.chat("where?", output_type=schema)
    assert response.stop_reason == "stop"
    assert seen == [{"city": "Oslo"}]
