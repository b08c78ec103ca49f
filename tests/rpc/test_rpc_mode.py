"""``skillkit --mode rpc`` in a real subprocess, driven by `RpcClient` (and by raw lines)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillkit.rpc import RpcClient, RpcError

pytestmark = pytest.mark.timeout(60)

SLOW = """
replies:
  - delay: 0.1
    text: "%s"
  - text: "Second reply."
  - text: "Third reply."
cycle: true
""" % ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen " * 5)
"""The first reply streams for about 5 s (8 characters every 0.1 s): a slow machine's
commands sent after its first delta still reach a run in progress."""

SHELL = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
  - text: "Finished."
cycle: true
"""

HELLO = """
replies:
  - text: "Hello back."
cycle: true
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    return folder


def environment(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    return env


async def start(work: Path, script: str, *args: str) -> RpcClient:
    path = work.parent / "script.yaml"
    path.write_text(script)
    return await RpcClient.start(
        "--model",
        f"scripted:{path}",
        "--sandbox",
        "off",
        *args,
        cwd=work,
        env=environment(work),
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
async def hello(work: Path) -> AsyncIterator[RpcClient]:
    client = await start(work, HELLO)
    yield client
    await client.aclose()


async def test_the_header_names_version_schema_and_session(hello: RpcClient) -> None:
    from skillkit import __version__

    assert hello.header["skillkit_version"] == __version__
    assert hello.header["schema_version"] == 1
    assert hello.header["mode"] == "rpc"
    state = await hello.get_state()
    assert isinstance(hello.header["session_id"], str)
    assert state["session_id"] == hello.header["session_id"]


async def test_a_prompt_streams_its_events_then_idle(hello: RpcClient) -> None:
    assert await hello.prompt("hi") == {"delivery": "started"}
    types: list[str] = []
    while not types or types[-1] != "idle":
        types.append(str((await hello.next_event())["type"]))
    assert types[0] == "input" and types[1] == "agent_start"
    assert "text_delta" in types
    assert types.index("agent_end") == len(types) - 2
    messages = (await hello.request("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]  # type: ignore[union-attr]


async def test_malformed_lines_get_error_responses_and_the_loop_goes_on(
    hello: RpcClient,
) -> None:
    for line in (b"not json", b"{", b"[1, 2]", b'"just a string"', b'{"type": 5}'):
        await hello.send_raw(line)
        response = await hello.next_event("response")
        assert response["success"] is False
        assert response["id"] is None
        assert "\n" not in str(response["error"])
    await hello.send_raw(b"   ")  # a blank line is skipped, not answered
    state = await hello.get_state()  # still serving
    assert state["running"] is False


async def test_an_unknown_command_is_an_error_with_its_id(hello: RpcClient) -> None:
    await hello.send_raw(b'{"type": "dance", "id": "x1"}')
    response = await hello.next_event("response")
    assert response["id"] == "x1" and response["command"] == "dance"
    assert "unknown command 'dance'" in str(response["error"])
    with pytest.raises(RpcError, match="unknown command"):
        await hello.request("dance")


async def test_u2028_inside_a_string_does_not_split_the_record(hello: RpcClient) -> None:
    text = "first\u2028second\u2029third\rfourth"
    await hello.send_raw(
        json.dumps({"type": "prompt", "message": text}, ensure_ascii=False).encode()
    )
    await hello.next_event("agent_end")
    messages = (await hello.request("get_messages"))["messages"]
    assert messages[0]["content"] == text  # type: ignore[index]


async def test_prompting_mid_run_needs_a_streaming_behavior(work: Path) -> None:
    client = await start(work, SLOW)
    try:
        await client.prompt("count")
        await client.next_event("text_delta")
        with pytest.raises(RpcError, match="streaming_behavior"):
            await client.prompt("interrupting")
        assert await client.prompt("afterwards", "follow_up") == {"delivery": "follow_up"}
        assert await client.steer("and steer") == {"delivery": "current_run"}
        assert await client.follow_up("one more") == {"delivery": "after_current_run"}
        ends = 0
        while ends < 1:
            record = await client.next_event("agent_end")
            ends += 1
            assert record["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        messages = (await client.request("get_messages"))["messages"]
        users = [m["content"] for m in messages if m["role"] == "user"]  # type: ignore[union-attr]
        assert users[0] == "count"
        assert {"and steer", "afterwards", "one more"} <= set(users)
    finally:
        await client.aclose()


async def test_abort_stops_the_run(work: Path) -> None:
    client = await start(work, SLOW)
    try:
        await client.prompt("count")
        await client.next_event("text_delta")
        assert await client.abort() == {"aborted": True}
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "aborted"  # type: ignore[index]
        assert await client.abort() == {"aborted": False}
    finally:
        await client.aclose()


async def test_a_ui_request_answered_with_respond_lets_the_call_run(work: Path) -> None:
    client = await start(work, SHELL)
    try:
        await client.prompt("save a greeting")
        request = await client.next_event("ui_request")
        assert request["kind"] == "approval" and request["tool_name"] == "bash"
        assert request["tool_input"] == {"command": "echo hi > greeting.txt"}
        pending = (await client.get_state())["pending_ui_requests"]
        assert [r["id"] for r in pending] == [request["id"]]  # type: ignore[union-attr]
        with pytest.raises(RpcError, match="decision"):
            await client.request("respond", request_id=request["id"])
        with pytest.raises(RpcError, match="unknown approval decision"):
            await client.respond(str(request["id"]), "perhaps")
        assert await client.respond(str(request["id"]), "allow") == {
            "request_id": request["id"],
            "kind": "approval",
        }
        closed = await client.next_event("ui_request_closed")
        assert closed["reason"] == "answered"
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        assert (work / "greeting.txt").read_text() == "hi\n"
        with pytest.raises(RpcError, match="no ui request"):
            await client.respond(str(request["id"]), "allow")
    finally:
        await client.aclose()


async def test_a_ui_request_nobody_answers_is_denied_at_the_timeout(work: Path) -> None:
    client = await start(work, SHELL, "--ui-timeout", "0.5")
    try:
        await client.prompt("save a greeting")
        request = await client.next_event("ui_request")
        assert request["timeout"] == 0.5
        closed = await client.next_event("ui_request_closed")
        assert closed == {"type": "ui_request_closed", "id": request["id"], "reason": "timeout"}
        end = await client.next_event("tool_execution_end")
        assert end["payload"]["result"]["is_error"] is True  # type: ignore[index]
        await client.next_event("agent_end")
        assert not (work / "greeting.txt").exists()
    finally:
        await client.aclose()


async def test_state_mode_model_compact_and_messages(hello: RpcClient) -> None:
    with pytest.raises(RpcError, match="mode"):
        await hello.request("set_mode", mode="reckless")
    assert await hello.request("set_mode", mode="plan") == {"mode": "plan", "previous": "default"}
    assert (await hello.get_state())["mode"] == "plan"
    with pytest.raises(RpcError, match=r"compaction failed"):
        await hello.request("compact")
    with pytest.raises(RpcError):
        await hello.request("set_model", model="no-such-provider:model-x")
    with pytest.raises(RpcError, match="'model'"):
        await hello.request("set_model")
    assert (await hello.request("get_messages")) == {"messages": []}


async def test_set_model_switches_to_another_script(work: Path, hello: RpcClient) -> None:
    other = work.parent / "other.yaml"
    other.write_text('replies:\n  - text: "From the other model."\n')
    switched = await hello.request("set_model", model=f"scripted:{other}")
    assert switched["model"] == f"scripted:{other}"
    await hello.prompt("who are you?")
    end = await hello.next_event("agent_end")
    assert end["payload"]["text"] == "From the other model."  # type: ignore[index]


async def test_fork_writes_a_new_session_and_goes_on_there(work: Path, hello: RpcClient) -> None:
    await hello.prompt("remember this")
    await hello.next_event("idle")
    forked = await hello.request("fork")
    assert forked["parent_session"] == hello.header["session_id"]
    assert await asyncio.to_thread(os.path.isfile, str(forked["session_file"]))
    state = await hello.request("get_state")
    assert state["session_id"] == forked["session_id"]
    with pytest.raises(RpcError, match="nope"):
        await hello.request("fork", entry_id="nope")


async def test_the_slash_commands_and_the_session_commands_are_one_table_over_rpc(
    work: Path, hello: RpcClient
) -> None:
    listed = await hello.request("get_commands")
    entries = {entry["name"]: entry for entry in listed["commands"]}
    assert {"prompt", "set_mode", "compact", "fork", "help", "model", "cost"} <= set(entries)
    assert entries["set_mode"]["arguments"][0]["name"] == "mode"
    assert entries["cost"]["arguments"] == [
        {"name": "args", "kind": "string", "required": False, "help": "the text after the "
         "command's name"}
    ]  # fmt: skip
    helped = await hello.request("help", args="set_mode")
    assert helped["output"].startswith("/set_mode MODE")
    shown = await hello.request("model")
    assert "scripted" in shown["output"]
    with pytest.raises(RpcError, match="no command /nothing"):
        await hello.request("help", args="nothing")


async def test_bash_runs_after_approval_and_reaches_the_model(work: Path) -> None:
    client = await start(work, HELLO)
    try:
        (work / "data.txt").write_text("forty-two\n")
        bash = asyncio.ensure_future(
            client.request("bash", command="cat data.txt && echo made > made.txt")
        )
        request = await client.next_event("ui_request")
        assert request["tool_input"] == {"command": "cat data.txt && echo made > made.txt"}
        await client.respond(str(request["id"]), "allow")
        outcome = await bash
        assert outcome["ran"] is True and "forty-two" in str(outcome["output"])
        assert (work / "made.txt").exists()
        with pytest.raises(RpcError, match="'command'"):
            await client.request("bash")
        denied = asyncio.ensure_future(client.request("bash", command="echo no > denied.txt"))
        second = await client.next_event("ui_request")
        await client.respond(str(second["id"]), "deny")
        assert (await denied)["ran"] is False
        assert not (work / "denied.txt").exists()
        await client.prompt("what was in the file?")
        await client.next_event("agent_end")
        messages = (await client.request("get_messages"))["messages"]
        texts = [str(m["content"]) for m in messages if m["role"] == "user"]  # type: ignore[union-attr]
        assert "forty-two" in texts[0] and texts[1] == "what was in the file?"  # in order
    finally:
        await client.aclose()


def test_input_ending_mid_run_finishes_the_run_then_exits_0(work: Path) -> None:
    script = work.parent / "script.yaml"
    script.write_text(HELLO)
    lines = b'{"type": "prompt", "id": "p", "message": "hi"}\n{"type": "get_state", "id": "s"}'
    result = subprocess.run(
        _command(script),
        input=lines,
        capture_output=True,
        cwd=work,
        env=environment(work),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.split(b"\n") if line]
    assert records[0]["type"] == "header"
    kinds = [r["type"] for r in records]
    # the run went to its end before the process left (get_state's answer may come
    # before or after it, as the commands are read while the run goes on)
    assert "agent_end" in kinds and "idle" in kinds[kinds.index("agent_end") :]
    assert [k for k in kinds if k != "response"][-1] == "idle"
    responses = {r["id"]: r for r in records if r["type"] == "response"}
    assert responses["p"]["success"] and responses["s"]["success"]  # the last line had no LF


def test_rpc_mode_refuses_a_prompt_flag_and_ui_timeout_needs_rpc(work: Path) -> None:
    script = work.parent / "script.yaml"
    script.write_text(HELLO)
    refused = subprocess.run(
        [*_command(script), "-p", "hi"], capture_output=True, text=True, timeout=60, cwd=work
    )
    assert refused.returncode == 2 and "drop -p" in refused.stderr
    base = [*_command(script)]
    base.remove("rpc")
    base.remove("--mode")
    wrong = subprocess.run(
        [*base, "-p", "hi", "--ui-timeout", "3"], capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode == 2 and "--ui-timeout needs --mode rpc" in wrong.stderr


def _command(script: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys; from skillkit.cli import main; sys.exit(main())",
        "--mode",
        "rpc",
        "--model",
        f"scripted:{script}",
        "--sandbox",
        "off",
    ]


LONG = """
replies:
  - text: "{one}"
  - text: "{two}"
  - text: "{three}"
  - text: "The user said three things; I answered each at length."
""".format(one="one " * 800, two="two " * 800, three="three " * 800)

QUESTION = """
replies:
  - text: "A question first."
    tool_calls:
      - name: ask_user
        arguments:
          questions:
            - question: Which colour?
              header: Colour
              options: [{label: red}, {label: blue}]
  - text: "Noted."
"""


async def test_compact_summarises_a_long_conversation(work: Path) -> None:
    client = await start(work, LONG)
    try:
        for prompt in ("first", "second", "third"):
            await client.prompt(prompt)
            await client.next_event("idle")
        compacted = await client.request("compact", instructions="keep it short")
        assert 0 < int(compacted["tokens_after"]) < int(compacted["tokens_before"])  # type: ignore[call-overload]
        with pytest.raises(RpcError, match="'instructions' must be a string"):
            await client.request("compact", instructions=3)
    finally:
        await client.aclose()


async def test_a_question_is_answered_over_rpc(work: Path) -> None:
    client = await start(work, QUESTION)
    try:
        await client.prompt("ask me")
        request = await client.next_event("ui_request")
        assert request["kind"] == "question"
        assert request["questions"][0]["options"][1]["label"] == "blue"  # type: ignore[index]
        assert await client.respond(str(request["id"]), ["blue"]) == {
            "request_id": request["id"],
            "kind": "question",
        }
        end = await client.next_event("tool_execution_end")
        assert "blue" in str(end["payload"]["result"])  # type: ignore[index]
        await client.next_event("agent_end")
    finally:
        await client.aclose()


async def test_every_command_answers_bad_fields_with_an_error(hello: RpcClient) -> None:
    bad: list[dict[str, object]] = [
        {"type": "prompt", "message": ""},
        {"type": "prompt", "message": "x", "streaming_behavior": "later"},
        {"type": "steer"},
        {"type": "follow_up", "message": 7},
        {"type": "compact", "instructions": ["x"]},
        {"type": "set_model", "model": ""},
        {"type": "set_mode"},
        {"type": "fork", "entry_id": 1},
        {"type": "bash", "command": "   "},
        {"type": "respond"},
        {"type": "respond", "request_id": "approval-none", "decision": "allow"},
    ]
    for index, command in enumerate(bad):
        line = json.dumps({**command, "id": f"bad-{index}"}).encode()
        await hello.send_raw(line)
        response = await hello.next_event("response")
        assert response["id"] == f"bad-{index}", response
        assert response["command"] == command["type"]
        assert response["success"] is False and response["error"], response
    for kind in ("abort", "get_state", "get_messages"):  # no fields to get wrong
        await hello.request(kind, unexpected="ignored")


def test_a_peer_that_writes_before_reading_gets_every_response(work: Path) -> None:
    script = work.parent / "script.yaml"
    script.write_text(HELLO)
    count = 3_000
    lines = b"".join(
        json.dumps({"type": "get_state", "id": f"s{index}"}).encode() + b"\n"
        for index in range(count)
    )
    result = subprocess.run(
        _command(script), input=lines, capture_output=True, cwd=work, env=environment(work),
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.split(b"\n") if line]
    ids = [r["id"] for r in records if r["type"] == "response"]
    assert sorted(ids) == sorted(f"s{index}" for index in range(count))
