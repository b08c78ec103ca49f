"""The terminal renderer draws real runs: streamed text, dimmed thinking, tool panels,
errors and the usage footer, from bus events or from StreamEvents alone."""

from __future__ import annotations

import io

from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.terminal import TerminalRenderer, format_footer
from skillkit.models import TokenUsage


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
        "tool call get_weather",
        '{"city": "Paris"}',
        "result get_weather",
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
    assert "error get_weather" in screen
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
        "tool call get_weather",
        '{"city": "Paris"}',
        "result get_weather",
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


def test_long_arguments_are_shown_indented() -> None:
    console, out = _console()
    renderer = TerminalRenderer(console)

    renderer.tool_call("write", {"path": "notes.txt", "content": "x" * 100})

    lines = out.getvalue().splitlines()
    assert any(line.strip().startswith('│   "path": "notes.txt",') for line in lines)


def test_footer_names_each_outcome() -> None:
    usage = TokenUsage(input=1200, cache_read=800, output=15_000)
    assert (
        format_footer("stop", usage, turns=1).plain == "● done  1 turn · 2000 in · 15.0k out tokens"
    )
    assert format_footer("aborted", usage).plain.startswith("● aborted")
    assert format_footer("max_iterations", usage).plain.startswith(
        "● paused at the iteration limit"
    )
    assert format_footer("stop", usage, cost=0.01234).plain.endswith("· $0.0123")
