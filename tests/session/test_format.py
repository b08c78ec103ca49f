"""The session file: every entry kind round-trips, damage is skipped, old files migrate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.context import convert_to_llm
from skillkit.models import (
    AssistantMessage,
    CustomMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.session import (
    FORMAT_VERSION,
    BranchEntry,
    CompactionEntry,
    CustomEntry,
    FormatError,
    LabelEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    NameEntry,
    SessionStore,
    read_session,
)
from skillkit.session.file import parse_session
from tests.session.helpers import FIXTURES, resendable


def fill_every_kind(store: SessionStore, cwd: Path):  # type: ignore[no-untyped-def]
    session = store.create(cwd)
    user = session.append_message(UserMessage(content="look at the image"))
    session.append_message(
        UserMessage(
            content=[TextPart("and this"), ImagePart(data="aGVsbG8=", mime_type="image/png")]
        )
    )
    session.append_model_change("gpt-4o", provider="openai")
    call = session.append_message(
        AssistantMessage(
            content=[ThinkingPart("hmm", signature="sig"), ToolCall("c1", "read", {"path": "a"})],
            stop_reason="tool_use",
            usage=TokenUsage(input=10, output=5),
            provider="openai",
            model="gpt-4o",
        )
    )
    session.append_message(
        ToolResultMessage("c1", "read", [TextPart("body")], is_error=False, details={"n": 1})
    )
    session.append_mode_change("plan", previous="default")
    session.append_compaction(
        summary="read a file",
        head=[CustomMessage(kind="compaction_summary", payload={"summary": "read a file"})],
        first_kept_id=call.id,
        tokens_before=900,
        tokens_after=120,
    )
    session.append_custom("plugin-state", {"counter": 3})
    session.append_custom("note", {"text": "remember"}, in_context=True)
    session.label(user.id, "start")
    session.set_name("image review")
    session.move_to(user.id, summary="the read went nowhere")
    session.append_message(AssistantMessage(content=[TextPart("fresh start")]))
    session.close()
    return session


def test_every_entry_kind_round_trips(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    written = fill_every_kind(store, tmp_path)
    loaded = store.open(written.id, write=False)
    assert loaded.header == written.header
    assert loaded.entries == written.entries
    kinds = {type(e) for e in loaded.entries}
    assert kinds == {
        MessageEntry,
        ModelChangeEntry,
        ModeChangeEntry,
        CompactionEntry,
        CustomEntry,
        LabelEntry,
        NameEntry,
        BranchEntry,
    }
    assert loaded.labels() == {loaded.entries[0].id: "start"}
    assert loaded.leaf_id == loaded.entries[-1].id
    # the branch moved back to the first message: the abandoned turn is out of context
    context = loaded.context()
    assert [type(m) for m in context] == [UserMessage, CustomMessage, AssistantMessage]
    assert context[1].kind == "pinned" and "the read went nowhere" in context[1].payload["text"]
    assert convert_to_llm(context)[1] == UserMessage(content=context[1].payload["text"])
    # the earlier branch is still there, with its compaction and in-context custom entry
    before_move = loaded.entries[-3].id
    old = loaded.context(before_move)
    assert isinstance(old[0], CustomMessage) and old[0].kind == "compaction_summary"
    assert isinstance(old[1], AssistantMessage) and old[1].tool_calls[0].id == "c1"
    assert old[-1] == CustomMessage(kind="note", payload={"text": "remember"})
    assert loaded.session_name == "image review"  # a name holds on every branch
    lines = written.path.read_bytes().splitlines()
    assert json.loads(lines[0])["version"] == FORMAT_VERSION
    assert len(lines) == 1 + len(written.entries)


def test_entries_form_a_tree_with_one_leaf(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    a = session.append_message(UserMessage(content="a"))
    b = session.append_message(AssistantMessage(content=[TextPart("b")]))
    session.move_to(a.id)
    c = session.append_message(AssistantMessage(content=[TextPart("c")]))
    assert session.children(a.id)[0].id == b.id
    assert session.leaf_id == c.id
    assert [m for m in session.context()] == [
        UserMessage(content="a"),
        AssistantMessage(content=[TextPart("c")]),
    ]
    assert session.context(b.id)[-1] == AssistantMessage(content=[TextPart("b")])
    session.close()


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="kept"))
    session.close()
    whole = session.path.read_bytes()
    with open(session.path, "ab") as handle:
        handle.write(b'{"type":"message","id":"torn1","parent_id":null,"time":1,"mess')
    data = read_session(session.path)
    assert [e.message for e in data.entries] == [UserMessage(content="kept")]  # type: ignore[union-attr]
    assert data.torn and any("incomplete" in w for w in data.warnings)
    # a writer cuts the torn tail off before appending, so the file stays valid
    reopened = store.open(session.id)
    reopened.append_message(AssistantMessage(content=[TextPart("after")]))
    reopened.close()
    text = session.path.read_bytes()
    assert text.startswith(whole) and b"torn1" not in text
    assert len(read_session(session.path).entries) == 2
    assert not read_session(session.path).warnings


def test_a_damaged_line_in_the_middle_is_skipped(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    session.append_message(UserMessage(content="one"))
    session.close()
    with open(session.path, "ab") as handle:
        handle.write(b"not json at all\n" + b"[" * 5000 + b"\n")
        handle.write(b'{"type":"label","id":"l1","parent_id":null,"target_id":"x","label":"y"}\n')
    data = read_session(session.path)
    assert len(data.entries) == 2 and len(data.warnings) == 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tail=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=2000))
def test_no_damage_after_the_header_fails_a_load(tmp_path: Path, tail: bytes, cut: int) -> None:
    folder = tmp_path / "prop"
    folder.mkdir(exist_ok=True)
    store = SessionStore(folder)
    session = store.create(folder)
    session.append_message(UserMessage(content="x" * 50))
    session.append_message(AssistantMessage(content=[TextPart("y" * 50)]))
    session.close()
    raw = session.path.read_bytes()
    header_end = raw.index(b"\n") + 1
    damaged = raw[: max(header_end, min(cut, len(raw)))] + tail
    data = parse_session(damaged)
    assert len(data.entries) <= 2
    shutil.rmtree(folder)


def test_a_file_without_a_header_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"type":"message"}\n')
    with pytest.raises(FormatError):
        read_session(path)
    path.write_bytes(b'{"type":"session","id":"a","version":99,"cwd":"/","created":0}\n')
    with pytest.raises(FormatError, match="newer"):
        read_session(path)


def test_a_version_0_file_is_migrated_on_load_and_rewritten_before_a_write(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path)
    folder = store.folder("/home/user/project")
    folder.mkdir(parents=True)
    path = folder / "legacy.jsonl"
    shutil.copy(FIXTURES / "v0_session.jsonl", path)

    old = store.open(path, write=False)
    assert old.header.version == FORMAT_VERSION and old.id == "legacy0001"
    assert old.header.created == 1748772000.0
    assert isinstance(old.entries[0], ModelChangeEntry) and old.entries[0].model == "gpt-4o"
    context = old.context()
    assert [type(m) for m in context] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]
    assert resendable(context) == []
    assert path.read_bytes() == (FIXTURES / "v0_session.jsonl").read_bytes()  # reading never writes

    session = store.open(path)
    session.append_message(UserMessage(content="and now?"))
    session.close()
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0])["version"] == FORMAT_VERSION
    again = store.open(path, write=False)
    assert again.context()[:4] == context and not again.warnings
    assert again.entries[-1].parent_id == old.entries[-1].id
    assert store.list("/home/user/project")[0].title == "List the files."
