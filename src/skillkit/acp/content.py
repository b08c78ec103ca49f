"""An ACP prompt's content blocks as the message a SkillKit run takes.

Text stays text; an image becomes an image part; a file the editor attached
(an embedded text resource) becomes its text in a fenced block headed by its URI; a
resource link is named (URI, name, MIME type) and never opened here — the model reads
it with its tools, under the permission gate, if it wants it. Audio and binary
resources are not sent to the model: a line says they were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from skillkit.models import ImagePart, TextPart, UserContent

__all__ = ["IMAGE_TYPES", "prompt_message"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types passed on to the model."""


def prompt_message(blocks: Sequence[Any]) -> str | list[UserContent]:
    """The message for ``blocks``: a string when it is text only, else text and image
    parts in order. Raises `ValueError` when nothing is left to send."""
    parts: list[UserContent] = []
    texts: list[str] = []

    def text(value: str) -> None:
        texts.append(value)

    def flush() -> None:
        if texts:
            parts.append(TextPart("\n\n".join(texts)))
            texts.clear()

    for block in blocks:
        match block:
            case TextContentBlock(text=value):
                text(value)
            case ImageContentBlock(data=data, mime_type=mime):
                if mime not in IMAGE_TYPES:
                    text(f"[an image of type {mime} was left out: not supported]")
                    continue
                flush()
                parts.append(ImagePart(data, mime))
            case ResourceContentBlock():
                text(_link(block))
            case EmbeddedResourceContentBlock(resource=TextResourceContents() as resource):
                text(_embedded(resource))
            case EmbeddedResourceContentBlock(resource=BlobResourceContents() as resource):
                if resource.mime_type in IMAGE_TYPES:
                    flush()
                    parts.append(ImagePart(resource.blob, resource.mime_type or ""))
                else:
                    text(f"[the attachment {resource.uri} was left out: binary content]")
            case AudioContentBlock():
                text("[an audio clip was left out: not supported]")
            case _:
                text("[an attachment of an unknown kind was left out]")
    flush()
    if not any(isinstance(p, ImagePart) or p.text.strip() for p in parts):
        raise ValueError("the prompt is empty")
    if all(isinstance(p, TextPart) for p in parts):
        return "\n\n".join(p.text for p in parts if isinstance(p, TextPart))
    return parts


def _link(block: ResourceContentBlock) -> str:
    described = f" ({block.description})" if block.description else ""
    kind = f", {block.mime_type}" if block.mime_type else ""
    return f"[attached: {block.name} <{block.uri}>{kind}]{described}"


def _embedded(resource: TextResourceContents) -> str:
    fence = "```"
    while fence in resource.text:
        fence += "`"
    return f"Attached {resource.uri}:\n{fence}\n{resource.text}\n{fence}"
