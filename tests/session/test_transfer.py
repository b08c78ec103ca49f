"""Moving sessions between stores: lossless, byte-identical in canonical form."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.models import AssistantMessage, TextPart, UserMessage
from skillkit.session import SessionExistsError, SessionStore
from skillkit.session.format import ChangedFile, CheckpointEntry, FormatError
from skillkit.session.index import SessionInfo
from skillkit.session.store_base import canonical_jsonl
from skillkit.session.store_protocol import SessionStoreProtocol, open_store
from skillkit.session.transfer import copy_sessions, export_to_folder, import_files
from tests.session.helpers import run_cli
from tests.session.postgres_server import PostgresServer

KINDS = ["jsonl", "sqlite", "postgres"]
FIELDS = (
    "id",
    "cwd",
    "created",
    "entries",
    "messages",
    "title",
    "name",
    "first_message",
    "leaf_id",
    "parent_session",
)


@pytest.fixture
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """``make(kind)``: a new, empty store of ``kind``; closed when the test ends."""
    opened: list[SessionStoreProtocol] = []
    databases: list[tuple[PostgresServer, str]] = []
    count = itertools.count()

    def new(kind: str) -> SessionStoreProtocol:
        where = tmp_path / f"store{next(count)}"
        where.mkdir()
        if kind == "jsonl":
            url = f"file://{where}"
        elif kind == "sqlite":
            url = f"sqlite://{where}/sessions.db"
        else:
            server: PostgresServer = request.getfixturevalue("postgres_server")
            url = server.new_database()
            databases.append((server, url))
        store = open_store(url)
        opened.append(store)
        return store

    yield new
    for store in opened:
        close = getattr(store, "close", None)
        if callable(close):
            close()
    for server, url in databases:
        server.drop_database(url)


def fill(store: SessionStoreProtocol, cwd: Path) -> list[str]:
    """Sessions with everything a session can hold; their ids."""
    session = store.create(cwd)
    first = session.append_message(UserMessage(content="plan the work"))
    session.append_model_change("m2", "provider")
    answer = session.append_message(AssistantMessage(content=[TextPart(text="step one")]))
    session.append(
        CheckpointEntry,
        turn=1,
        before="snap-a",
        after="snap-b",
        target_id=first.id,
        files=[ChangedFile(path="a.py", status="modified", added=2, removed=1)],
        patch="--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n-x\n+y\n+z\n",
    )
    session.label(answer.id, "good point")
    session.move_to(first.id, summary="step one was wrong")
    session.append_message(UserMessage(content="try again ✓ ünïcode"))
    session.append_custom("plugin", {"nested": {"list": [1, 2.5, None, "x"]}})
    session.set_name("the plan")
    session.close()
    sidecar = session.path.with_suffix(".checkpoints")
    (sidecar / "objects").mkdir(parents=True)
    (sidecar / "objects" / "snap-b").write_bytes(b"snapshot bytes")
    fork = store.fork(session.id, answer.id)
    fork.append_message(UserMessage(content="in the fork"))
    fork.close()
    empty = store.create(cwd / "elsewhere")
    empty.close()
    return [session.id, fork.id, empty.id]


def rows(store: SessionStoreProtocol) -> dict[str, tuple[object, ...]]:
    def row(info: SessionInfo) -> tuple[object, ...]:
        return tuple(getattr(info, name) for name in FIELDS)

    return {info.id: row(info) for info in store.list()}


def dumps(store: SessionStoreProtocol, ids: list[str]) -> dict[str, bytes]:
    return {session_id: store.export_jsonl(session_id) for session_id in ids}


@pytest.mark.parametrize(("source_kind", "target_kind"), list(itertools.product(KINDS, KINDS)))
def test_every_store_copies_to_every_store_losslessly(
    source_kind: str, target_kind: str, make: object, tmp_path: Path
) -> None:
    source = make(source_kind)  # type: ignore[operator]
    target = make(target_kind)  # type: ignore[operator]
    ids = fill(source, tmp_path)
    report = copy_sessions(source, target)
    assert sorted(report.copied) == sorted(ids) and not report.failed and not report.skipped
    assert dumps(target, ids) == dumps(source, ids)
    assert rows(target) == rows(source)
    original = source.open(ids[0], write=False)
    copied = target.open(ids[0], write=False)
    assert copied.labels() == original.labels() and copied.session_name == "the plan"
    assert copied.context() == original.context()
    assert target.open(ids[1], write=False).header.parent_session == ids[0]
    kept = copied.path.with_suffix(".checkpoints") / "objects" / "snap-b"
    assert kept.read_bytes() == b"snapshot bytes"
    again = copy_sessions(source, target)  # run twice: nothing doubled
    assert sorted(again.skipped) == sorted(ids) and again.copied == []
    assert len(target.list()) == len(ids)


def test_a_round_trip_through_every_store_and_a_folder_is_byte_identical(
    make: object, tmp_path: Path
) -> None:
    start = make("jsonl")  # type: ignore[operator]
    ids = fill(start, tmp_path)
    before = dumps(start, ids)
    stores = [make(kind) for kind in ("sqlite", "postgres", "jsonl", "sqlite")]  # type: ignore[operator]
    previous = start
    for store in stores:
        copy_sessions(previous, store)
        previous = store
    folder = tmp_path / "exported"
    assert sorted(export_to_folder(previous, folder).copied) == sorted(ids)
    assert {p.name for p in folder.glob("*.jsonl")} == {f"{i}.jsonl" for i in ids}
    assert (folder / f"{ids[0]}.checkpoints" / "objects" / "snap-b").is_file()
    final = make("postgres")  # type: ignore[operator]
    assert sorted(import_files(final, sorted(folder.glob("*.jsonl"))).copied) == sorted(ids)
    assert dumps(final, ids) == before
    for session_id in ids:
        assert (folder / f"{session_id}.jsonl").read_bytes() == before[session_id]
        assert canonical_jsonl(final.open(session_id, write=False)) == before[session_id]


@pytest.mark.parametrize("kind", KINDS)
def test_an_import_refuses_a_taken_id_and_damaged_data(
    kind: str, make: object, tmp_path: Path
) -> None:
    store = make(kind)  # type: ignore[operator]
    (session_id, *_) = fill(store, tmp_path)
    data = store.export_jsonl(session_id)
    with pytest.raises(SessionExistsError):
        store.import_jsonl(data)
    other = make(kind)  # type: ignore[operator]
    with pytest.raises(FormatError):
        other.import_jsonl(data[:-5])  # a torn last line is not imported quietly
    with pytest.raises(FormatError):
        other.import_jsonl(b"")
    assert other.list() == []


def test_the_sessions_command_exports_all_and_imports_them_back(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    ids = fill(SessionStore(home), cwd)
    before = dumps(SessionStore(home), ids)
    url = f"sqlite://{tmp_path}/all.db"
    moved = run_cli("sessions", "export", "--all", "--to", url, home=home, cwd=cwd)
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.strip() == f"exported 3 sessions: {url}"
    listed = run_cli("sessions", "list", "--all", "--session-store", url, home=home, cwd=cwd)
    assert "the plan" in listed.stdout and ids[1][:12] in listed.stdout
    folder = tmp_path / "files"
    out = run_cli(
        "sessions", "export", "--all", "--to", str(folder), "--session-store", url,
        home=home, cwd=cwd,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    back = run_cli("sessions", "import", str(folder), home=fresh, cwd=cwd)
    assert back.returncode == 0, back.stderr
    assert back.stdout.strip() == f"imported 3 sessions: {folder}"
    assert dumps(SessionStore(fresh), ids) == before
    twice = run_cli("sessions", "import", url, home=fresh, cwd=cwd)
    assert twice.stdout.strip() == f"imported 0 sessions (3 already there): {url}"
    one = run_cli(
        "sessions", "export", ids[0][:8], "--format", "jsonl", "--session-store", url,
        home=home, cwd=cwd,
    )  # fmt: skip
    assert one.stdout.encode() == before[ids[0]]
    for wrong in (["--all"], ["--to", str(folder), ids[0]], []):
        refused = run_cli("sessions", "export", *wrong, home=home, cwd=cwd)
        assert refused.returncode == 2 and "skillkit: error: sessions:" in refused.stderr
