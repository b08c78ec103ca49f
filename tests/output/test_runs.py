"""Structured output through `AgentRunner`, driven by the scripted adapter: native and
tool mode, validation retries, the retry limit, streaming and the mode choice."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import (
    AssistantMessage,
    StreamEvent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.output import OutputSpec
from tests.conftest import Recorder

pytestmark = pytest.mark.timeout(30)


class Weather(BaseModel):
    city: str
    temp: int


@dataclasses.dataclass
class WeatherData:
    city: str
    temp: int


class WeatherDict(TypedDict):
    city: str
    temp: int


WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
    "required": ["city", "temp"],
}
STRICT_WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
    "required": ["city", "temp"],
    "additionalProperties": False,
}
PARIS = {"city": "Paris", "temp": 21}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"21 degrees in {city}"


def agent(replies: list[Reply | str], *tools: Any, chunk_size: int = 8) -> AgentRunner:
    adapter = ScriptedAdapter(replies, chunk_size=chunk_size)
    return AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=tools)


def requests_of(runner: AgentRunner) -> list[Any]:
    adapter = runner.adapter
    assert isinstance(adapter, ScriptedAdapter)
    return adapter.requests


# --------------------------------------------------------------------------- native mode


async def test_native_mode_returns_the_validated_model(recorder: Recorder) -> None:
    runner = agent([Reply(output=PARIS)])
    runner.events.add_sink(recorder)

    response = await runner.chat("Weather in Paris?", output_type=Weather)

    assert response.stop_reason == "stop"
    assert response.output == Weather(city="Paris", temp=21)
    assert response.text == '{"city": "Paris", "temp": 21}'
    request = requests_of(runner)[0]
    assert request.output is not None
    assert (request.output.mode, request.output.name, request.output.strict) == (
        "native",
        "Weather",
        True,
    )
    assert request.output.schema == STRICT_WEATHER
    assert request.tools == []
    [result] = recorder.of("output")
    assert (result.ok, result.value, result.attempts, result.mode) == (True, PARIS, 1, "native")
    assert recorder.types[-3:] == ["output", "agent_end", "idle"]


@pytest.mark.parametrize(
    ("output_type", "expected"),
    [
        (Weather, Weather(city="Paris", temp=21)),
        (WeatherData, WeatherData("Paris", 21)),
        (WeatherDict, {"city": "Paris", "temp": 21}),
        (WEATHER_SCHEMA, {"city": "Paris", "temp": 21}),
    ],
    ids=["pydantic", "dataclass", "typeddict", "json-schema"],
)
@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_each_kind_of_output_type_in_each_mode(
    output_type: Any, expected: Any, mode: str
) -> None:
    runner = agent([Reply(output=PARIS)])

    response = await runner.chat("Weather?", output_type=OutputSpec.of(output_type, mode=mode))  # type: ignore[arg-type]

    assert response.stop_reason == "stop"
    assert response.output == expected
    assert type(response.output) is type(expected)
    assert requests_of(runner)[0].output.mode == mode


async def test_an_invalid_answer_goes_back_with_the_error_and_the_retry_is_accepted(
    recorder: Recorder,
) -> None:
    runner = agent([Reply(output={"city": "Paris", "temp": "warm"}), Reply(output=PARIS)])
    runner.events.add_sink(recorder)

    response = await runner.chat("Weather?", output_type=Weather)

    assert response.stop_reason == "stop"
    assert response.output == Weather(city="Paris", temp=21)
    retry = response.messages[2]
    assert isinstance(retry, UserMessage)
    assert retry.content == (
        "The answer is not valid:\n"
        "- temp: Input should be a valid integer, unable to parse string as an integer\n"
        "Reply with only the JSON value, matching the schema."
    )
    second = requests_of(runner)[1]
    assert second.messages[-1] == retry
    [result] = recorder.of("output")
    assert (result.ok, result.attempts) == (True, 2)


async def test_the_run_gives_up_after_the_retry_limit_with_the_error_as_data(
    recorder: Recorder,
) -> None:
    bad = Reply(text="It is warm in Paris.")
    runner = agent([bad, bad, bad, bad])
    runner.events.add_sink(recorder)

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, retries=1))

    assert response.stop_reason == "output_invalid"
    assert response.output is None
    assert response.error is not None
    assert response.error.startswith("the model's output was not valid after 2 attempts: ")
    assert "not valid JSON" in response.error
    assert len(requests_of(runner)) == 2
    [result] = recorder.of("output")
    assert (result.ok, result.value, result.attempts) == (False, None, 2)
    assert "not valid JSON" in (result.error or "")
    assert [e.stage for e in recorder.of("error")] == ["output"]
    [end] = recorder.of("agent_end")
    assert end.stop_reason == "output_invalid"


async def test_with_no_retries_the_first_invalid_answer_ends_the_run() -> None:
    runner = agent([Reply(output={"city": 3}), Reply(output=PARIS)])

    response = await runner.chat("Weather?", output_type=OutputSpec.of(WEATHER_SCHEMA, retries=0))

    assert response.stop_reason == "output_invalid"
    assert "- city: 3 is not of type 'string'" in (response.error or "")
    assert len(requests_of(runner)) == 1


async def test_tools_run_before_the_native_answer() -> None:
    runner = agent(
        [Reply(tool_calls=[("get_weather", {"city": "Paris"})]), Reply(output=PARIS)],
        get_weather,
    )

    response = await runner.chat("Weather?", output_type=Weather)

    assert response.output == Weather(city="Paris", temp=21)
    assert [type(m).__name__ for m in response.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


# --------------------------------------------------------------------------- tool mode


async def test_tool_mode_offers_a_final_tool_and_ends_when_it_is_called(
    recorder: Recorder,
) -> None:
    runner = agent([Reply(text="Here it is.", output=PARIS)], get_weather)
    runner.events.add_sink(recorder)

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, mode="tool"))

    assert response.stop_reason == "stop"
    assert response.output == Weather(city="Paris", temp=21)
    [request] = requests_of(runner)
    assert [t.name for t in request.tools] == ["get_weather", "final_result"]
    assert request.tools[-1].parameters == STRICT_WEATHER
    assert request.output.mode == "tool"
    assert request.output.name == "final_result"
    assistant, result = response.messages[1], response.messages[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls == [ToolCall("call_1", "final_result", PARIS)]
    assert result == ToolResultMessage(
        tool_call_id="call_1",
        tool_name="final_result",
        content=result.content,
        is_error=False,
    )
    assert result.text == "Final answer accepted."
    assert recorder.types.count("tool_execution_end") == 1
    [output] = recorder.of("output")
    assert (output.ok, output.mode) == (True, "tool")


async def test_an_invalid_final_call_gets_an_error_result_and_may_be_retried() -> None:
    runner = agent(
        [
            Reply(tool_calls=[("final_result", {"city": "Paris"})]),
            Reply(tool_calls=[("final_result", PARIS)]),
        ]
    )

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, mode="tool"))

    assert response.output == Weather(city="Paris", temp=21)
    first_result = response.messages[2]
    assert isinstance(first_result, ToolResultMessage)
    assert first_result.is_error
    assert first_result.text == (
        "The answer is not valid:\n- temp: Field required\n"
        "Call the final_result tool again with corrected arguments."
    )


async def test_other_calls_of_the_final_turn_still_run_in_call_order() -> None:
    runner = agent(
        [Reply(tool_calls=[("final_result", PARIS), ("get_weather", {"city": "Paris"})])],
        get_weather,
    )

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, mode="tool"))

    assert response.output == Weather(city="Paris", temp=21)
    results = [m for m in response.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_name, r.text) for r in results] == [
        ("final_result", "Final answer accepted."),
        ("get_weather", "21 degrees in Paris"),
    ]


async def test_a_text_answer_in_tool_mode_is_told_to_call_the_final_tool() -> None:
    runner = agent([Reply(text="It is 21 degrees."), Reply(tool_calls=[("final_result", PARIS)])])

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, mode="tool"))

    assert response.output == Weather(city="Paris", temp=21)
    nudge = response.messages[2]
    assert isinstance(nudge, UserMessage)
    assert isinstance(nudge.content, str)
    assert nudge.content.startswith("You must give the final answer by calling the final_result")


async def test_a_valid_json_text_answer_in_tool_mode_is_accepted() -> None:
    runner = agent(['{"city": "Paris", "temp": 21}'])

    response = await runner.chat("Weather?", output_type=OutputSpec.of(Weather, mode="tool"))

    assert response.output == Weather(city="Paris", temp=21)
    assert len(requests_of(runner)) == 1


async def test_a_root_that_is_not_an_object_is_asked_for_wrapped() -> None:
    runner = agent([Reply(output={"result": [3, 1, 2]})])

    response = await runner.chat("Numbers?", output_type=list[int])

    assert response.output == [3, 1, 2]
    assert requests_of(runner)[0].output.schema["required"] == ["result"]


# --------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_streaming_yields_the_partial_output_then_the_validated_output(mode: str) -> None:
    runner = agent([Reply(output={"city": "Paris", "temp": 21})], chunk_size=3)

    events: list[StreamEvent] = [
        event
        async for event in runner.chat_stream_events(
            "Weather?",
            output_type=OutputSpec.of(Weather, mode=mode),  # type: ignore[arg-type]
        )
    ]

    partials = [e.output for e in events if e.type == "output_partial"]
    assert partials[0] == {}
    assert {"city": "Pa"} in partials
    assert partials[-1] == {"city": "Paris", "temp": 21}
    assert all(a != b for a, b in itertools.pairwise(partials))
    kinds = [e.type for e in events]
    assert kinds[-2:] == ["output", "done"]
    assert events[-2].output == {"city": "Paris", "temp": 21}
    assert events[-1].stop_reason == "stop"
    assert kinds.index("output_partial") < kinds.index("output")


async def test_a_run_without_an_output_type_has_no_output_events(recorder: Recorder) -> None:
    runner = agent(["Hello"])
    runner.events.add_sink(recorder)

    events = [event async for event in runner.chat_stream_events("Hi")]

    assert not [e for e in events if e.type.startswith("output")]
    assert "output" not in recorder.types
    response = await agent(["Hello"]).chat("Hi")
    assert response.output is None


# --------------------------------------------------------------------------- mode choice


class _CatalogScripted(ScriptedAdapter):
    native_output = None  # type: ignore[assignment]  # decide by the catalog


@pytest.mark.parametrize(
    ("model", "mode"),
    [("openai:gpt-4o", "native"), ("anthropic:claude-sonnet-4-0", "tool")],
)
async def test_auto_mode_follows_the_catalog(model: str, mode: str) -> None:
    adapter = _CatalogScripted([Reply(output=PARIS)])
    runner = AgentRunner(AgentConfig(model=model), adapter=adapter)

    response = await runner.chat("Weather?", output_type=Weather)

    assert response.output == Weather(city="Paris", temp=21)
    assert adapter.requests[0].output is not None
    assert adapter.requests[0].output.mode == mode


async def test_a_schema_with_no_strict_form_uses_the_final_tool_in_auto_mode() -> None:
    free_form = {"type": "object", "properties": {"data": {"type": "object"}}}
    runner = agent([Reply(output={"data": {"any": 1}})])

    response = await runner.chat("Data?", output_type=free_form)

    assert response.output == {"data": {"any": 1}}
    request = requests_of(runner)[0]
    assert (request.output.mode, request.output.strict) == ("tool", False)
    assert request.tools[-1].parameters == free_form


async def test_a_wrong_output_type_raises_before_any_run() -> None:
    runner = agent(["Hello"])

    with pytest.raises(TypeError, match="output_type"):
        await runner.chat("Hi", output_type="Weather")

    assert not runner.is_running
    assert requests_of(runner) == []
    assert (await runner.chat("Hi")).text == "Hello"


async def test_a_streamed_run_that_gives_up_ends_with_an_error_then_done() -> None:
    runner = agent(["not json", "still not json"])

    events = [
        e
        async for e in runner.chat_stream_events(
            "Weather?", output_type=OutputSpec.of(Weather, retries=1)
        )
    ]

    error, done = events[-2], events[-1]
    assert (error.type, error.stop_reason) == ("error", "output_invalid")
    assert (done.type, done.stop_reason) == ("done", "output_invalid")
    assert done.error == error.error
    assert not [e for e in events if e.type == "output"]


async def test_continue_after_the_iteration_limit_keeps_asking_for_the_output() -> None:
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("get_weather", {"city": "Paris"})]), Reply(output=PARIS)]
    )
    runner = AgentRunner(AgentConfig(model="scripted", max_iterations=1), adapter=adapter)
    runner.tools.register(get_weather)

    paused = await runner.chat("Weather?", output_type=Weather)
    resumed = await runner.continue_()

    assert paused.stop_reason == "max_iterations"
    assert paused.output is None
    assert resumed.output == Weather(city="Paris", temp=21)
    assert adapter.requests[1].output == adapter.requests[0].output
