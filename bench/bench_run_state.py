"""Saving and loading a paused run (not part of the test run).

    python bench/bench_run_state.py

A run paused on approvals with 1,000 messages in its transcript (user messages,
assistant replies with text and tool calls, tool results of a few hundred characters),
saved with ``RunState.to_json`` and loaded with ``RunState.from_json``: the median of
50 rounds each. Floor, measured in the same run: ``json.dumps`` / ``json.loads`` of
the same transcript as plain dicts.

Target: save <= 20 ms and load <= 20 ms.
"""

from __future__ import annotations

import json
import statistics
import time

from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    PendingApproval,
    RunState,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


def transcript(size: int) -> list[AgentMessage]:
    messages: list[AgentMessage] = []
    i = 0
    while len(messages) < size - 1:
        if i % 10 == 0:
            messages.append(UserMessage(content=f"step {i}: carry on with the migration"))
        call = ToolCall(id=f"c{i}", name="read", arguments={"path": f"src/module_{i}.py"})
        messages.append(
            AssistantMessage(
                content=[TextPart(f"Reading module {i}."), call],
                stop_reason="tool_use",
                usage=TokenUsage(input=1200 + i, output=40),
                provider="openai",
                model="gpt-4o",
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=call.id,
                tool_name="read",
                content=[TextPart(f"def f_{i}(x):\n    return x * {i}\n" * 8)],
            )
        )
        i += 1
    call = ToolCall(id="last", name="deploy", arguments={"target": "prod"})
    messages = messages[: size - 1]
    messages.append(AssistantMessage(content=[call], stop_reason="tool_use"))
    return messages


def median_ms(fn: object, rounds: int = 50) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def main() -> None:
    messages = transcript(1000)
    state = RunState(
        messages=messages,
        pending=[PendingApproval(call_id="last", tool="deploy", args={"target": "prod"})],
        iterations=400,
    )
    saved = state.to_json()
    assert RunState.from_json(saved) == state
    plain = json.loads(saved)
    floor_save = median_ms(lambda: json.dumps(plain))
    floor_load = median_ms(lambda: json.loads(saved))
    save = median_ms(state.to_json)
    load = median_ms(lambda: RunState.from_json(saved))
    print(f"paused run: {len(messages)} messages, {len(saved) / 1024:.0f} KiB of JSON")
    print(f"floor json.dumps:    {floor_save:7.2f} ms")
    print(f"floor json.loads:    {floor_load:7.2f} ms")
    print(f"RunState.to_json:    {save:7.2f} ms   target <= 20 ms")
    print(f"RunState.from_json:  {load:7.2f} ms   target <= 20 ms")


if __name__ == "__main__":
    main()
