"""Session store benchmark: append, resume and list on each store (JSONL files,
SQLite, PostgreSQL), each against a floor measured in the same run with the same driver.

Run: python bench/bench_session_stores.py [--appends 2000] [--entries 10000]
     [--sessions 10000] [--stores jsonl,sqlite,postgres,postgres-async,postgres-core]
     [--postgres-url URL]

Without ``--postgres-url`` a private PostgreSQL server is started for the run (initdb +
pg_ctl in a temporary folder, fsync on, as tests/session/postgres_server.py does), and
each measurement gets a new database.

- append: `Session.append_message` of one ~300-byte message (redaction on, as in a
  recorded run); floor: the bare write of the same line with the same driver: an
  ``os.write`` (JSONL) or one ``INSERT`` in its own transaction into a table without
  keys (SQLite with the same pragmas; PostgreSQL with psycopg on a connection with the
  store's settings: autocommit, ``synchronous_commit`` as the fsync policy sets it).
  Target: <= 2x the floor. Store and floor rounds alternate; the medians are reported,
  with the median and the worst of the per-round ratios.
- append on ``postgres-async`` (`AsyncPostgresSessionStore`): an append and awaiting
  its storage (`Session.written`), as a recorded run waits for each event's entries;
  floor: one awaited ``INSERT`` on a psycopg ``AsyncConnection`` (append only).
- ``postgres-core``: what the PostgreSQL stores' shared core (`postgres_core.run` and
  `run_async` driving the append statement of `postgres_ops`) adds to an append: the
  same ``INSERT`` into ``skillkit_entries`` called directly on the connection (floor)
  and through the executor, in small rounds that alternate, sync and async.
- resume: open a session of ``--entries`` entries and build its context
  (`open(write=False)` + `Session.context`); floor: read the same lines (the file, or a
  ``SELECT`` of them) and ``json.loads`` each.
- list: ``store.list(cwd)`` over ``--sessions`` sessions of one project (the JSONL
  index warm); floor: ``os.scandir`` + ``stat`` of the files (JSONL), a bare ``SELECT``
  of the same columns (SQLite, PostgreSQL). Target: <= 300 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from skillkit.models import UserMessage
from skillkit.secrets import Redactor
from skillkit.session import (
    PostgresSessionStore,
    SessionHeader,
    SessionStore,
    SqliteSessionStore,
)
from skillkit.session.format import MessageEntry, encode_line
from skillkit.session.sqlite import SPAN, _connect
from skillkit.session.store_protocol import SessionStoreProtocol

TEXT = ("please look at the handler and tell me why it fails on empty input " * 5)[:300]


def best(run: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


POSTGRES: dict[str, Any] = {}
"""``url``: a fixed database URL given on the command line, or ``server``: the private
server this run started (each store then gets a new database)."""
_databases = itertools.count()


def postgres_url() -> str:
    if "url" in POSTGRES:
        return str(POSTGRES["url"])
    import psycopg

    server = POSTGRES["server"]
    name = f"bench_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.url(), autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    return str(server.url(name))


@contextlib.contextmanager
def postgres_for_the_run(url: str | None) -> Iterator[None]:
    if url:
        POSTGRES["url"] = url
        yield
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.session.postgres_server import running_server, why_not

    reason = why_not()
    if reason is not None:
        raise SystemExit(f"no PostgreSQL for the benchmark: {reason} (or pass --postgres-url)")
    with running_server(fsync=True) as server:
        POSTGRES["server"] = server
        yield


def make_store(kind: str, where: Path) -> SessionStoreProtocol:
    redactor = Redactor({"OPENAI_API_KEY": "sk-bench-not-a-real-key-000000"})
    if kind == "jsonl":
        return SessionStore(where, redactor=redactor)
    if kind == "postgres":
        return PostgresSessionStore(postgres_url(), redactor=redactor, home=where)
    return SqliteSessionStore(where / "sessions.db", redactor=redactor)


def close_store(store: object) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


def bench_append(kind: str, where: Path, count: int, rounds: int = 7) -> dict[str, float]:
    """Rounds of the store and of its floor alternate, so a busy machine slows both;
    the medians of the rounds, and the median and worst of each round's ratio."""
    store = make_store(kind, where)
    session = store.create(where / "project")
    message = UserMessage(content=TEXT)
    line = encode_line(MessageEntry(id="00000000", parent_id="ffffffff", message=message))
    if kind == "jsonl":
        fd = os.open(where / "floor.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

        def floor_round() -> None:
            for _ in range(count):
                os.write(fd, line)
    elif kind == "postgres":
        import psycopg

        assert isinstance(store, PostgresSessionStore)
        pg = psycopg.connect(store.conninfo, autocommit=True)
        pg.execute("SET synchronous_commit = off")  # as the store's "run" policy sets it
        pg.execute("CREATE TABLE floor_t (session_id text, seq integer, line bytea)")
        pg_seq = iter(range(10**9))

        def floor_round() -> None:
            for _ in range(count):
                pg.execute(
                    "INSERT INTO floor_t VALUES (%s, %s, %s)",
                    ("s", next(pg_seq), line),
                    prepare=True,
                )
    else:
        db = _connect(where / "floor.db", "run")
        db.execute("CREATE TABLE t (session_id TEXT, seq INTEGER, line BLOB)")
        seq = iter(range(10**9))

        def floor_round() -> None:
            for _ in range(count):
                db.execute("INSERT INTO t VALUES (?, ?, ?)", ("s", next(seq), line))

    def store_round() -> None:
        for _ in range(count):
            session.append_message(message)

    per = []
    floors = []
    for _ in range(rounds):
        per.append(best(store_round, 1) / count)
        floors.append(best(floor_round, 1) / count)
    ratios = sorted(a / f for a, f in zip(per, floors, strict=True))
    session.close()
    close_store(store)
    if kind == "jsonl":
        os.close(fd)
    elif kind == "postgres":
        pg.close()
    else:
        db.close()
    return {
        "append_us": statistics.median(per) * 1e6,
        "floor_us": statistics.median(floors) * 1e6,
        "ratio": statistics.median(ratios),
        "worst_ratio": ratios[-1],
    }


def bench_append_async(where: Path, count: int, rounds: int = 7) -> dict[str, float]:
    """`AsyncPostgresSessionStore`: an append and waiting for it to be stored
    (`Session.written`), one at a time as a recorded run does; floor: one ``INSERT`` of
    the same line awaited on a psycopg ``AsyncConnection`` with the store's settings."""
    import asyncio

    import psycopg

    from skillkit.session import AsyncPostgresSessionStore

    async def measure() -> dict[str, float]:
        redactor = Redactor({"OPENAI_API_KEY": "sk-bench-not-a-real-key-000000"})
        url = postgres_url()
        store = await AsyncPostgresSessionStore.connect(url, redactor=redactor, home=where)
        session = await store.create(where / "project")
        message = UserMessage(content=TEXT)
        line = encode_line(MessageEntry(id="00000000", parent_id="ffffffff", message=message))
        pg = await psycopg.AsyncConnection.connect(url, autocommit=True)
        await pg.execute("SET synchronous_commit = off")
        await pg.execute("CREATE TABLE floor_t (session_id text, seq integer, line bytea)")
        seq = iter(range(10**9))
        per, floors = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(count):
                session.append_message(message)
                await session.written()
            per.append((time.perf_counter() - start) / count)
            start = time.perf_counter()
            for _ in range(count):
                await pg.execute(
                    "INSERT INTO floor_t VALUES (%s, %s, %s)", ("s", next(seq), line), prepare=True
                )
            floors.append((time.perf_counter() - start) / count)
        await session.aclose()
        await store.close()
        await pg.close()
        ratios = sorted(a / f for a, f in zip(per, floors, strict=True))
        return {
            "append_us": statistics.median(per) * 1e6,
            "floor_us": statistics.median(floors) * 1e6,
            "ratio": statistics.median(ratios),
            "worst_ratio": ratios[-1],
        }

    return asyncio.run(measure())


def bench_core(where: Path, count: int, rounds: int = 40) -> dict[str, float]:
    """The executors' own cost on a real append: rounds of ``count`` INSERTs of the
    store's entry statement on one connection, called directly and through `run` (and
    the same on an ``AsyncConnection`` with `run_async`), which going first alternating.
    Each batch writes a session id that sorts after every one before it, so both append
    at the end of the entries' index alike. The medians of the rounds and of each
    pair's ratio."""
    import asyncio

    import psycopg

    from skillkit.session.postgres_core import run as run_sync
    from skillkit.session.postgres_core import run_async
    from skillkit.session.postgres_ops import INSERT_ENTRY, append_entry

    url = postgres_url()
    PostgresSessionStore(url, home=where).close()  # the schema
    line = encode_line(MessageEntry(id="00000000", message=UserMessage(content=TEXT)))
    batches = (f"{number:06d}" for number in itertools.count())
    times: dict[str, list[float]] = {"sync": [], "sync_core": [], "async": [], "async_core": []}

    def timed(name: str, start: float) -> None:
        times[name].append((time.perf_counter() - start) / count)

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SET synchronous_commit = off")  # as the store's "run" policy sets it
        for round_ in range(rounds):
            for through in (round_ % 2 == 1, round_ % 2 == 0):
                session_id = next(batches)
                start = time.perf_counter()
                for seq in range(count):
                    if through:
                        run_sync(db, append_entry(session_id, seq, line))
                    else:
                        db.execute(INSERT_ENTRY, (session_id, seq, line), prepare=True)
                timed("sync_core" if through else "sync", start)

    async def on_a_loop() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
            await db.execute("SET synchronous_commit = off")
            for round_ in range(rounds):
                for through in (round_ % 2 == 1, round_ % 2 == 0):
                    session_id = next(batches)
                    start = time.perf_counter()
                    for seq in range(count):
                        if through:
                            await run_async(db, append_entry(session_id, seq, line))
                        else:
                            await db.execute(INSERT_ENTRY, (session_id, seq, line), prepare=True)
                    timed("async_core" if through else "async", start)

    asyncio.run(on_a_loop())
    result = {}
    for side in ("sync", "async"):
        plain, through = times[side], times[f"{side}_core"]
        result[f"{side}_direct_us"] = statistics.median(plain) * 1e6
        result[f"{side}_core_us"] = statistics.median(through) * 1e6
        result[f"{side}_ratio"] = statistics.median(
            c / d for c, d in zip(through, plain, strict=True)
        )
    return result


def bench_resume(kind: str, where: Path, entries: int) -> dict[str, float]:
    store = make_store(kind, where)
    session = store.create(where / "project")
    message = UserMessage(content=TEXT)
    for _ in range(entries):
        session.append_message(message)
    session.close()

    def resume() -> None:
        assert len(store.open(session.id, write=False).context()) == entries

    if kind == "jsonl":
        path = session.path

        def floor() -> None:
            [json.loads(line) for line in path.read_bytes().splitlines()]
    elif kind == "postgres":
        import psycopg

        assert isinstance(store, PostgresSessionStore)
        pg = psycopg.connect(store.conninfo, autocommit=True)

        def floor() -> None:
            with pg.cursor(binary=True) as cursor:
                cursor.execute(
                    "SELECT line FROM skillkit_entries WHERE session_id = %s ORDER BY seq",
                    (session.id,),
                )
                [json.loads(line) for (line,) in cursor]
    else:
        db = _connect(where / "sessions.db", "run")
        (num,) = db.execute("SELECT num FROM sessions WHERE id = ?", (session.id,)).fetchone()

        def floor() -> None:
            rows = db.execute(
                "SELECT line FROM entries WHERE key >= ? AND key < ? ORDER BY key",
                (num * SPAN, (num + 1) * SPAN),
            ).fetchall()
            [json.loads(line) for (line,) in rows]

    result = {"resume_ms": best(resume) * 1e3, "floor_ms": best(floor) * 1e3}
    close_store(store)
    return result


def bench_list(kind: str, where: Path, count: int) -> dict[str, float]:
    project = where / "project"
    project.mkdir(parents=True, exist_ok=True)
    store = make_store(kind, where)
    message = MessageEntry(id="00000001", message=UserMessage(content="a question"), time=1.0)
    if isinstance(store, SessionStore):
        folder = store.folder(project)
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(count):
            sid = secrets.token_hex(8)
            header = SessionHeader(id=sid, cwd=str(project), created=float(number))
            (folder / f"20260101T000000_{sid}.jsonl").write_bytes(
                encode_line(header) + encode_line(message)
            )
        store.list(project)  # builds the index, as the first listing does

        def floor() -> None:
            [item.stat() for item in os.scandir(folder)]
    elif isinstance(store, PostgresSessionStore):
        import psycopg

        for number in range(count):  # imported whole: no writer's connection per session
            header = SessionHeader(id=secrets.token_hex(8), cwd=str(project), created=number)
            store.import_jsonl(encode_line(header) + encode_line(message))
        pg = psycopg.connect(store.conninfo, autocommit=True)

        def floor() -> None:
            pg.execute(
                "SELECT id, cwd, created, modified, parent_session, size, entries, messages,"
                " title, name, first_message, leaf_id FROM skillkit_sessions WHERE cwd = %s"
                " ORDER BY modified DESC",
                (str(project.absolute()),),
            ).fetchall()
    else:
        assert isinstance(store, SqliteSessionStore)
        for _ in range(count):
            store.create(project, entries=[message]).close()
        db = sqlite3.connect(store.path)

        def floor() -> None:
            db.execute(
                "SELECT id, cwd, created, modified, parent_session, size, entries, messages,"
                " title, name, first_message, leaf_id FROM sessions WHERE cwd = ?"
                " ORDER BY modified DESC",
                (str(project.absolute()),),
            ).fetchall()

    def listing() -> None:
        assert len(store.list(project)) == count

    result = {"list_ms": best(listing) * 1e3, "floor_ms": best(floor) * 1e3}
    close_store(store)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--stores", default="jsonl,sqlite,postgres,postgres-async")
    parser.add_argument("--postgres-url", help="a database to use (default: a private server)")
    args = parser.parse_args()
    kinds = args.stores.split(",")
    with (
        postgres_for_the_run(args.postgres_url)
        if any(kind.startswith("postgres") for kind in kinds)
        else contextlib.nullcontext()
    ):
        run(kinds, args)


def run(kinds: list[str], args: argparse.Namespace) -> None:
    for kind in kinds:
        if kind == "postgres-async":
            with tempfile.TemporaryDirectory() as temp:
                a = bench_append_async(Path(temp), args.appends)
            print(
                f"{kind}  append {a['append_us']:7.1f} µs (floor {a['floor_us']:6.1f}, "
                f"x{a['ratio']:.2f}, worst round x{a['worst_ratio']:.2f})"
            )
            print(json.dumps({"store": kind, "append": a}))
            continue
        if kind == "postgres-core":
            with tempfile.TemporaryDirectory() as temp:
                c = bench_core(Path(temp), 200)
            for side in ("sync", "async"):
                direct, core = c[f"{side}_direct_us"], c[f"{side}_core_us"]
                print(
                    f"{kind}  {side:5} INSERT {direct:7.1f} µs, through the core {core:7.1f} µs"
                    f" (median of the rounds' ratios x{c[side + '_ratio']:.3f})"
                )
            print(json.dumps({"store": kind, "append": c}))
            continue
        with tempfile.TemporaryDirectory() as temp:
            root = Path(temp)
            results = {
                "append": bench_append(kind, root / "append", args.appends),
                "resume": bench_resume(kind, root / "resume", args.entries),
                "list": bench_list(kind, root / "list", args.sessions),
            }
        a, r, li = results["append"], results["resume"], results["list"]
        print(
            f"{kind:6}  append {a['append_us']:7.1f} µs (floor {a['floor_us']:6.1f}, "
            f"x{a['ratio']:.2f}, worst round x{a['worst_ratio']:.2f})   "
            f"resume {r['resume_ms']:7.1f} ms (floor {r['floor_ms']:6.1f})   "
            f"list {li['list_ms']:6.1f} ms (floor {li['floor_ms']:6.1f})"
        )
        print(json.dumps({"store": kind, **{k: v for k, v in results.items()}}))


if __name__ == "__main__":
    main()
