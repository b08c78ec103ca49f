"""The SDK guide's snippets are plain scripts: none needs top-level ``await`` and none is
left out of the docs test's run."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_docs import blocks_of

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"


def test_every_snippet_of_the_sdk_guide_is_a_script_that_runs() -> None:
    blocks = [b for b in blocks_of(GUIDE) if b.language == "python"]
    assert len(blocks) >= 10
    for block in blocks:
        assert block.mark in (None, "continues"), f"{block.name} is not run"
        compile(block.text, block.name, "exec", flags=0)  # a SyntaxError on top-level await
        assert not any(isinstance(node, ast.Await) for node in ast.parse(block.text).body)


def test_the_guide_documents_every_stream_event_type_and_field_and_every_reply_field() -> None:
    from typing import get_args

    from skillkit.adapters.scripted import Reply
    from skillkit.models import StreamEvent, StreamEventType

    text = GUIDE.read_text()
    for kind in get_args(StreamEventType):
        assert f"`{kind}`" in text, kind
    for field in (*Reply.__struct_fields__, *StreamEvent.__struct_fields__):
        assert f"`{field}`" in text, field
