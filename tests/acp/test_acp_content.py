"""An ACP prompt's blocks as the message a run takes (`skillkit.acp.content`)."""

from __future__ import annotations

import pytest
from acp import (
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import AudioContentBlock

from skillkit.acp.content import prompt_message
from skillkit.models import ImagePart, TextPart


def test_text_blocks_make_one_string() -> None:
    assert prompt_message([text_block("one"), text_block("two")]) == "one\n\ntwo"


def test_an_image_keeps_its_place_among_the_text() -> None:
    message = prompt_message(
        [text_block("look:"), image_block("aGVsbG8=", "image/png"), text_block("what is it?")]
    )
    assert message == [
        TextPart("look:"),
        ImagePart("aGVsbG8=", "image/png"),
        TextPart("what is it?"),
    ]


def test_an_attached_file_is_given_whole_in_a_fence_that_it_cannot_close() -> None:
    resource = embedded_text_resource("file:///w/a.md", "before\n```\nafter")
    message = prompt_message([text_block("see"), resource_block(resource)])
    assert isinstance(message, str)
    assert "file:///w/a.md" in message
    assert "````\nbefore\n```\nafter\n````" in message


def test_a_resource_link_is_named_not_opened() -> None:
    link = resource_link_block("shadow", "file:///etc/shadow", mime_type="text/plain")
    message = prompt_message([text_block("summarize"), link])
    assert isinstance(message, str)
    assert "file:///etc/shadow" in message and "shadow" in message
    assert "root:" not in message


def test_binary_attachments_and_audio_are_left_out_with_a_note() -> None:
    blob = resource_block(
        embedded_blob_resource("file:///w/a.bin", "AAAA", mime_type="application/zip")
    )
    audio = AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")
    message = prompt_message([text_block("x"), blob, audio])
    assert isinstance(message, str)
    assert "left out" in message and "AAAA" not in message


def test_an_embedded_image_resource_is_an_image() -> None:
    blob = resource_block(embedded_blob_resource("file:///w/a.png", "iVBO", mime_type="image/png"))
    assert prompt_message([blob]) == [ImagePart("iVBO", "image/png")]


def test_an_image_of_an_unsupported_type_is_left_out() -> None:
    message = prompt_message([text_block("x"), image_block("AAAA", "image/tiff")])
    assert isinstance(message, str) and "image/tiff" in message


@pytest.mark.parametrize("blocks", [[], [text_block("  \n ")]])
def test_an_empty_prompt_is_refused(blocks: list[object]) -> None:
    with pytest.raises(ValueError, match="empty"):
        prompt_message(blocks)
