"""Small texts the faces show: /help lists ``!command``, /cost on a free model, and the
doctor's rows of keyless providers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from skillkit.commands.builtin import _cache_line
from skillkit.doctor import _providers
from skillkit.model_registry import default_registry
from skillkit.models import TokenUsage


def test_cost_on_a_free_model_says_there_is_nothing_to_save() -> None:
    model = default_registry().get("ollama:qwen3:8b")
    assert model is not None and model.cost.input == 0
    line = _cache_line(TokenUsage(input=10, output=1, cache_read=500), model)
    assert (
        line == "caching: 500 tokens read from cache (the model's input is free: nothing to save)"
    )
    assert "$0/M" not in line


def test_doctor_names_a_keyless_provider_without_empty_brackets() -> None:
    section = _providers({}, None)
    rows = [text for _, text in section.rows if "no key needed" in text]
    assert rows
    assert not any("()" in text for text in rows)


def test_the_resume_preview_shows_what_the_user_typed() -> None:
    from skillkit.frontends.session_view import typed_text

    skill = (
        '<skill_content name="word-stats" location="/x/SKILL.md">\nCount words.\n'
        "</skill_content>\n\nUser request: count notes.txt"
    )
    assert typed_text(skill) == "/skill:word-stats count notes.txt"
    bare = '<skill_content name="deploy" location="/x">\nbody\n</skill_content>'
    assert typed_text(bare) == "/skill:deploy"
    note = "I ran this shell command myself; it finished.\n$ ls -la\n<output>\na\n</output>"
    assert typed_text(note) == "!ls -la"
    assert typed_text("what is in notes.txt?") is None


def test_a_prompt_with_attached_files_reads_as_typed() -> None:
    from skillkit.frontends.prompt_completion import attach_mentions
    from skillkit.frontends.session_view import typed_text

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "notes.md").write_text("# Notes\nBuy milk\n")
        (root / "b.txt").write_text("second\n")
        sent, attached = attach_mentions("fix notes @notes.md and @b.txt", root)
    assert attached == ["notes.md", "b.txt"] and "Buy milk" in sent
    assert typed_text(sent) == "fix notes @notes.md and @b.txt"
    # a file block the user wrote in the middle of a prompt is what they typed
    assert typed_text('see\n\n<file path="x">\nA\n</file>\nthen this') is None


def test_the_session_list_titles_a_prompt_with_attachments_by_what_was_typed(
    tmp_path: Path,
) -> None:
    from skillkit.frontends.prompt_completion import attach_mentions
    from skillkit.models import UserMessage
    from skillkit.session.store import SessionStore

    (tmp_path / "notes.md").write_text("# Notes\nBuy milk\n")
    sent, _ = attach_mentions("fix notes @notes.md", tmp_path)
    store = SessionStore(tmp_path / "sessions")
    with store.create(str(tmp_path)) as session:
        session.append_message(UserMessage(sent))
    [info] = store.list(str(tmp_path))
    assert info.title == "fix notes @notes.md"
