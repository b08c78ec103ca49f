"""What the model reads about skills: the catalog and the wrapped skill content.

Progressive disclosure: the system prompt carries only an ``<available_skills>`` block
(name, description, location of each skill the model may use); a skill's body enters
the conversation only when it is used — through the ``skill`` tool, or when the user
types ``/skill:NAME``. Injected content is wrapped in ``<skill_content ...>`` so the
model can tell it apart and compaction can recognise and keep it (`is_skill_content`;
as a transcript entry it is a `CustomMessage` of kind `SKILL_MESSAGE_KIND`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.models import CustomMessage, LLMMessage
    from skillkit.skills.loader import Skill

__all__ = [
    "SKILL_CONTENT_TAG",
    "SKILL_MESSAGE_KIND",
    "SKILL_TOOL_NAME",
    "is_skill_content",
    "render_catalog",
    "render_skill_content",
    "render_skill_message",
    "skill_message",
]

SKILL_CONTENT_TAG = "skill_content"
SKILL_MESSAGE_KIND = "skill"
SKILL_TOOL_NAME = "skill"

_INSTRUCTIONS = (
    "The following skills provide specialized instructions for specific tasks. "
    f"When a task matches a skill's description, call the `{SKILL_TOOL_NAME}` tool with "
    "the skill's name to load its full instructions before proceeding. Relative paths in "
    "a skill resolve against its folder (the parent of its SKILL.md)."
)


def render_catalog(skills: Sequence[Skill]) -> str | None:
    """The ``<available_skills>`` section for ``skills``, or None when there are none.

    Every value is XML-escaped, so a description cannot close the block.
    """
    if not skills:
        return None
    lines = [_INSTRUCTIONS, "", "<available_skills>"]
    for skill in skills:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape(skill.name)}</name>")
        lines.append(f"    <description>{escape(skill.description)}</description>")
        lines.append(f"    <location>{escape(str(skill.location))}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def render_skill_content(
    skill: Skill, arguments: str = "", *, action_tools: dict[str, str] | None = None
) -> str:
    """A skill's body wrapped with its name, location, folder, resources and actions.

    ``arguments`` (what the user typed after ``/skill:NAME``) follow the block. The
    companion files are listed, not read. ``action_tools`` maps action names to the tool
    names they are offered as.
    """
    name = escape(skill.name)
    location = escape(str(skill.location))
    parts = [f'<{SKILL_CONTENT_TAG} name="{name}" location="{location}">']
    if skill.body:
        parts.append(skill.body)
        parts.append("")
    parts.append(f"Skill directory: {skill.base_dir}")
    parts.append("Relative paths in this skill are relative to the skill directory.")
    if skill.files:
        parts.append("<skill_resources>")
        parts.extend(f"  <file>{escape(f)}</file>" for f in skill.files)
        if skill.files_truncated:
            parts.append("  <!-- more files not listed -->")
        parts.append("</skill_resources>")
    if skill.actions:
        parts.append("<skill_actions>")
        for spec in skill.actions:
            tool = (action_tools or {}).get(spec.name, "")
            tool_attr = f' tool="{escape(tool)}"' if tool else ""
            label = escape(spec.description)
            parts.append(f'  <action name="{escape(spec.name)}"{tool_attr}>{label}</action>')
        parts.append("</skill_actions>")
    parts.append(f"</{SKILL_CONTENT_TAG}>")
    text = "\n".join(parts)
    if arguments.strip():
        text += f"\n\nUser request: {arguments.strip()}"
    return text


def is_skill_content(text: str) -> bool:
    """True for text made by `render_skill_content` (compaction must keep it)."""
    return text.lstrip().startswith(f"<{SKILL_CONTENT_TAG} ")


def skill_message(text: str, name: str) -> CustomMessage:
    """Injected skill content as a transcript entry (kind `SKILL_MESSAGE_KIND`)."""
    from skillkit.models import CustomMessage

    payload: dict[str, Any] = {"name": name, "text": text}
    return CustomMessage(kind=SKILL_MESSAGE_KIND, payload=payload)


def render_skill_message(message: CustomMessage) -> LLMMessage | None:
    """The renderer for `SKILL_MESSAGE_KIND`: the content as a user message."""
    from skillkit.models import UserMessage

    payload = message.payload
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return UserMessage(payload["text"])
    return None
