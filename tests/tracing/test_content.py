"""Message content in spans: off by default, on when asked, always redacted."""

from __future__ import annotations

import json

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.secrets import Redactor
from skillkit.tracing import CAPTURE_CONTENT_ENV, capture_content_from_environment
from skillkit.tracing import attributes as attr
from tests.tracing.conftest import Traces

SECRET = "tok-4f8a1c9e77d2b"
CONTENT_KEYS = {
    attr.GEN_AI_INPUT_MESSAGES,
    attr.GEN_AI_OUTPUT_MESSAGES,
    attr.GEN_AI_SYSTEM_INSTRUCTIONS,
    attr.GEN_AI_TOOL_CALL_ARGUMENTS,
    attr.GEN_AI_TOOL_CALL_RESULT,
}


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key} is {SECRET}"


@tool
async def broken(key: str) -> str:
    """Fails, naming the secret."""
    raise RuntimeError(f"cannot use {SECRET}")


def runner(traces: Traces, **kwargs: object) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="scripted", system_prompt=f"You hold {SECRET}. Be brief."),
        adapter=ScriptedAdapter(
            [
                Reply(
                    text="looking",
                    tool_calls=[("lookup", {"key": SECRET}), ("broken", {"key": "k"})],
                ),
                Reply(text=f"the answer is {SECRET}"),
            ]
        ),
        tools=[lookup, broken],
        tracer_provider=traces.provider,
        redactor=Redactor({"deploy_token": SECRET}),
        **kwargs,  # type: ignore[arg-type]
    )


def all_attribute_text(traces: Traces) -> str:
    return json.dumps(
        [{k: str(v) for k, v in (s.attributes or {}).items()} for s in traces.spans]
        + [s.status.description or "" for s in traces.spans]
    )


async def test_content_is_not_recorded_by_default(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    agent = runner(traces)
    await agent.chat(f"what is {SECRET} for? my private plan")
    assert len(traces.spans) == 5
    for span in traces.spans:
        assert CONTENT_KEYS.isdisjoint(span.attributes or {}), span.name
    text = all_attribute_text(traces)
    assert "my private plan" not in text
    assert "looking" not in text
    assert SECRET not in text


async def test_content_is_recorded_when_asked_with_secrets_redacted(traces: Traces) -> None:
    agent = runner(traces, trace_content=True)
    await agent.chat(f"what is {SECRET} for? my private plan")
    text = all_attribute_text(traces)
    assert SECRET not in text
    assert "[REDACTED:deploy_token]" in text

    run = traces.one("invoke_agent main")
    assert run.attributes is not None
    assert json.loads(str(run.attributes[attr.GEN_AI_INPUT_MESSAGES])) == [
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": "what is [REDACTED:deploy_token] for? my private plan"}
            ],
        }
    ]
    assert json.loads(str(run.attributes[attr.GEN_AI_OUTPUT_MESSAGES])) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "the answer is [REDACTED:deploy_token]"}],
            "finish_reason": "stop",
        }
    ]

    first, second = sorted(traces.named("chat scripted"), key=lambda s: s.start_time or 0)
    assert first.attributes is not None and second.attributes is not None
    assert json.loads(str(first.attributes[attr.GEN_AI_SYSTEM_INSTRUCTIONS])) == [
        {"type": "text", "content": "You hold [REDACTED:deploy_token]. Be brief."}
    ]
    output = json.loads(str(first.attributes[attr.GEN_AI_OUTPUT_MESSAGES]))
    assert output[0]["finish_reason"] == "tool_call"
    assert [part["type"] for part in output[0]["parts"]] == ["text", "tool_call", "tool_call"]
    assert output[0]["parts"][1]["arguments"] == {"key": "[REDACTED:deploy_token]"}
    # the second call was sent the whole conversation, tool results included
    sent = json.loads(str(second.attributes[attr.GEN_AI_INPUT_MESSAGES]))
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert sent[2]["parts"][0]["type"] == "tool_call_response"
    assert (
        sent[2]["parts"][0]["response"]
        == "value of [REDACTED:deploy_token] is [REDACTED:deploy_token]"
    )

    looked_up = traces.one("execute_tool lookup")
    assert looked_up.attributes is not None
    assert json.loads(str(looked_up.attributes[attr.GEN_AI_TOOL_CALL_ARGUMENTS])) == {
        "key": "[REDACTED:deploy_token]"
    }
    assert looked_up.attributes[attr.GEN_AI_TOOL_CALL_RESULT] == (
        "value of [REDACTED:deploy_token] is [REDACTED:deploy_token]"
    )
    failed = traces.one("execute_tool broken")
    assert "cannot use [REDACTED:deploy_token]" in (failed.status.description or "")


async def test_the_environment_variable_turns_content_on_unless_the_runner_says_no(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
    await runner(traces).chat("hello there")
    assert attr.GEN_AI_INPUT_MESSAGES in (traces.one("invoke_agent main").attributes or {})

    traces.exporter.clear()
    await runner(traces, trace_content=False).chat("hello there")
    for span in traces.spans:
        assert CONTENT_KEYS.isdisjoint(span.attributes or {})


async def test_content_capture_can_be_switched_between_runs(traces: Traces) -> None:
    agent = runner(traces, trace_content=False)
    agent.adapter = ScriptedAdapter([Reply(text="one"), Reply(text="two")])
    await agent.chat("first")
    assert attr.GEN_AI_INPUT_MESSAGES not in (traces.one("chat scripted").attributes or {})
    agent.tracing.capture_content = True
    traces.exporter.clear()
    await agent.chat("second")
    assert attr.GEN_AI_INPUT_MESSAGES in (traces.one("chat scripted").attributes or {})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("1", True),
        ("span_only", True),
        ("SPAN_AND_EVENT", True),
        ("false", False),
        ("no_content", False),
        ("", False),
    ],
)
def test_capture_content_from_environment(value: str, expected: bool) -> None:
    assert capture_content_from_environment({CAPTURE_CONTENT_ENV: value}) is expected
    assert capture_content_from_environment({}) is False
