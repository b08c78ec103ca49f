"""The async PostgreSQL store (psycopg's AsyncConnectionPool) against a real server:
recorded runs, many sessions on one event loop, the lock shared with the sync store,
entries kept in order, a lost connection reported, and the same canonical export."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.models import UserMessage, message_text
from skillkit.secrets import Redactor
from skillkit.session import (
    AsyncPostgresSessionStore,
    PostgresSessionStore,
    SessionLockedError,
    SessionNotFoundError,
    StoreUnavailableError,
)
from tests.batch.agents import letters, reply
from tests.session.helpers import resendable

pytestmark = pytest.mark.timeout(120)

SECRET = "sk-live-0123456789abcdefSECRET"


def agent(session: object) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, model="scripted"),
        tools=[letters],
        messages=session.context(),  # type: ignore[attr-defined]
        contributors=[session],  # type: ignore[list-item]
        redactor=Redactor(),
    )


def user_texts(messages: list[object]) -> list[str]:
    return [message_text(m) for m in messages if isinstance(m, UserMessage)]  # type: ignore[arg-type]


async def test_a_recorded_run_is_kept_and_the_sync_store_reads_it(
    postgres_url: str, tmp_path: Path
) -> None:
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = await store.create(tmp_path)
        session.set_name("async one")
        runner = agent(session)
        response = await runner.chat("Count the letters of alpha")
        assert response.text == "alpha has 5 letters"
        await runner.aclose()  # closes the session: its row is brought up to date
        (info,) = await store.list(tmp_path)
        assert (info.id, info.name, info.messages) == (session.id, "async one", 4)
        again = await store.open(session.id[:6])
        runner = agent(again)
        await runner.chat("Count the letters of beta")
        await runner.aclose()
    with PostgresSessionStore(postgres_url, home=tmp_path) as sync_store:
        read = sync_store.open(session.id, write=False)
        assert user_texts(read.context()) == [
            "Count the letters of alpha",
            "Count the letters of beta",
        ]
        assert not resendable(read.context())
        (listed,) = sync_store.list(tmp_path)
        assert listed.entries == len(read.entries)


async def test_many_sessions_run_at_once_on_one_loop(postgres_url: str, tmp_path: Path) -> None:
    words = [f"w{'x' * i}" for i in range(12)]
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path, pool_size=2) as store:

        async def one(word: str) -> str:
            session = await store.create(tmp_path)
            runner = agent(session)
            await runner.chat(f"Count the letters of {word}")
            await runner.aclose()
            return session.id

        ids = await asyncio.gather(*(one(word) for word in words))
        for word, session_id in zip(words, ids, strict=True):
            session = await store.open(session_id, write=False)
            context = session.context()
            assert user_texts(context) == [f"Count the letters of {word}"]
            assert message_text(context[-1]) == f"{word} has {len(word)} letters"
        assert len(await store.list(tmp_path)) == len(words)


async def test_appends_return_at_once_and_are_stored_in_order(
    postgres_url: str, tmp_path: Path
) -> None:
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = await store.create(tmp_path)
        entries = [session.append_message(UserMessage(content=f"m{i}")) for i in range(60)]
        pending = session.unwritten()
        assert pending is not None  # still being stored: the loop was not held
        await pending
        assert session.unwritten() is None
        read = await store.open(session.id, write=False)
        assert [e.id for e in read.entries] == [e.id for e in entries]
        assert await store.export_jsonl(session.id) == PostgresSessionStore(
            postgres_url, home=tmp_path
        ).export_jsonl(session.id)
        await session.aclose()


async def test_one_writer_across_the_sync_and_async_stores(
    postgres_url: str, tmp_path: Path
) -> None:
    sync_store = PostgresSessionStore(postgres_url, home=tmp_path)
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = await store.create(tmp_path)
        with pytest.raises(SessionLockedError, match=r"another SkillKit process \(pid \d+\)"):
            sync_store.open(session.id)
        writer = sync_store.create(tmp_path)
        with pytest.raises(SessionLockedError):
            await store.open(writer.id)
        with pytest.raises(SessionLockedError):
            await store.delete(writer.id)
        writer.close()
        await session.aclose()
        assert await store.delete(writer.id) == writer.id
        with pytest.raises(SessionNotFoundError):
            await store.open(writer.id)
    sync_store.close()


async def test_fork_import_and_secrets(postgres_url: str, tmp_path: Path) -> None:
    redactor = Redactor({"OPENAI_API_KEY": SECRET})
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path, redactor=redactor) as store:
        session = await store.create(tmp_path)
        first = session.append_message(UserMessage(content=f"key {SECRET}"))
        session.append_message(UserMessage(content="second"))
        await session.aclose()
        fork = await store.fork(session.id, first.id)
        assert [e.id for e in fork.entries] == [first.id]
        await fork.aclose()
        data = await store.export_jsonl(session.id)
        assert SECRET.encode() not in data
        other = tmp_path / "other"
        other.mkdir()
        copy_url = postgres_url  # the same database: the id is taken
        async with AsyncPostgresSessionStore(copy_url, home=other) as again:
            with pytest.raises(ValueError, match="already"):
                await again.import_jsonl(data)
        await store.delete(session.id)
        assert await store.import_jsonl(data) == session.id
        assert await store.export_jsonl(session.id) == data


async def test_a_lost_connection_stops_recording_and_the_run_goes_on(
    postgres_url: str, tmp_path: Path
) -> None:
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = await store.create(tmp_path)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name LIKE 'skillkit pid %%'"
            )
        runner = agent(session)
        errors: list[str] = []
        runner.events.on("error", lambda event: errors.append(event.payload.message))
        response = await runner.chat("Count the letters of alpha")
        assert response.text == "alpha has 5 letters"
        assert any("stopped recording" in e for e in errors)
        with pytest.raises(StoreUnavailableError):
            await session.written()
        await runner.aclose()  # closing a session whose connection is gone never hangs
        reopened = await store.open(session.id)  # its lock went with the connection
        assert user_texts(reopened.context()) == []  # nothing after the loss was kept
        await reopened.aclose()


def test_a_writer_killed_mid_append_loses_at_most_the_entry_in_flight(
    postgres_url: str, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.session.helpers import ROOT

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.session.async_writer", postgres_url, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None
    session_id = child.stdout.readline().strip()
    stored = [child.stdout.readline().strip() for _ in range(40)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    stored += [line.strip() for line in child.stdout.read().splitlines() if line.strip()]
    with PostgresSessionStore(postgres_url, home=tmp_path) as store:
        kept = [entry.id for entry in store.open(session_id, write=False).entries]
        assert kept[: len(stored)] == stored  # every entry it was told was stored is there
        assert len(kept) <= len(stored) + 1  # and at most the one in flight besides
        for _ in range(50):  # the server drops the dead writer's lock with its connection
            try:
                store.open(session_id).close()
                break
            except SessionLockedError:
                time.sleep(0.1)
        else:
            raise AssertionError("the killed writer's lock was never released")
