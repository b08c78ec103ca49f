"""Batch and eval runs that record each row as a session, on every store: the rows'
conversations kept under names from the row, listed, resumed, and the results' canonical
hash the same as without recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.batch import LocalEngine, RecordSessions, canonical_hash, run_batch
from skillkit.models import AssistantMessage, ToolResultMessage, UserMessage, message_text
from skillkit.session.store_protocol import SessionStoreProtocol, open_store
from tests.batch.agents import letters, make_agent, reply
from tests.evals.conftest import make_project
from tests.frontends.tmux_terminal import Terminal
from tests.session.helpers import ROOT, resendable, run_cli

pytestmark = pytest.mark.timeout(180)

WORDS = ["alpha", "beta", "boom", "gamma"]
CASES = yaml.safe_load((ROOT / "tests" / "evals" / "fixtures" / "suite.yaml").read_text())["cases"]


def rows() -> list[dict[str, str]]:
    return [{"prompt": f"Count the letters of {word}"} for word in WORDS]


def user_texts(messages: list[object]) -> list[str]:
    return [message_text(m) for m in messages if isinstance(m, UserMessage)]  # type: ignore[arg-type]


async def test_every_row_is_kept_as_a_named_session_and_the_hash_does_not_change(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    plain = await run_batch(rows(), make_agent, engine=LocalEngine(2))
    record = RecordSessions(url, name="letters", cwd=tmp_path)
    recorded = await run_batch(rows(), make_agent, engine=LocalEngine(2), record=record)
    assert canonical_hash(recorded) == canonical_hash(plain)
    assert [r.text for r in recorded] == [r.text for r in plain]
    assert all(r.session for r in recorded) and not any(r.session for r in plain)
    assert len({r.session for r in recorded}) == len(WORDS)
    listed = {info.name: info for info in store.list(tmp_path)}
    assert sorted(listed) == [f"letters row {i}" for i in range(len(WORDS))]
    for result in recorded:
        info = listed[f"letters row {result.row}"]
        assert info.id == result.session
        assert info.title == f"letters row {result.row}"
        session = store.open(info.id, write=False)
        context = session.context()
        assert user_texts(context) == [f"Count the letters of {WORDS[result.row]}"]
        assert not resendable(context)
        if WORDS[result.row] == "boom":  # the model failed: the row's error is kept too
            assert result.error and "fell over" in result.error
            continue
        word = WORDS[result.row]
        assert [type(m).__name__ for m in context] == [
            "UserMessage",
            "AssistantMessage",
            "ToolResultMessage",
            "AssistantMessage",
        ]
        assert isinstance(context[2], ToolResultMessage)
        assert message_text(context[2]) == str(len(word))
        assert message_text(context[-1]) == result.text == f"{word} has {len(word)} letters"


async def test_a_recorded_row_is_resumed_where_it_ended(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    record = RecordSessions(url, name="letters", cwd=tmp_path)
    (result,) = await run_batch(rows()[:1], make_agent, record=record)
    assert result.session is not None
    session = store.open(result.session)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, model="scripted"),
        tools=[letters],
        messages=session.context(),
        contributors=[session],
    )
    response = await runner.chat("Count the letters of delta")
    await runner.aclose()
    assert response.error is None and response.text  # (the model counts the first word)
    again = store.open(result.session, write=False)
    assert user_texts(again.context()) == [
        "Count the letters of alpha",
        "Count the letters of delta",
    ]
    assert again.session_name == "letters row 0"
    assert isinstance(again.context()[-1], AssistantMessage)


async def test_a_store_that_cannot_be_reached_makes_row_errors_not_a_crash(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    record = RecordSessions(f"sqlite://{blocked}/sessions.db", name="x", cwd=tmp_path)
    results = await run_batch(rows()[:2], make_agent, record=record)
    assert [r.row for r in results] == [0, 1]
    assert all(r.error and r.session is None for r in results)


def test_skillkit_batch_records_rows_and_a_row_goes_on_with_dash_dash_session(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "a.txt").write_text("one\n")
    (project / "data.jsonl").write_text(
        "".join(json.dumps({"topic": f"item {i}"}) + "\n" for i in range(3))
    )
    script = project / "script.yaml"
    script.write_text(
        "replies:\n  - text: Looking.\n    tool_calls:\n      - name: ls\n"
        "        arguments: {path: docs}\n  - text: Listed the folder.\n"
    )
    model = f"scripted:{script}"
    common = ("batch", "data.jsonl", "--prompt", "List {topic}", "--model", model)
    plain = run_cli(*common, "--out", "plain.jsonl", home=home, cwd=project)
    assert plain.returncode == 0, plain.stderr
    done = run_cli(*common, "--out", "kept.jsonl", "--session-store", url, home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "kept as a session named 'batch kept.jsonl row N'" in done.stderr
    assert "password" not in done.stderr
    manifests = [
        json.loads((project / f"{name}.jsonl.manifest.json").read_text())
        for name in ("plain", "kept")
    ]
    assert manifests[0]["results_sha256"] == manifests[1]["results_sha256"]
    lines = [json.loads(line) for line in (project / "kept.jsonl").read_text().splitlines()]
    ids = {line["row"]: line["session"] for line in lines}
    assert sorted(ids) == [0, 1, 2] and all(ids.values())
    listed = run_cli("sessions", "list", "--session-store", url, home=home, cwd=project)
    assert listed.returncode == 0, listed.stderr
    for row in range(3):
        assert f"batch kept.jsonl row {row}" in listed.stdout
    hello = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
    resumed = run_cli(
        "-p", "and now?", "--session", ids[1], "--session-store", url, "--model", hello,
        home=home, cwd=project,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    session = store.open(ids[1], write=False)
    assert user_texts(session.context()) == ["List item 1", "and now?"]
    assert not (home / ".skillkit" / "sessions").exists() or url.startswith("file://")
    action = run_cli(
        "batch", "data.jsonl", "--skill", "x", "--action", "y", "--out", "a.jsonl",
        "--record-sessions", home=home, cwd=project,
    )  # fmt: skip
    assert action.returncode == 2 and "no conversation to keep" in action.stderr


def test_skillkit_batch_refuses_a_store_it_cannot_open_before_the_first_row(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "data.jsonl").write_text('{"topic": "a"}\n')
    hello = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
    bad = run_cli(
        "batch", "data.jsonl", "--prompt", "{topic}", "--out", "r.jsonl", "--model", hello,
        "--session-store", "redis://h/0", home=home, cwd=project,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "session store" in bad.stderr and "redis" in bad.stderr
    assert not (project / "r.jsonl").exists()


def test_skillkit_eval_records_each_row_as_a_session(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    url = f"sqlite://{tmp_path}/evals.db"
    done = run_cli(
        "eval", "suite.yaml", "--out", "runs/kept", "--allow", "write",
        "--session-store", url, home=home, cwd=project, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = (project / "runs/kept/results.jsonl").read_text()
    lines = [json.loads(line) for line in kept.splitlines()]
    store = open_store(url)
    names = {info.id: info.name for info in store.list(project)}
    assert len(names) == len(lines)
    for line in lines:
        outcome = line["output"]
        expected = f"eval greetings {outcome['case']} {outcome['model']} #{outcome['repeat']}"
        assert names[line["session"]] == expected
        session = store.open(line["session"], write=False)
        assert user_texts(session.context())[-1:] == [
            next(c["prompt"] for c in CASES if c["name"] == outcome["case"])
        ]
    close = getattr(store, "close", None)
    if callable(close):
        close()


def test_record_sessions_goes_to_the_store_the_settings_name(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".skillkit").mkdir(parents=True)
    project.mkdir()
    url = f"sqlite://{tmp_path}/configured.db"
    (home / ".skillkit" / "settings.json").write_text(json.dumps({"sessions": {"store": url}}))
    (project / "data.jsonl").write_text('{"topic": "a"}\n{"topic": "b"}\n')
    hello = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
    args = ("batch", "data.jsonl", "--prompt", "{topic}", "--model", hello)
    done = run_cli(*args, "--out", "r.jsonl", "--record-sessions", home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"in {url}" in done.stderr
    names = sorted(str(info.name) for info in open_store(url).list(project))
    assert names == ["batch r.jsonl row 0", "batch r.jsonl row 1"]
    plain = run_cli(*args, "--out", "plain.jsonl", home=home, cwd=project)
    assert plain.returncode == 0, plain.stderr
    assert len(open_store(url).list(project)) == 2  # nothing recorded unless asked
    lines = (project / "plain.jsonl").read_text().splitlines()
    assert all(json.loads(line)["session"] is None for line in lines)


async def test_ray_workers_record_their_rows_in_postgres(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")
    import os
    import sys

    from skillkit.batch import RayEngine

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    paths = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())  # noqa: ASYNC240
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": paths}},
    )
    try:
        record = RecordSessions(postgres_url, name="fleet", cwd=tmp_path)
        engine = RayEngine(actors=2, per_actor=2)
        results = await run_batch(rows(), make_agent, engine=engine, record=record)
    finally:
        ray.shutdown()
    plain = await run_batch(rows(), make_agent)
    assert canonical_hash(results) == canonical_hash(plain)
    assert len({r.worker for r in results}) == 2
    store = open_store(postgres_url, home=tmp_path)
    try:
        names = {info.id: info.name for info in store.list(tmp_path)}
        assert {names[str(r.session)] for r in results} == {
            f"fleet row {i}" for i in range(len(WORDS))
        }
    finally:
        getattr(store, "close")()  # noqa: B009


def test_a_recorded_batch_row_is_picked_and_resumed_with_dash_r(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "a.txt").write_text("one\n")
    (project / "data.jsonl").write_text(
        "".join(json.dumps({"topic": f"item {i}"}) + "\n" for i in range(3))
    )
    script = tmp_path / "script.yaml"
    script.write_text(
        "replies:\n  - text: Looking.\n    tool_calls:\n      - name: ls\n"
        "        arguments: {path: docs}\n  - text: Listed the folder.\n"
    )
    url = f"sqlite://{tmp_path}/sessions.db"
    done = run_cli(
        "batch", "data.jsonl", "--prompt", "List {topic}", "--model", f"scripted:{script}",
        "--out", "r.jsonl", "--session-store", url, home=terminal.home, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = tmp_path / "reply.yaml"
    reply.write_text('replies:\n  - text: "Going on with row one."\n')
    terminal.start("-r", "--session-store", url, "--model", f"scripted:{reply}", cwd=project)
    screen = terminal.wait_for("3 sessions")
    assert all(f"batch r.jsonl row {row}" in screen for row in range(3))
    rows = [line for line in screen.splitlines() if "batch r.jsonl row" in line]
    for _ in range(next(i for i, line in enumerate(rows) if "row 1" in line)):
        terminal.press("Down")
    terminal.wait_for(lambda text: "❯ batch r.jsonl row 1" in text)
    terminal.press("Enter")
    terminal.wait_for("Listed the folder.")
    terminal.wait_for_prompt_count(1)
    terminal.type("and now?")
    terminal.wait_for("Going on with row one.")
    terminal.wait_for_prompt()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    store = open_store(url)
    (info,) = [i for i in store.list(project) if i.name == "batch r.jsonl row 1"]
    context = store.open(info.id, write=False).context()
    assert user_texts(context) == ["List item 1", "and now?"]
    assert len(store.list(project)) == 3  # no new session
