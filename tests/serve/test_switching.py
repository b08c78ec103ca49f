"""The served session's switch: list this folder's sessions, open another, start a new
one — built the way ``skillkit serve`` builds its first agent, on the JSONL and the
SQLite store alike — with the event stream following the switch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit.frontends.setup import AgentOptions
from skillkit.serve.cli import _open_agent, _switchable
from skillkit.serve.switching import SessionSwitch

pytestmark = pytest.mark.timeout(60)

SCRIPT = """\
replies:
  - text: "Noted."
    delay: 0.01
cycle: true
"""

SLOW = """\
replies:
  - text: "one two three four five six seven eight nine ten"
    delay: 0.5
cycle: true
"""


def _switch(tmp_path: Path, store_url: str | None, script: str = SCRIPT) -> SessionSwitch:
    workspace = tmp_path / "project"
    workspace.mkdir(exist_ok=True)
    path = tmp_path / "script.yaml"
    path.write_text(script, encoding="utf-8")
    options = AgentOptions(
        model=f"scripted:{path}",
        workspace=workspace,
        home=tmp_path / "home",
        trust_project=False,
        session="new",
        session_store=store_url,
    )
    switch = _switchable(_open_agent(options, 30.0), options, 30.0)
    assert isinstance(switch, SessionSwitch)
    return switch


async def _ask(switch: SessionSwitch, text: str) -> None:
    reply = await switch.handle({"type": "prompt", "message": text})
    assert reply["success"], reply
    await asyncio.wait_for(switch.current.wait(), 20)


async def _data(switch: SessionSwitch, command: dict[str, object]) -> dict[str, object]:
    reply = await switch.handle(command)
    assert reply["success"], reply
    data = reply["data"]
    assert isinstance(data, dict)
    return data


def _stores(tmp_path: Path) -> dict[str, str | None]:
    return {"jsonl": None, "sqlite": f"sqlite:///{tmp_path / 'sessions.db'}"}


@pytest.mark.parametrize("store", ["jsonl", "sqlite"])
async def test_new_lists_and_resumes_sessions_of_this_folder_with_their_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    switch = _switch(tmp_path, _stores(tmp_path)[store])
    try:
        await _ask(switch, "remember the first session")
        first = (await _data(switch, {"type": "get_state"}))["session_id"]

        started = await _data(switch, {"type": "new_session"})
        assert started["message_count"] == 0
        second = started["session_id"]
        assert second not in (None, first)
        await _ask(switch, "the second one")

        listed = await _data(switch, {"type": "list_sessions"})
        sessions = listed["sessions"]
        assert isinstance(sessions, list)
        assert [(s["id"], s["title"], s["current"]) for s in sessions] == [
            (second, "the second one", True),
            (first, "remember the first session", False),
        ]

        opened = await _data(switch, {"type": "open_session", "session_id": first})
        assert opened == {"session_id": first, "message_count": 2}
        messages = (await _data(switch, {"type": "get_messages"}))["messages"]
        assert isinstance(messages, list)
        assert messages[0]["content"] == "remember the first session"
        # the session goes on: a prompt is recorded in it
        await _ask(switch, "back again")
        again = await _data(switch, {"type": "list_sessions"})
        assert again["current"] == first
        assert [s["messages"] for s in again["sessions"] if s["id"] == first] == [4]
    finally:
        await switch.aclose()


async def test_the_stream_follows_the_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    switch = _switch(tmp_path, None)
    stream = switch.subscribe()
    seen: list[dict[str, object]] = []

    async def read() -> None:
        async for record in stream:
            seen.append(record)

    reader = asyncio.create_task(read())
    try:
        started = await _data(switch, {"type": "new_session"})
        await _ask(switch, "after the switch")

        def ended() -> bool:  # the run's end, after the switch, has reached the reader
            kinds = [record["type"] for record in seen]
            return (
                "session_changed" in kinds
                and "agent_end" in kinds[kinds.index("session_changed") :]
            )

        async with asyncio.timeout(20):
            while not ended():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        kinds = [record["type"] for record in seen]
        changed = kinds.index("session_changed")
        assert seen[changed]["session_id"] == started["session_id"]
        assert "agent_end" in kinds[changed:]
        prompts = [r["payload"] for r in seen if r["type"] == "agent_start"]
        assert prompts and prompts[-1]["prompt"] == "after the switch"  # type: ignore[index]
    finally:
        await switch.aclose()
        await asyncio.wait_for(reader, 5)


async def test_a_switch_is_refused_during_a_run_and_for_ids_not_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    switch = _switch(tmp_path, None, SLOW)
    try:
        current = (await _data(switch, {"type": "get_state"}))["session_id"]
        assert isinstance(current, str)
        for bad in ("../../etc/passwd", current[:6], str(tmp_path), "<b>x</b>", ""):
            reply = await switch.handle({"type": "open_session", "session_id": bad})
            assert reply["success"] is False
            assert "session" in str(reply["error"])
        reply = await switch.handle({"type": "open_session", "session_id": current})
        assert reply["error"] == "that session is the one open"

        assert (await switch.handle({"type": "prompt", "message": "a slow one"}))["success"]
        refused = await switch.handle({"type": "new_session"})
        assert refused["success"] is False
        assert "a run is in progress" in str(refused["error"])
        assert (await _data(switch, {"type": "get_state"}))["session_id"] == current
    finally:
        await switch.aclose()


async def test_get_state_names_the_modes_the_menu_may_offer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    switch = _switch(tmp_path, None)
    try:
        state = await _data(switch, {"type": "get_state"})
        assert state["modes"] == ["default", "accept_edits", "plan"]
        commands = await _data(switch, {"type": "get_commands"})
        names = {c["name"] for c in commands["commands"]}  # type: ignore[attr-defined]
        assert {"list_sessions", "open_session", "new_session"} <= names
    finally:
        await switch.aclose()


async def test_a_session_without_a_permission_layer_offers_no_mode() -> None:
    from skillkit import AgentConfig, AgentRunner, AgentSession
    from skillkit.adapters.scripted import Reply, ScriptedAdapter

    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([Reply(text="hi")]))
    session = AgentSession(runner, owns_agent=True)
    try:
        state = await _data(session, {"type": "get_state"})  # type: ignore[arg-type]
        assert state["mode"] is None and state["modes"] == []
    finally:
        await session.aclose()


def test_the_page_inlines_each_script_once_in_one_scope_under_its_hash() -> None:
    import base64
    import hashlib
    import re
    from importlib import resources

    from skillkit.serve.page import SCRIPTS, load_page

    page = load_page()
    html = page.html.decode("utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page.content_security_policy
    static = resources.files("skillkit.serve") / "static"
    at = [scripts[0].index((static / name).read_text(encoding="utf-8")) for name in SCRIPTS]
    assert at == sorted(at)  # in order, app.js (which starts the page) last
    assert "onclick" not in html and "innerHTML" not in scripts[0].split("\n;\n", 1)[1]
