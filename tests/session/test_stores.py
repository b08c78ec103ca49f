"""The same session behaviour on every store: JSONL files, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import UserMessage
from skillkit.secrets import Redactor
from skillkit.session import SessionLockedError, SessionNotFoundError, SessionStore
from skillkit.session.export import export_session
from skillkit.session.format import encode_line
from skillkit.session.postgres import PostgresSessionStore
from skillkit.session.sqlite import SCHEMA_VERSION, SqliteSessionStore
from skillkit.session.store_protocol import (
    STORE_METHODS,
    SessionStoreProtocol,
    StoreURLError,
    open_store,
)
from tests.session.helpers import ROOT, resendable, run_cli

SECRET = "sk-live-0123456789abcdefSECRET"


@tool
def leak() -> str:
    """Print the environment."""
    return f"OPENAI_API_KEY={SECRET}"


def test_every_store_satisfies_the_protocol(tmp_path: Path) -> None:
    jsonl: SessionStoreProtocol = SessionStore(tmp_path)  # checked by mypy
    sqlite: SessionStoreProtocol = SqliteSessionStore(tmp_path / "s.db")
    if TYPE_CHECKING:
        postgres: SessionStoreProtocol = PostgresSessionStore("postgresql:///x")
        del postgres
    protocol_methods = {
        name
        for name, value in vars(SessionStoreProtocol).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    assert protocol_methods == set(STORE_METHODS)
    for candidate in (jsonl, sqlite):
        assert isinstance(candidate, SessionStoreProtocol)
    for kind in (SessionStore, SqliteSessionStore, PostgresSessionStore):
        for name in STORE_METHODS:
            wanted = inspect.signature(getattr(SessionStoreProtocol, name)).parameters
            given = inspect.signature(getattr(kind, name)).parameters
            assert list(given) == list(wanted), (kind, name)


def test_store_urls(tmp_path: Path) -> None:
    assert isinstance(open_store(str(tmp_path)), SessionStore)
    assert isinstance(open_store(f"file://{tmp_path}"), SessionStore)
    sqlite = open_store(f"sqlite://{tmp_path}/a/b.db")
    assert isinstance(sqlite, SqliteSessionStore)
    assert sqlite.path == tmp_path / "a" / "b.db"
    assert open_store(f"sqlite:///{tmp_path}/c.db").path == tmp_path / "c.db"  # type: ignore[attr-defined]
    for bad in ("sqlite://", "sqlite://relative.db", "redis://host/0", "file://"):
        with pytest.raises(StoreURLError):
            open_store(bad)


def test_append_close_and_resume(store: SessionStoreProtocol, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    first = session.append_message(UserMessage(content="hello"))
    session.append_model_change("m2", "p")
    session.close()
    again = store.open(session.id)
    assert [e.id for e in again.entries] == [e.id for e in session.entries]
    assert again.entries == session.entries
    assert again.leaf_id == session.leaf_id
    again.append_message(UserMessage(content="more"), parent_id=first.id)
    again.close()
    third = store.open(session.id[:6], write=False)
    assert third.context() == [UserMessage(content="hello"), UserMessage(content="more")]
    with pytest.raises(RuntimeError, match="not open for writing"):
        third.append_message(UserMessage(content="no"))


async def test_a_recorded_run_resumes_with_the_same_context(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("leak", {})]), "done"]),
        tools=[leak],
        contributors=[session],
    )
    await agent.chat("go")
    await agent.aclose()
    resumed = store.continue_latest(tmp_path)
    assert resumed.id == session.id
    assert resumed.context() == session.context()
    assert not resendable(resumed.context())
    resumed.close()


def test_list_has_the_index_fields_newest_first(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    old = store.create(tmp_path)
    old.append_message(UserMessage(content="the   first\nquestion"))
    old.close()
    time.sleep(0.01)
    new = store.create(tmp_path)
    new.append_message(UserMessage(content="second"))
    new.set_name("named")
    new.close()
    elsewhere = store.create(other)
    elsewhere.close()
    infos = store.list(tmp_path)
    assert [info.id for info in infos] == [new.id, old.id]
    assert infos[0].title == "named" and infos[0].name == "named"
    assert infos[0].entries == 2 and infos[0].messages == 1
    assert infos[0].leaf_id == new.leaf_id
    assert infos[1].title == infos[1].first_message == "the first question"
    assert infos[1].cwd == str(tmp_path)
    assert {info.id for info in store.list()} == {old.id, new.id, elsewhere.id}
    latest = store.latest(tmp_path)
    assert latest is not None and latest.id == new.id
    assert store.open(infos[0].path, write=False).id == new.id


def test_fork_label_name_branch_and_move(store: SessionStoreProtocol, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    a = session.append_message(UserMessage(content="a"))
    b = session.append_message(UserMessage(content="b"))
    session.label(a.id, "start")
    session.move_to(a.id, summary="b was wrong")
    c = session.append_message(UserMessage(content="c"))
    session.set_name("tree")
    session.close()
    again = store.open(session.id, write=False)
    assert again.labels() == {a.id: "start"}
    assert again.session_name == "tree"
    assert again.resolve_entry("start") == a.id
    assert [e.id for e in again.branch(b.id)] == [a.id, b.id]
    assert again.leaf_id == session.leaf_id
    assert again.branch()[-2].id == c.id
    fork = store.fork(session.id, b.id)
    assert fork.header.parent_session == session.id
    assert [e.id for e in fork.entries] == [a.id, b.id]
    fork.append_message(UserMessage(content="in the fork"))
    fork.close()
    reread = store.open(fork.id, write=False)
    assert [m.content for m in reread.context()] == ["a", "b", "in the fork"]  # type: ignore[union-attr]
    assert export_session(reread, "md") == export_session(fork, "md")


def test_delete(store: SessionStoreProtocol, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    with pytest.raises(SessionLockedError):
        store.delete(session.id)
    session.close()
    store.delete(session.id)
    assert store.list(tmp_path) == []
    with pytest.raises(SessionNotFoundError):
        store.open(session.id)


def test_a_second_writer_in_the_same_process_is_refused(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    with pytest.raises(SessionLockedError):
        store.open(session.id)
    session.close()
    store.open(session.id).close()


async def test_secrets_never_reach_the_store(
    store: SessionStoreProtocol, url: str, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("leak", {})]), f"the key is {SECRET}"]),
        tools=[leak],
        contributors=[session],
        redactor=Redactor({"OPENAI_API_KEY": SECRET}),
    )
    await agent.chat(f"my key is {SECRET}, keep it safe")
    session.append_custom("plugin", {"token": SECRET})
    session.set_name(f"about {SECRET}")
    await agent.aclose()
    stored = everything_under(tmp_path) + database_bytes(url)
    assert SECRET.encode() not in stored
    assert b"[REDACTED:OPENAI_API_KEY]" in stored
    assert store.open(session.id, write=False).entries == session.entries


def everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def database_bytes(url: str) -> bytes:
    """Everything a PostgreSQL store keeps of its sessions (empty for other stores)."""
    if not url.startswith("postgresql://"):
        return b""
    import psycopg

    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT header, title, name, first_message FROM skillkit_sessions"
        ).fetchall()
        lines = db.execute("SELECT line FROM skillkit_entries").fetchall()
    text = [str(field).encode() for row in rows for field in row[1:]]
    return b"".join([*(bytes(row[0]) for row in rows), *text, *(bytes(r[0]) for r in lines)])


HOLDER = """
import sys, time
from skillkit.session.store_protocol import open_store
from skillkit.models import UserMessage
session = open_store(sys.argv[1]).open(sys.argv[2])
print("held", flush=True)
count = 0
while True:
    session.append_message(UserMessage(content=f"entry {count}"))
    count += 1
    if count == 50:
        print("written", flush=True)
"""


def test_a_second_process_is_refused_and_a_writer_killed_mid_append_loses_nothing_committed(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    session.close()
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, session.id], stdout=subprocess.PIPE, env=env
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(SessionLockedError, match=f"pid {holder.pid}"):
            store.open(session.id)
        assert holder.stdout.readline() == b"written\n"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    deadline = time.monotonic() + 10
    reopened = None
    while reopened is None:  # the kernel drops the lock with the process
        try:
            reopened = store.open(session.id)
        except SessionLockedError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    texts = [m.content for m in reopened.context()]
    assert len(texts) >= 50
    assert texts == [f"entry {n}" for n in range(len(texts))]  # a prefix: no gap, no damage
    reopened.append_message(UserMessage(content="after the crash"))
    reopened.close()
    infos = store.list(tmp_path)
    assert infos[0].entries == len(texts) + 1


def test_sqlite_keeps_the_file_store_lines_and_a_schema_version(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    session = store.create(tmp_path)
    entry = session.append_message(UserMessage(content="hi"))
    session.close()
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert db.execute("SELECT line FROM entries").fetchall() == [(encode_line(entry),)]
    db.close()
    assert (tmp_path / "s.db").stat().st_mode & 0o077 == 0
    newer = sqlite3.connect(tmp_path / "s.db")
    newer.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    newer.commit()
    newer.close()
    with pytest.raises(RuntimeError, match="schema"):
        SqliteSessionStore(tmp_path / "s.db")


def _open_and_record(
    path: Path, cwd: Path, start: Any, made: list[str], failures: list[BaseException]
) -> None:
    start.wait()
    try:
        store = SqliteSessionStore(path)
        session = store.create(cwd)
        made.append(session.id)
        session.close()
        store.close()
    except BaseException as exc:
        failures.append(exc)


def test_stores_opened_at_once_on_a_new_database_all_open(tmp_path: Path) -> None:
    """Connections switching a new database to WAL at the same moment can make SQLite
    answer "database is locked" at once to one of them (as two Ray workers recording
    into one new file did); each store still opens, and every session is kept."""
    import threading

    for round_ in range(40):
        path = tmp_path / f"round{round_}" / "sessions.db"
        start = threading.Barrier(6)
        failures: list[BaseException] = []
        made: list[str] = []
        threads = [
            threading.Thread(target=_open_and_record, args=(path, tmp_path, start, made, failures))
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        listed = {info.id for info in SqliteSessionStore(path).list(tmp_path)}
        assert listed == set(made) and len(made) == 6


def test_the_command_line_keeps_sessions_in_the_store_it_is_given(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    url = f"sqlite://{tmp_path}/shared.db"
    hello = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
    first = run_cli("-p", "first", "--session-store", url, "--model", hello, home=home, cwd=cwd)
    assert first.returncode == 0, first.stderr
    again = run_cli(
        "-p", "second", "-c", "--session-store", url, "--model", hello, home=home, cwd=cwd
    )
    assert again.returncode == 0, again.stderr
    assert not (home / ".skillkit" / "sessions").exists()
    (info,) = open_store(url).list(cwd)
    assert info.title == "first"
    context = open_store(url).open(info.id, write=False).context()
    assert [m.content for m in context if isinstance(m, UserMessage)] == ["first", "second"]
    bad = run_cli("-p", "x", "--session-store", "redis://h/0", "--model", hello, home=home, cwd=cwd)
    assert bad.returncode != 0
    assert "no session store for 'redis'" in bad.stderr


def test_list_sees_what_an_open_writer_appended(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="still running"))
    session.append_message(UserMessage(content="more"))
    (info,) = store.list(tmp_path)  # the writer has not synced yet
    assert (info.entries, info.messages, info.title) == (2, 2, "still running")
    assert info.leaf_id == session.leaf_id
    session.set_name("late name")
    session.close()
    (info,) = store.list(tmp_path)
    assert (info.entries, info.title) == (3, "late name")


def test_the_sessions_command_reads_the_store_it_is_given(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    url = f"sqlite://{tmp_path}/shared.db"
    session = open_store(url).create(cwd)
    session.append_message(UserMessage(content="kept in sqlite"))
    session.close()
    listed = run_cli("sessions", "list", "--session-store", url, home=home, cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    assert session.id[:12] in listed.stdout and "kept in sqlite" in listed.stdout
    assert "no sessions" in run_cli("sessions", "list", home=home, cwd=cwd).stdout
    shown = run_cli(
        "sessions", "export", session.id[:6], "--session-store", url, home=home, cwd=cwd
    )
    assert shown.returncode == 0, shown.stderr
    assert "kept in sqlite" in shown.stdout
    removed = run_cli("sessions", "rm", session.id, "--session-store", url, home=home, cwd=cwd)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == f"deleted {session.id}"
    assert open_store(url).list() == []
    bad = run_cli("sessions", "list", "--session-store", "redis://x", home=home, cwd=cwd)
    assert bad.returncode != 0 and "redis" in bad.stderr


def test_deleting_a_file_session_removes_the_folders_kept_beside_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    session = store.create(tmp_path)
    sidecar = session.path.with_suffix(".checkpoints")
    (sidecar / "objects").mkdir(parents=True)
    (sidecar / "turns.jsonl").write_text("{}\n")
    other = session.path.parent / "unrelated.checkpoints"
    other.mkdir()
    session.close()
    store.delete(session.id)
    assert not session.path.exists() and not sidecar.exists()
    assert other.is_dir()


def run_half(url: str, cwd: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.session.pending_agent", url, str(cwd), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


async def test_a_run_paused_in_one_process_resumes_from_the_store_in_another(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    from skillkit.frontends.session_runs import pending_run
    from skillkit.models import ToolResultMessage
    from skillkit.session.format import CompactionEntry, MessageEntry

    first = await asyncio.to_thread(run_half, url, tmp_path, "pause")
    assert (first["stop"], first["requests"]) == ("approval_pending", 1)
    paused = store.open(first["session"], write=False)
    state = pending_run(paused)
    assert state is not None
    assert [(p.call_id, p.tool, p.args) for p in state.pending] == [
        ("call_1", "deploy", {"target": "prod"})
    ]
    second = await asyncio.to_thread(run_half, url, tmp_path, "resume", first["session"])
    assert (second["stop"], second["text"], second["requests"]) == ("stop", "Deployed.", 1)
    again = store.open(first["session"], write=False)
    assert pending_run(again) is None  # the run went on: nothing waits any more
    assert msgspec.to_builtins(again.context()) == second["messages"]
    assert not resendable(again.context())
    assert not any(isinstance(e, CompactionEntry) for e in again.entries)
    results = [
        e.message for e in again.branch()
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]  # fmt: skip
    assert [r.content[0].text for r in results] == ["deployed to prod"]  # type: ignore[union-attr]


def test_postgres_keeps_the_file_store_lines_and_a_schema_version(
    postgres_url: str, tmp_path: Path
) -> None:
    import psycopg

    from skillkit.session.postgres import SCHEMA_VERSION as PG_SCHEMA

    store = PostgresSessionStore(postgres_url, home=tmp_path)
    session = store.create(tmp_path)
    entry = session.append_message(UserMessage(content="hi"))
    session.close()
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        assert db.execute("SELECT version FROM skillkit_schema_version").fetchall() == [
            (PG_SCHEMA,)
        ]
        assert db.execute("SELECT line FROM skillkit_entries").fetchall() == [(encode_line(entry),)]
        db.execute("UPDATE skillkit_schema_version SET version = %s", (PG_SCHEMA + 1,))
    with pytest.raises(RuntimeError, match="schema"):
        PostgresSessionStore(postgres_url, home=tmp_path)
    assert (tmp_path / ".skillkit" / "stores").stat().st_mode & 0o077 == 0


def test_an_unreachable_postgres_store_is_one_line_without_the_password(tmp_path: Path) -> None:
    from skillkit.session.postgres import StoreUnavailableError

    url = f"postgresql://someone:hunter2@/db?host={tmp_path}&port=1&connect_timeout=2"
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(url)
    assert isinstance(caught.value, OSError)
    assert "hunter2" not in str(caught.value) and "someone@" in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1


def test_a_version_1_postgres_database_is_migrated_and_keeps_its_sessions(
    postgres_url: str, tmp_path: Path
) -> None:
    import psycopg

    from skillkit.session.postgres import SCHEMA_VERSION as PG_SCHEMA

    store = PostgresSessionStore(postgres_url, home=tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="kept through the migration"))
    session.close()
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as db:  # as version 1 left it
        db.execute(
            "ALTER TABLE skillkit_entries ADD CONSTRAINT skillkit_entries_session_id_fkey"
            " FOREIGN KEY (session_id) REFERENCES skillkit_sessions (id) ON DELETE CASCADE"
        )
        db.execute("UPDATE skillkit_schema_version SET version = 1")
    with PostgresSessionStore(postgres_url, home=tmp_path) as again:
        (info,) = again.list(tmp_path)
        assert info.title == "kept through the migration"
        assert again.open(session.id, write=False).context()[0].content == info.title  # type: ignore[union-attr]
    with psycopg.connect(postgres_url, autocommit=True) as db:
        assert db.execute("SELECT version FROM skillkit_schema_version").fetchall() == [
            (PG_SCHEMA,)
        ]
        keys = db.execute(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'skillkit_entries'::regclass"
            " AND contype = 'f'"
        ).fetchone()
        assert keys == (0,)


VERSION_1 = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "INSERT INTO schema_version (version) VALUES (1)",
    """CREATE TABLE sessions (id TEXT PRIMARY KEY, header BLOB NOT NULL, cwd TEXT NOT NULL,
        created REAL NOT NULL, modified REAL NOT NULL, parent_session TEXT,
        size INTEGER NOT NULL DEFAULT 0, entries INTEGER NOT NULL DEFAULT 0,
        messages INTEGER NOT NULL DEFAULT 0, title TEXT NOT NULL DEFAULT '', name TEXT,
        first_message TEXT NOT NULL DEFAULT '', leaf_id TEXT)""",
    "CREATE INDEX sessions_by_cwd ON sessions (cwd, modified)",
    """CREATE TABLE entries (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL, line BLOB NOT NULL, PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
)


def test_a_version_1_sqlite_database_is_migrated_and_keeps_its_sessions(tmp_path: Path) -> None:
    """A database as SkillKit's first SQLite schema left it: two sessions, their entries
    interleaved; migrated, both read back whole and in order, and both take appends."""
    from skillkit.session.format import MessageEntry, SessionHeader

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    for statement in VERSION_1:
        db.execute(statement)
    written: dict[str, list[bytes]] = {}
    for number, sid in enumerate(("a" * 16, "b" * 16)):
        header = SessionHeader(id=sid, cwd=str(tmp_path), created=float(number))
        db.execute(
            "INSERT INTO sessions (id, header, cwd, created, modified) VALUES (?, ?, ?, ?, ?)",
            (sid, encode_line(header), str(tmp_path), float(number), float(number)),
        )
        written[sid] = []
    parent: dict[str, str | None] = {sid: None for sid in written}
    for seq in range(5):
        for sid in written:
            entry = MessageEntry(
                id=f"{sid[0]}{seq:07d}",
                parent_id=parent[sid],
                message=UserMessage(content=f"{sid[0]} {seq}"),
                time=10.0 + seq,
            )
            parent[sid] = entry.id
            line = encode_line(entry)
            db.execute("INSERT INTO entries VALUES (?, ?, ?)", (sid, seq, line))
            written[sid].append(line)
    db.commit()
    db.close()
    store = SqliteSessionStore(path)
    assert {info.id: info.messages for info in store.list(tmp_path)} == {"a" * 16: 5, "b" * 16: 5}
    for sid, lines in written.items():
        session = store.open(sid)
        assert [encode_line(e) for e in session.entries] == lines
        session.append_message(UserMessage(content="after the migration"))
        session.close()
        again = store.open(sid, write=False)
        assert len(again.entries) == 6
        assert again.context()[-1].content == "after the migration"  # type: ignore[union-attr]
    fresh = store.create(tmp_path)  # a new session takes a number of its own
    fresh.append_message(UserMessage(content="new"))
    fresh.close()
    assert len(store.open(fresh.id, write=False).entries) == 1
    assert store.delete("a" * 16) == "a" * 16
    assert len(store.open("b" * 16, write=False).entries) == 6
    store.close()
    check = sqlite3.connect(path)
    assert check.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_a_postgres_writer_whose_connection_is_lost_says_so_in_one_line(
    postgres_url: str, tmp_path: Path
) -> None:
    import psycopg

    from skillkit.session.postgres import StoreUnavailableError

    with PostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = store.create(tmp_path)
        session.append_message(UserMessage(content="before"))
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name LIKE 'skillkit pid %%'"
            )
        with pytest.raises(StoreUnavailableError, match=r"^postgresql://") as caught:
            session.append_message(UserMessage(content="after"))
        assert "\n" not in str(caught.value)
        with pytest.raises(StoreUnavailableError):  # its row cannot be brought up to date
            session.close()
        store.open(session.id).close()  # the lock went with the connection
        assert [e.message.content for e in store.open(session.id, write=False).entries] == [  # type: ignore[attr-defined]
            "before"
        ]
