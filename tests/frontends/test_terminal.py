"""The terminal renderer draws real runs: streamed text, dimmed thinking, tool panels,
errors and the usage footer, from bus events or from StreamEvents alone."""

from __future__ import annotations

import io
import re

from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.terminal import TerminalRenderer, format_footer
from skillkit.models import TokenUsage

_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _console(*, colour: bool = False) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(
        file=out,
        width=100,
        force_terminal=colour,
        color_system="standard" if colour else None,
        highlight=False,
    )
    return console, out


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}"


def _weather_script() -> ScriptedAdapter:
    return ScriptedAdapter(
        [
            Reply(
                thinking="I should call the weather tool.",
                text="Let me check.",
                tool_calls=[("get_weather", {"city": "Paris"})],
            ),
            Reply(text="It is sunny in Paris."),
        ],
        chunk_size=3,
    )


def _weather_runner() -> AgentRunner:
    config = AgentConfig(model="scripted")
    return AgentRunner(config, adapter=_weather_script(), tools=[get_weather])


async def test_sink_draws_text_tool_call_result_and_footer_in_order() -> None:
    console, out = _console()
    runner = AgentRunner(
        AgentConfig(model="scripted"), adapter=_weather_script(), tools=[get_weather]
    )
    runner.events.add_sink(TerminalRenderer(console))

    await runner.chat("Weather in Paris?")

    screen = out.getvalue()
    order = [
        "I should call the weather tool.",
        "Let me check.",
        '⏺ get_weather(city="Paris")',
        "✓ get_weather",
        "Sunny in Paris",
        "It is sunny in Paris.",
        "● done",
        "2 turns",
    ]
    positions = [screen.index(fragment) for fragment in order]
    assert positions == sorted(positions), screen
    # Streamed deltas are joined back into whole lines, not one chunk per line.
    assert "Let me check.\n" in screen


async def test_thinking_is_drawn_dimmed_and_text_is_not() -> None:
    console, out = _console(colour=True)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(thinking="hmm", text="answer")], chunk_size=100),
    )
    runner.events.add_sink(TerminalRenderer(console))

    await runner.chat("q")

    screen = out.getvalue()
    assert "\x1b[2;3mhmm" in screen  # dim italic
    assert "\x1b[2;3manswer" not in screen
    assert "answer" in screen


async def test_unknown_tool_shows_an_error_result_panel() -> None:
    console, out = _console()
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("get_weather", {"city": "Oslo"})]), Reply(text="No tool.")]
    )
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    runner.events.add_sink(TerminalRenderer(console))

    await runner.chat("Weather in Oslo?")

    screen = out.getvalue()
    assert "✗ get_weather failed" in screen
    assert "Unknown tool 'get_weather'" in screen
    assert "No tool." in screen


async def test_model_failure_shows_one_error_line_and_a_failed_footer() -> None:
    console, out = _console()
    adapter = ScriptedAdapter([Reply(text="partial", error="provider exploded")])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    runner.events.add_sink(TerminalRenderer(console))

    await runner.chat("q")

    screen = out.getvalue()
    assert screen.count("provider exploded") == 1
    assert "error: llm: provider exploded" in screen
    assert "● failed" in screen


async def test_footer_shows_session_total_from_the_second_run_on() -> None:
    console, out = _console()
    adapter = ScriptedAdapter([Reply(text="one", usage=TokenUsage(input=10, output=5))], cycle=True)
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    runner.events.add_sink(TerminalRenderer(console))

    await runner.chat("a")
    first = out.getvalue()
    await runner.chat("b")
    second = out.getvalue()[len(first) :]

    assert "10 in · 5 out tokens" in first
    assert "session" not in first
    assert "session 30 tokens" in second


async def test_stream_events_alone_draw_the_same_run() -> None:
    console, out = _console()
    runner = AgentRunner(
        AgentConfig(model="scripted"), adapter=_weather_script(), tools=[get_weather]
    )
    renderer = TerminalRenderer(console)

    async for event in runner.chat_stream_events("Weather in Paris?"):
        renderer.stream(event)

    screen = out.getvalue()
    for fragment in (
        "Let me check.",
        '⏺ get_weather(city="Paris")',
        "✓ get_weather",
        "Sunny in Paris",
        "It is sunny in Paris.",
        "● done",
    ):
        assert fragment in screen, fragment


def test_long_tool_results_are_cut_with_a_count_of_hidden_lines() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console, max_result_lines=3)

    renderer.tool_result("ls", "\n".join(f"line {i}" for i in range(10)), is_error=False)

    screen = out.getvalue()
    assert "line 2" in screen
    assert "line 3" not in screen
    assert "… 7 more lines" in screen


def test_tool_text_is_not_read_as_markup() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console)

    renderer.tool_call("[bold]x[/bold]", {"q": "[red]y[/red]"})
    renderer.tool_result("[bold]x[/bold]", "[red]y[/red]", is_error=True)

    screen = out.getvalue()
    assert screen.count("[bold]x[/bold]") == 2
    assert "[red]y[/red]" in screen


def test_a_tool_call_is_one_line_naming_its_subject() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console)

    renderer.tool_call("bash", {"command": "git status\ngit log"})
    renderer.tool_call("read", {"path": "src/app.py", "offset": 1, "limit": 80})
    renderer.tool_call("fetch", {"q": "y" * 200, "n": 3})

    lines = out.getvalue().splitlines()
    assert lines[0] == "⏺ bash(git status …)"
    assert lines[1] == "⏺ read(src/app.py:1-80)"
    assert lines[2].startswith('⏺ fetch(q="yyy') and lines[2].endswith("…)")
    assert len(lines) == 3


def test_an_edit_shows_its_counts_and_a_coloured_diff() -> None:
    console, out = _console(colour=True)
    renderer = TerminalRenderer(console, markdown=False)

    renderer.tool_call(
        "edit",
        {"path": "app.py", "old_string": "a\nb\n", "new_string": "a\nB\nc\nd\n"},
        call_id="e",
    )
    renderer.tool_result("edit", "edited app.py", is_error=False, call_id="e")
    renderer.tool_call("write", {"path": "notes.txt", "content": "x\n" * 30}, call_id="w")
    renderer.tool_result("write", "wrote notes.txt", is_error=False, call_id="w")

    plain = _SGR.sub("", out.getvalue())
    lines = plain.splitlines()
    assert lines[0] == "⏺ edit(app.py) +3 −1"
    assert [line.strip() for line in lines[1:6]] == ["a", "-b", "+B", "+c", "+d"]
    assert lines[6].startswith("  ⎿ ✓ edit")
    assert "⏺ write(notes.txt) +30 −0" in plain
    assert "… 10 more diff lines" in plain  # 20 drawn
    coloured = out.getvalue()
    assert "\x1b[31m    -b" in coloured and "\x1b[32m    +B" in coloured


def test_a_failed_or_refused_edit_shows_no_diff_only_how_it_failed() -> None:
    console, out = _console(colour=True)
    renderer = TerminalRenderer(console, markdown=False)
    edit = {"path": "app.py", "old_string": "port = 80\n", "new_string": "port = 8080\n"}

    renderer.tool_call("edit", edit, call_id="e")
    renderer.tool_result(
        "edit", "Could not find the text to replace in app.py", is_error=True, call_id="e"
    )
    renderer.tool_call("write", {"path": "notes.txt", "content": "x\n"}, call_id="w")
    renderer.tool_result("write", "Blocked: denied by the user", is_error=True, call_id="w")

    lines = _SGR.sub("", out.getvalue()).splitlines()
    assert [line.rstrip() for line in lines] == [
        "⏺ edit(app.py)",
        "  ⎿ ✗ edit failed",
        "    Could not find the text to replace in app.py",
        "⏺ write(notes.txt)",
        "  ⎿ ✗ write failed",
        "    Blocked: denied by the user",
    ]
    failed = renderer.tool_records[0]
    assert failed.call == "edit(app.py)" and failed.diff == []  # /expand shows none either


def test_an_edit_drawn_before_it_ends_gets_its_diff_only_when_it_succeeds() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console, markdown=False)
    first = {"path": "a.py", "old_string": "one\n", "new_string": "ONE\n"}
    second = {"path": "b.py", "old_string": "two\n", "new_string": "TWO\n"}

    # two calls of one turn: the second is drawn while the first still runs
    renderer.tool_call("edit", first, call_id="a")
    renderer.tool_call("edit", second, call_id="b")
    renderer.notice("an approval panel")  # drawn while b waits
    renderer.tool_result("edit", "the file changed since it was read", is_error=True, call_id="a")
    renderer.tool_result("edit", "edited b.py", is_error=False, call_id="b")

    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines == [
        "⏺ edit(a.py)",
        "⏺ edit(b.py)",
        "an approval panel",
        "  ⎿ ✗ edit failed",
        "    the file changed since it was read",
        "⏺ edit(b.py) +1 −1",
        "    -two",
        "    +TWO",
        "  ⎿ ✓ edit",
        "    edited b.py",
    ]


def test_a_result_is_one_status_line_with_elapsed_time_and_a_folded_preview() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console)

    renderer.tool_result(
        "bash", "\n".join(str(i) for i in range(1, 101)), is_error=False, elapsed=1.25
    )

    lines = out.getvalue().splitlines()
    assert lines[0] == "  ⎿ ✓ bash · 1.2s · 100 lines"
    assert [line.strip() for line in lines[1:]] == ["1", "2", "3", "4", "… 96 more lines"]


def test_the_footer_has_words_for_every_stop_reason() -> None:
    from typing import get_args

    from skillkit.models import StopReason

    labels = {
        reason: format_footer(reason, TokenUsage(input=1, output=5)).plain.split("  ")[0]
        for reason in get_args(StopReason)
    }
    assert labels["guardrail"] == "● stopped by a guardrail"
    assert labels["budget"] == "● stopped: the next model call would exceed the budget"
    assert labels["approval_pending"] == "● paused: tool calls wait for approval"
    assert labels["aborted"] == "● aborted"
    for reason, label in labels.items():
        assert "_" not in label, reason  # never the raw name of a stop reason


def test_footer_names_each_outcome() -> None:
    usage = TokenUsage(input=1200, cache_read=800, output=15_000)
    assert (
        format_footer("stop", usage, turns=1).plain == "● done  1 turn · 2000 in · 15.0k out tokens"
    )
    assert format_footer("aborted", usage).plain.startswith("● aborted")
    assert format_footer("max_iterations", usage).plain.startswith(
        "● paused at the iteration limit"
    )
    assert format_footer("output_invalid", usage).plain.startswith(
        "● failed: the answer never matched the output schema"
    )
    assert format_footer("stop", usage, cost=0.01234).plain.endswith("· $0.0123")


# --------------------------------------------------------------------------- requests and notices


def _draw(*payloads: object) -> str:
    from skillkit.events import EventBus

    console, out = _console()
    renderer = TerminalRenderer(console)
    bus = EventBus()
    for payload in payloads:
        renderer.emit(bus.event(payload))  # type: ignore[arg-type]
    return out.getvalue()


def test_an_approval_request_shows_the_call_the_reason_the_risk_and_the_rule() -> None:
    from skillkit.permissions.events import ApprovalNeeded

    shown = _draw(
        ApprovalNeeded(
            request_id="approval-1",
            tool_name="bash",
            tool_input={"command": "git push --force", "description": "Publish the branch"},
            input_description="Publish the branch",
            mode="default",
            reason="force push rewrites the remote history",
            risk_hint="force push",
            matched="bash(git *)",
        )
    )

    assert "approval needed bash" in shown
    assert "bash: git push --force" in shown
    assert "about Publish the branch" in shown
    assert "why   force push rewrites the remote history" in shown
    assert "risk  force push" in shown
    assert "rule  bash(git *)" in shown


def test_an_edit_asking_for_approval_shows_the_change_it_asks_to_make() -> None:
    from skillkit.permissions.events import ApprovalNeeded

    edit = {"path": "app.cfg", "edits": [{"old_text": "port = 80", "new_text": "port = 8080"}]}
    shown = _draw(
        ApprovalNeeded(request_id="approval-1", tool_name="edit", tool_input=edit),
        ApprovalNeeded(request_id="approval-2", tool_name="bash", tool_input={"command": "ls"}),
    )
    lines = [line.strip("│ ") for line in shown.splitlines()]
    start = lines.index("change +1 −1")
    assert lines[start + 1 : start + 3] == ["-port = 80", "+port = 8080"]
    assert lines.count("change +1 −1") == 1  # a command has no change to show


def test_a_plan_for_approval_is_drawn_as_markdown() -> None:
    from skillkit.permissions.events import ApprovalNeeded

    shown = _draw(
        ApprovalNeeded(
            request_id="approval-2",
            tool_name="exit_plan_mode",
            plan_content="# Steps\n\n1. Add **tests**\n2. Fix `parse`",
        )
    )

    assert "plan for approval" in shown
    assert "Steps" in shown and "# Steps" not in shown
    assert "Add tests" in shown and "Fix parse" in shown


def test_questions_are_numbered_with_their_options() -> None:
    from skillkit.permissions.events import QuestionItem, QuestionNeeded, QuestionOption

    shown = _draw(
        QuestionNeeded(
            request_id="question-1",
            questions=[
                QuestionItem(
                    question="Which database?",
                    header="Database",
                    options=[
                        QuestionOption(label="Postgres", description="robust"),
                        QuestionOption(label="SQLite"),
                    ],
                ),
            ],
        )
    )

    assert "question Database" in shown
    assert "Which database?" in shown
    assert "1) Postgres — robust" in shown
    assert "2) SQLite" in shown
    assert "(a number, or type an answer)" in shown


def test_mode_changes_skill_reloads_and_background_results_are_one_line_each() -> None:
    from skillkit.events import StoreUpdate
    from skillkit.permissions.events import ModeChanged
    from skillkit.runtime.events import BgResult

    shown = _draw(
        ModeChanged(prev_mode="default", mode="plan"),
        StoreUpdate(domain="skill", op="create", id="fresh", payload={}),
        StoreUpdate(domain="skill", op="delete", id="old", payload={}),
        StoreUpdate(domain="skill", op="error", id="bad", payload={"errors": ["x: broken"]}),
        StoreUpdate(domain="task", op="create", id="t1", payload={}),
        BgResult(task_id="b1", status="completed", exit_code=0),
    )

    assert shown.splitlines() == [
        "⏵ mode plan · read-only: changes are refused until the plan is approved",
        "skill fresh added",
        "skill old removed",
        "skill bad failed to load: x: broken",
        "background task b1 completed, exit code 0",
    ]


def test_the_call_panel_of_ask_user_leaves_the_arguments_to_the_question_panel() -> None:
    console, out = _console()

    TerminalRenderer(console).tool_call("ask_user", {"questions": [{"question": "Why?"}]})

    assert "⏺ ask_user (shown below)" in out.getvalue()
    assert "Why?" not in out.getvalue()


def test_a_failing_plugin_hook_is_drawn_once_per_hook() -> None:
    from skillkit.events import ErrorInfo

    failed = ErrorInfo(stage="plugin:project:watch:skillkit_on_event", message="E: x")
    shown = _draw(
        failed,
        failed,
        ErrorInfo(stage="plugin:other:skillkit_system_prompt", message="E: y"),
        ErrorInfo(stage="tool:read", message="gone"),
        failed,
    )

    assert shown.splitlines() == [
        "error: plugin 'project:watch' failed in skillkit_on_event: E: x (shown once)",
        "error: plugin 'other' failed in skillkit_system_prompt: E: y (shown once)",
        "error: tool:read: gone",
    ]


def test_streamed_tool_output_is_not_drawn_again_with_the_result() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console)

    shown = renderer.tool_output("one\ntwo\n")
    renderer.tool_result("bash", "one\ntwo", is_error=False, shown=shown)
    renderer.tool_output("three\n")
    renderer.tool_result("bash", "three\n[exit code 1]", is_error=True, shown=["three"])

    text = out.getvalue()
    assert text.count("one") == 1 and text.count("two") == 1 and text.count("three") == 1
    assert "✓ bash · 2 lines above" in text
    assert "✗ bash failed · 1 line above" in text and "[exit code 1]" in text  # only what it adds


def test_held_lines_reach_the_console_whole_and_asides_do_not_cut_them() -> None:
    from skillkit.models import StreamEvent

    console, out = _console()
    renderer = TerminalRenderer(console)
    renderer.hold_partial_line = True

    renderer.stream(StreamEvent("text_delta", content="first line\nsecond "))
    renderer.aside("↳ sent to the running agent: hi")
    renderer.stream(StreamEvent("text_delta", content="half"))

    assert out.getvalue() == "first line\n↳ sent to the running agent: hi\n"
    assert renderer.partial_line() == [("", "second half")]
    renderer.end_line()
    assert out.getvalue().endswith("second half\n")
    assert renderer.partial_line() == []


def test_a_provider_retry_is_drawn_as_it_happens() -> None:
    from skillkit.events import Event, ProviderRetry

    console, out = _console()
    renderer = TerminalRenderer(console)

    payload = ProviderRetry(attempt=1, max_attempts=3, delay=2.0, error="overloaded")
    renderer.emit(Event(type="retry", agent_id="a", payload=payload))

    assert "the model call failed (overloaded); retry 1 of 3 in 2.0s" in out.getvalue()


async def test_footer_says_what_caching_saved_at_the_catalog_prices() -> None:
    from skillkit.model_registry import ModelRegistry

    console, out = _console()
    usage = TokenUsage(input=2_000, output=10, cache_read=40_000)
    adapter = ScriptedAdapter([Reply(text="one", usage=usage)], model="claude-sonnet-4-5")
    models = ModelRegistry()
    runner = AgentRunner(
        AgentConfig(model="anthropic:claude-sonnet-4-5"), adapter=adapter, models=models
    )
    runner.events.add_sink(TerminalRenderer(console, models=runner.models))

    await runner.chat("a")

    model = models.get("anthropic:claude-sonnet-4-5")
    assert model is not None
    saved = 40_000 * (model.cost.input - model.cost.cache_read) / 1e6
    assert f"cache saved ${saved:.4f}" in out.getvalue()


def test_footer_shows_no_saving_without_cache_reads() -> None:
    line = format_footer("stop", TokenUsage(input=5, output=1), cost=0.5, saved=0.0).plain
    assert "cache saved" not in line
    assert "cache saved $0.1200" in format_footer("stop", TokenUsage(), saved=0.12).plain


def test_a_long_streamed_output_is_folded_and_counted() -> None:
    from skillkit.events import EventBus, ToolExecutionEnd, ToolExecutionUpdate
    from skillkit.models import ToolResult

    console, out = _console()
    renderer = TerminalRenderer(console)
    bus = EventBus()
    numbers = [str(i) for i in range(1, 101)]
    for start in range(0, 100, 10):
        chunk = "\n".join(numbers[start : start + 10]) + "\n"
        renderer.emit(
            bus.event(ToolExecutionUpdate(tool_call_id="c", tool_name="bash", output=chunk))
        )
    result = ToolResult.text("\n".join(numbers))
    renderer.emit(bus.event(ToolExecutionEnd(tool_call_id="c", tool_name="bash", result=result)))

    lines = out.getvalue().splitlines()
    assert [line for line in lines if line.startswith("  │")] == [f"  │ {i}" for i in range(1, 9)]
    assert lines[-1] == "  ⎿ ✓ bash · 100 lines, 8 above, 92 folded"
