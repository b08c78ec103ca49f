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
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from skillkit.models import CustomMessage, LLMMessage
    from skillkit.skills.loader import Skill

__all__ = [
    "SHORT_DESCRIPTION",
    "SKILL_CONTENT_TAG",
    "SKILL_MESSAGE_KIND",
    "SKILL_TOOL_NAME",
    "Catalog",
    "CatalogBudget",
    "CatalogLevel",
    "build_catalog",
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
_INSTRUCTIONS_SHORT = (
    "The following skills provide specialized instructions for specific tasks "
    "(descriptions shortened). When a task matches a skill, call the "
    f"`{SKILL_TOOL_NAME}` tool with the skill's name to load its full instructions."
)
_INSTRUCTIONS_NAMES = (
    "The following skills provide specialized instructions for specific tasks (names "
    f"only). When a task may match a skill, call the `{SKILL_TOOL_NAME}` tool with its "
    "name to load its full instructions, or with `query` to search the descriptions."
)


CatalogLevel = Literal["full", "short", "names", "search"]
"""How much the catalog says about each skill: ``full`` (name, description, location),
``short`` (name and a description cut to `SHORT_DESCRIPTION` characters), ``names``
(names only), ``search`` (a count; the model finds skills through the ``skill`` tool)."""

SHORT_DESCRIPTION = 100


@dataclass(frozen=True, slots=True)
class CatalogBudget:
    """How much of every request the skill catalog may take, in characters.

    The smaller of ``max_chars`` and ``share`` of the model's context window (tokens,
    at ``chars_per_token`` characters each). The budget covers the ``<available_skills>``
    block and the skill names listed in the ``skill`` tool's arguments.
    """

    share: float = 0.02
    max_chars: int = 32_000
    chars_per_token: int = 4

    def chars(self, context_window: int | None) -> int:
        """The budget for a model with ``context_window`` tokens (None: unknown, the
        absolute cap alone)."""
        limit = self.max_chars
        if context_window:
            limit = min(limit, int(context_window * self.share * self.chars_per_token))
        return max(limit, 0)


@dataclass(frozen=True, slots=True)
class Catalog:
    """What the model is told about skills: the system-prompt ``text`` (None when no
    skill is offered), the ``level`` it was rendered at, whether the ``skill`` tool lists
    every name (``names_in_tool``; otherwise it takes any name and a search query),
    ``count`` skills offered and the characters ``used`` of the budget."""

    text: str | None
    level: CatalogLevel
    names_in_tool: bool
    count: int
    used: int


def build_catalog(skills: Sequence[Skill], budget: int) -> Catalog:
    """The richest catalog of ``skills`` that fits ``budget`` characters.

    Tries, in order: every field (`render_catalog`), descriptions cut to
    `SHORT_DESCRIPTION` characters without locations, names only, and finally a count
    with the search route through the ``skill`` tool (offered whatever the budget: a
    skill is always reachable). The cost of a level counts the tool's name list too.
    Pure: the same skills and budget give the same catalog.
    """
    if not skills:
        return Catalog(None, "full", True, 0, 0)
    names_cost = sum(len(s.name) + 4 for s in skills)
    # Each level is at least the names twice (catalog and tool): past that, only search.
    if 2 * names_cost <= budget:
        least = names_cost + sum(len(s.description) for s in skills)
        if least <= budget:
            full = render_catalog(skills)
            assert full is not None
            if len(full) + names_cost <= budget:
                return Catalog(full, "full", True, len(skills), len(full) + names_cost)
        short = _render_short(skills)
        if len(short) + names_cost <= budget:
            return Catalog(short, "short", True, len(skills), len(short) + names_cost)
        names = _render_names(skills)
        if len(names) + names_cost <= budget:
            return Catalog(names, "names", True, len(skills), len(names) + names_cost)
    text = _render_search(len(skills))
    return Catalog(text, "search", False, len(skills), len(text))


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _render_short(skills: Sequence[Skill]) -> str:
    lines = [_INSTRUCTIONS_SHORT, "", "<available_skills>"]
    for skill in skills:
        name = escape(skill.name)
        description = escape(_cut(skill.description, SHORT_DESCRIPTION))
        lines.append(f'  <skill name="{name}">{description}</skill>')
    lines.append("</available_skills>")
    return "\n".join(lines)


def _render_names(skills: Sequence[Skill]) -> str:
    lines = [_INSTRUCTIONS_NAMES, "", f'<available_skills count="{len(skills)}">']
    lines.extend(escape(skill.name) for skill in skills)
    lines.append("</available_skills>")
    return "\n".join(lines)


def _render_search(count: int) -> str:
    return (
        f'<available_skills count="{count}">\n'
        f"{count} skills are installed: too many to list here. When a task may match a "
        f"skill, call the `{SKILL_TOOL_NAME}` tool with `query` (a few words about the "
        "task) to find matching skills, then with `name` to load one.\n"
        "</available_skills>"
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
