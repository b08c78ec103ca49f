"""Whatever arguments a model sends, the run goes on and every call gets one result."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import ToolCall, ToolResultMessage


@tool(thread=False)
def book(city: str, nights: int = 1, tags: list[str] | None = None, urgent: bool = False) -> str:
    """Book a hotel."""
    return f"{city}:{nights}:{tags}:{urgent}"


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
arguments = st.dictionaries(
    st.sampled_from(["city", "nights", "tags", "urgent", "extra", "__raw_arguments__"])
    | st.text(max_size=6),
    json_value,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(calls=st.lists(arguments, min_size=1, max_size=3))
def test_any_arguments_give_exactly_one_result_per_call(calls: list[dict[str, Any]]) -> None:
    tool_calls = [ToolCall(id=f"c{i}", name="book", arguments=a) for i, a in enumerate(calls)]
    adapter = ScriptedAdapter([Reply(tool_calls=tool_calls), "done"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[book])
    resp = asyncio.run(agent.chat("book"))
    assert resp.stop_reason == "stop" and resp.text == "done"
    results = [m for m in resp.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [c.id for c in tool_calls]
    for result, args in zip(results, calls, strict=True):
        if result.is_error:
            assert result.text.startswith("Invalid arguments for tool 'book'")
        else:
            assert result.text.startswith(f"{args['city']}:")
