"""Print and JSON modes run one prompt and turn its outcome into output and an exit code."""

from __future__ import annotations

import io
import json

import skillkit
from skillkit import AgentConfig, AgentRunner, Event
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import AgentStart, Idle, TurnStart
from skillkit.frontends.agent_session import SCHEMA_VERSION
from skillkit.frontends.print_mode import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    RunEventWriter,
)
from skillkit.models import StreamEvent
from tests.frontends.faces import json_once, print_once


def _runner(*replies: Reply | str, max_iterations: int = 50, cycle: bool = False) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="scripted", max_iterations=max_iterations),
        adapter=ScriptedAdapter(list(replies), cycle=cycle),
    )


async def test_print_writes_only_the_final_answer() -> None:
    out, err = io.StringIO(), io.StringIO()
    runner = _runner(Reply(text="Checking.", tool_calls=[("nope", {})]), Reply(text="Final."))

    code = await print_once(runner, "q", out=out, err=err)

    assert (code, out.getvalue(), err.getvalue()) == (EXIT_OK, "Final.\n", "")


async def test_print_reports_a_failed_run_on_one_line_with_exit_1() -> None:
    out, err = io.StringIO(), io.StringIO()
    runner = _runner(Reply(text="half", error="line one\nline two"))

    code = await print_once(runner, "q", out=out, err=err)

    assert code == EXIT_FAILED
    assert out.getvalue() == ""
    assert err.getvalue() == "skillkit: error: line one line two\n"


async def test_print_fails_when_the_iteration_limit_stops_the_run() -> None:
    out, err = io.StringIO(), io.StringIO()
    runner = _runner(Reply(tool_calls=[("nope", {})]), max_iterations=2, cycle=True)

    code = await print_once(runner, "q", out=out, err=err)

    assert code == EXIT_FAILED
    assert (
        err.getvalue()
        == "skillkit: error: the run stopped at the iteration limit (2 model calls)\n"
    )


async def test_print_keeps_a_cut_answer_but_warns() -> None:
    out, err = io.StringIO(), io.StringIO()
    runner = _runner(Reply(text="A long ans", stop_reason="length"))

    code = await print_once(runner, "q", out=out, err=err)

    assert (code, out.getvalue()) == (EXIT_OK, "A long ans\n")
    assert "output token limit" in err.getvalue()


async def test_an_aborted_run_exits_130() -> None:
    out, err = io.StringIO(), io.StringIO()
    runner = _runner("never")

    @runner.events.on("agent_start")
    def abort_at_once(event: Event) -> None:
        runner.abort("stop")

    code = await print_once(runner, "q", out=out, err=err)

    assert (code, out.getvalue(), err.getvalue()) == (EXIT_INTERRUPTED, "", "skillkit: aborted\n")


async def test_json_writes_the_run_from_agent_start_to_agent_end() -> None:
    out, err = io.BytesIO(), io.StringIO()
    runner = _runner(Reply(thinking="t", text="Hi", tool_calls=[("nope", {"a": 1})]), "Bye")

    code = await json_once(runner, "hello", out=out, err=err)

    header, *lines = out.getvalue().splitlines()
    assert json.loads(header) == {
        "type": "header",
        "mode": "json",
        "skillkit_version": skillkit.__version__,
        "schema_version": SCHEMA_VERSION,
        "session_id": None,
    }
    events = [Event.from_json(line) for line in lines]
    types = [e.type for e in events]
    assert code == EXIT_OK
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert events[0].prompt == "hello"
    assert events[-1].text == "Bye"
    assert "input" not in types and "idle" not in types
    for kind in ("thinking_delta", "text_delta", "tool_execution_start", "usage", "turn_end"):
        assert kind in types
    assert err.getvalue() == ""


async def test_json_mode_reports_a_failed_run_with_exit_1() -> None:
    out, err = io.BytesIO(), io.StringIO()
    runner = _runner(Reply(error="boom"))

    code = await json_once(runner, "q", out=out, err=err)

    last = Event.from_json(out.getvalue().splitlines()[-1])
    assert code == EXIT_FAILED
    assert (last.type, last.stop_reason, last.error) == ("agent_end", "error", "boom")
    assert err.getvalue() == "skillkit: error: boom\n"


def test_event_writer_skips_events_outside_a_root_run() -> None:
    out = io.BytesIO()
    writer = RunEventWriter(out, agent_id="main")
    start = Event("agent_start", AgentStart(prompt="p"))

    writer.emit(Event("idle", Idle()))
    writer.emit(Event("agent_start", AgentStart(), agent_id="child", parent_id="main"))
    writer.emit(start)
    writer.emit(Event("agent_start", AgentStart(), agent_id="child", parent_id="main"))
    writer.emit(Event("turn_start", TurnStart(turn=1)))
    writer.emit(Event("text_delta", StreamEvent("text_delta", content="x")))
    writer.emit(Event("idle", Idle()))  # still inside the run: written

    types = [Event.from_json(line).type for line in out.getvalue().splitlines()]
    assert types == ["agent_start", "agent_start", "turn_start", "text_delta", "idle"]


class _ClosedPipe(io.BytesIO):
    def write(self, data: object) -> int:
        raise BrokenPipeError


async def test_json_mode_aborts_the_run_when_the_reader_goes_away() -> None:
    err = io.StringIO()
    adapter = ScriptedAdapter([Reply(tool_calls=[("nope", {})])], cycle=True)
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)

    code = await json_once(runner, "q", out=_ClosedPipe(), err=err)

    assert (code, err.getvalue()) == (EXIT_FAILED, "")
    assert adapter.requests == []  # aborted at agent_start, before the first model call
