"""The sidecar index: in step with each session, read instead of the files, rebuilt when
missing or stale."""

from __future__ import annotations

import json
import os
from pathlib import Path

from skillkit.models import AssistantMessage, TextPart, UserMessage
from skillkit.session import SessionStore
from skillkit.session.index import INDEX_NAME


def index_rows(folder: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    return json.loads((folder / INDEX_NAME).read_text())["sessions"]


def test_the_index_is_kept_in_step_by_the_writer(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="  hello\n  world  "))
    session.set_name("greeting")
    last = session.append_message(AssistantMessage(content=[TextPart("hi")]))
    session.close()
    (row,) = index_rows(session.path.parent).values()
    assert row["id"] == session.id
    assert row["messages"] == 2 and row["entries"] == 3
    assert row["title"] == "greeting" and row["first_message"] == "hello world"
    assert row["leaf_id"] == last.id
    assert row["size"] == session.path.stat().st_size


def test_listing_reads_the_index_not_the_files(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="hello"))
    session.close()
    before = session.path.stat()
    # change the file behind the index's back, keeping its size and time
    data = session.path.read_bytes().replace(b'"hello"', b'"HELLO"')
    session.path.write_bytes(data)
    os.utime(session.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert store.list(tmp_path)[0].title == "hello"


def test_a_grown_file_is_read_only_from_where_the_index_stopped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="hello"))
    session.close()
    before = session.path.stat()
    data = session.path.read_bytes().replace(b'"hello"', b'"HELLO"')
    session.path.write_bytes(data)  # unnoticed: same size and time
    os.utime(session.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    writer = store.open(session.id)
    writer.append_message(AssistantMessage(content=[TextPart("one")]))
    writer.append_message(UserMessage(content="two"))
    (info,) = store.list(tmp_path)  # the writer has not updated the index yet
    assert info.messages == 3 and info.title == "hello" and info.leaf_id == writer.leaf_id
    writer.close()


def test_a_missing_or_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = set()
    for number in range(3):
        session = store.create(tmp_path)
        session.append_message(UserMessage(content=f"task {number}"))
        session.close()
        ids.add(session.id)
    folder = store.folder(tmp_path)
    expected = {(i.id, i.title, i.messages) for i in store.list(tmp_path)}
    (folder / INDEX_NAME).unlink()
    assert {(i.id, i.title, i.messages) for i in store.list(tmp_path)} == expected
    assert set(r["id"] for r in index_rows(folder).values()) == ids
    (folder / INDEX_NAME).write_text("{ not json")
    assert {(i.id, i.title, i.messages) for i in store.list(tmp_path)} == expected


def test_a_rewritten_or_deleted_file_is_noticed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="long first message " * 5))
    session.append_message(UserMessage(content="second"))
    session.close()
    lines = session.path.read_bytes().splitlines(keepends=True)
    session.path.write_bytes(lines[0] + lines[2])  # shorter: read whole again
    (info,) = store.list(tmp_path)
    assert info.messages == 1 and info.title == "second"
    session.path.unlink()
    assert store.list(tmp_path) == []
    assert index_rows(store.folder(tmp_path)) == {}


def test_latest_and_prefixes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    older = store.create(tmp_path)
    older.append_message(UserMessage(content="old"))
    older.close()
    newer = store.create(tmp_path)
    newer.append_message(UserMessage(content="new"))
    newer.close()
    latest = store.latest(tmp_path)
    assert latest is not None and latest.id == newer.id
    assert store.open(newer.id[:8], write=False).id == newer.id
    assert store.open(newer.path, write=False).id == newer.id
    assert store.latest(tmp_path / "elsewhere") is None
