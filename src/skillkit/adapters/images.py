"""`without_images`: a request for a model that takes no image input.

An image in the transcript (a user's, or one the ``read`` tool returned) would make
every later call to a text-only model fail the same way ("image input is not
supported"). For such a model each image part is sent as a short text stub instead;
the transcript itself keeps the image, so a later switch to a model that reads images
sees it again. A model the catalog does not know is sent images until its server
refuses one (`refuses_images`); the adapter then sends that request again with stubs,
and stubs from then on.
"""

from __future__ import annotations

import re

import msgspec

from skillkit.models import (
    ImagePart,
    LLMMessage,
    LLMRequest,
    TextPart,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["IMAGE_STUB", "has_images", "refuses_images", "without_images"]

IMAGE_STUB = "[image ({mime_type}) not shown: this model does not accept images]"
"""The text sent in place of an image (``{mime_type}`` is filled in)."""


_REFUSAL = re.compile(
    r"image.*(not supported|only supported|unsupported|not support|not allowed|not enabled"
    r"|cannot|can't)"
    r"|(not support|unsupported|cannot|can't|does not accept).*image"
    r"|multimodal.*(not supported|unsupported|not enabled)",
    re.IGNORECASE | re.DOTALL,
)


def refuses_images(error: str | None) -> bool:
    """Whether a provider's error says the model takes no image input (a text-only
    model behind an OpenAI-compatible server the catalog does not know)."""
    return bool(error) and _REFUSAL.search(error or "") is not None


def has_images(request: LLMRequest) -> bool:
    """Whether any user or tool-result message of ``request`` holds an image."""
    for message in request.messages:
        content = getattr(message, "content", None)
        if (
            type(message) in (UserMessage, ToolResultMessage)
            and isinstance(content, list)
            and any(type(part) is ImagePart for part in content)
        ):
            return True
    return False


def _stubbed(parts: list[TextPart | ImagePart]) -> list[TextPart | ImagePart] | None:
    if not any(type(part) is ImagePart for part in parts):
        return None
    return [
        TextPart(IMAGE_STUB.format(mime_type=part.mime_type)) if type(part) is ImagePart else part
        for part in parts
    ]


def without_images(request: LLMRequest) -> LLMRequest:
    """``request`` with every image part of its user and tool-result messages replaced
    by a text stub (the same object when it has no image)."""
    messages: list[LLMMessage] | None = None
    for index, message in enumerate(request.messages):
        replaced: LLMMessage | None = None
        if type(message) is UserMessage and isinstance(message.content, list):
            parts = _stubbed(message.content)
            replaced = UserMessage(parts) if parts is not None else None
        elif type(message) is ToolResultMessage:
            parts = _stubbed(message.content)
            if parts is not None:
                replaced = msgspec.structs.replace(message, content=parts)
        if replaced is not None:
            if messages is None:
                messages = list(request.messages)
            messages[index] = replaced
    if messages is None:
        return request
    return msgspec.structs.replace(request, messages=messages)
