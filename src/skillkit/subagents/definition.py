"""`AgentDefinition`: one child agent, read from a Markdown file with YAML frontmatter.

An agent file is a ``NAME.md`` under ``.skillkit/agents/`` (project) or
``~/.skillkit/agents/`` (user)::

    ---
    name: code-reviewer
    description: Reviews a change for bugs and missing tests. Use after editing code.
    tools: [read, grep, find, ls]     # or "read, grep"; left out: every tool but `task`
    model: inherit                    # or a model string (openai:gpt-4o, scripted:PATH)
    mode: plan                        # inherit (default) or plan: read-only
    skills: [python-style]            # skills whose instructions the child starts with
    max_turns: 20                     # model calls of one child run
    ---
    You review code. Report problems as a list, most serious first.

The body is the child's system prompt. `parse_agent_file` reads one file and raises
`AgentDefinitionError` whose every line names the file, the field and the rule it breaks
(``.skillkit/agents/x.md: max_turns: must be a whole number of at least 1 (got 0)``),
as the skill parser does. Unknown fields are warnings, so a file written for another
agent still loads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from skillkit.skills.diagnostics import Diagnostic, Findings, SkillError
from skillkit.skills.frontmatter import decode_text, kind, load_frontmatter, split_frontmatter

if TYPE_CHECKING:  # the CLI reads definitions without loading the tool layer
    from skillkit.tools.base import Tool

__all__ = [
    "AGENT_FIELDS",
    "GENERAL_PURPOSE",
    "MAX_AGENT_FILE_BYTES",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentMode",
    "parse_agent_bytes",
    "parse_agent_file",
]

AgentMode = Literal["inherit", "plan"]

AGENT_FIELDS = (
    "name",
    "description",
    "tools",
    "model",
    "mode",
    "skills",
    "max_turns",
    "handoff_to",
)
"""The frontmatter fields an agent file may have."""

MAX_AGENT_FILE_BYTES = 256 * 1024
"""Agent files larger than this are refused unread."""

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
_MODES: tuple[AgentMode, ...] = ("inherit", "plan")


class AgentDefinitionError(SkillError):
    """An agent file is not a usable definition; ``errors`` holds one `Diagnostic` per
    problem and ``str()`` is one line each."""


@dataclass(frozen=True)
class AgentDefinition:
    """One child agent.

    ``tools`` are the tools the child may use (None: every tool of the parent except
    ``task``; a child never gets ``task``): names (of the parent's tools, or of the tools
    `Subagents` was given for children) and, from code, `Tool` objects of the child's own,
    which the parent's model is never offered. A list becomes a tuple. ``model`` None means
    the parent's model. ``mode`` ``plan`` makes the child read-only (every call the
    permission gate does not count as a read is refused); ``inherit`` judges the child's
    calls exactly as the parent's. ``skills`` are skill names whose instructions open the
    child's system prompt. ``max_turns`` bounds the model calls of one child run (None: the
    parent's limit). ``handoff_to`` names the agents it may hand the conversation on to
    when it answers the user after a handoff (`Subagents.handoff`; the main agent by its
    ``agent_id``, ``main`` by default). ``prompt`` is the file's body, the child's system
    prompt. ``location`` is the file (None for built-in and programmatic definitions);
    ``source`` says where it came from: ``builtin``, ``project``, ``user``, ``plugin`` or
    ``code``.
    """

    name: str
    description: str
    prompt: str = ""
    tools: tuple[str | Tool, ...] | None = None
    model: str | None = None
    mode: AgentMode = "inherit"
    skills: tuple[str, ...] = ()
    max_turns: int | None = None
    location: Path | None = None
    source: str = "code"
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)
    handoff_to: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.tools is not None and not isinstance(self.tools, tuple):
            object.__setattr__(self, "tools", tuple(self.tools))
        if not isinstance(self.handoff_to, tuple):
            object.__setattr__(self, "handoff_to", tuple(self.handoff_to))
        for item in self.tools or ():
            if not isinstance(item, str) and not isinstance(getattr(item, "name", None), str):
                raise TypeError(f"agent tools must be names or tools, got {item!r}")
        if not _NAME.fullmatch(self.name) or len(self.name) > _MAX_NAME:
            raise ValueError(
                f"agent name must be lowercase letters, digits and single hyphens "
                f"(at most {_MAX_NAME} characters), got {self.name!r}"
            )
        if not self.description.strip():
            raise ValueError(f"agent {self.name!r} needs a description")
        if self.mode not in _MODES:
            raise ValueError(f"agent mode must be one of {', '.join(_MODES)}, got {self.mode!r}")
        if self.max_turns is not None and self.max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {self.max_turns}")

    def allows(self, tool_name: str) -> bool:
        """Whether the child may be offered the tool ``tool_name`` (never ``task``)."""
        if tool_name == "task":
            return False
        return self.tools is None or tool_name in self.tool_names

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of ``tools`` (empty when None)."""
        return tuple(t if isinstance(t, str) else t.name for t in self.tools or ())

    @property
    def own_tools(self) -> tuple[Tool, ...]:
        """The `Tool` objects among ``tools`` (the child's own)."""
        return tuple(t for t in self.tools or () if not isinstance(t, str))

    def summary(self) -> dict[str, Any]:
        """The definition as JSON data (for ``skillkit agents list --json``)."""
        return {
            "name": self.name,
            "description": self.description,
            "tools": list(self.tool_names) if self.tools is not None else None,
            "model": self.model,
            "mode": self.mode,
            "skills": list(self.skills),
            "max_turns": self.max_turns,
            "handoff_to": list(self.handoff_to),
            "source": self.source,
            "location": str(self.location) if self.location is not None else None,
        }


GENERAL_PURPOSE = AgentDefinition(
    name="general-purpose",
    description=(
        "A general agent for research and multi-step tasks: searching code, reading "
        "files, running commands. Use it to explore without filling your own context; "
        "it returns one answer."
    ),
    prompt=(
        "You are a general-purpose agent working on one task for another agent. Use "
        "the tools you have to find what is asked, then answer completely and "
        "concisely: your final message is all the other agent will see."
    ),
    source="builtin",
)
"""The built-in agent every session has (a file named ``general-purpose`` replaces it)."""


def parse_agent_file(path: str | os.PathLike[str], *, source: str = "code") -> AgentDefinition:
    """Read and check one agent file. Raises `AgentDefinitionError` only."""
    where = Path(path)
    findings = Findings(str(where), strict=False)
    try:
        size = where.stat().st_size
        if size > MAX_AGENT_FILE_BYTES:
            findings.error("file", f"is too large ({size} bytes; at most {MAX_AGENT_FILE_BYTES})")
            _raise(findings)
        data = where.read_bytes()
    except OSError as exc:
        findings.error("file", f"cannot be read ({exc.strerror or type(exc).__name__})")
        _raise(findings)
    return parse_agent_bytes(data, where, source=source)


def parse_agent_bytes(
    data: bytes, location: str | os.PathLike[str], *, source: str = "code"
) -> AgentDefinition:
    """Check the content of an agent file that lives at ``location``. Raises
    `AgentDefinitionError` (every problem found, one line each)."""
    where = Path(location)
    findings = Findings(str(where), strict=False)
    try:
        text = decode_text(data, findings)
        frontmatter, body = split_frontmatter(text, findings)
        raw, _ = load_frontmatter(frontmatter, findings)
    except AgentDefinitionError:
        raise
    except SkillError as exc:
        raise AgentDefinitionError(exc.errors) from None
    fields = {str(k): v for k, v in raw.items()}
    name = _name(fields.get("name"), findings)
    description = _text(fields, "description", findings, required=True, limit=_MAX_DESCRIPTION)
    tools = _names(fields, "tools", findings)
    model = _text(fields, "model", findings)
    if model == "inherit":
        model = None
    mode = _mode(fields.get("mode"), findings)
    skills = _names(fields, "skills", findings)
    max_turns = _turns(fields.get("max_turns"), findings)
    handoff_to = _names(fields, "handoff_to", findings)
    for key in fields:
        if key not in AGENT_FIELDS:
            findings.warning(key, f"unknown field, ignored (known: {', '.join(AGENT_FIELDS)})")
    if findings.errors:
        _raise(findings)
    assert name is not None and description is not None
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body,
        tools=tools,
        model=model,
        mode=mode,
        skills=skills or (),
        max_turns=max_turns,
        handoff_to=handoff_to or (),
        location=where,
        source=source,
        warnings=tuple(findings.warnings),
    )


def _raise(findings: Findings) -> NoReturn:
    raise AgentDefinitionError(findings.errors)


def _name(value: object, findings: Findings) -> str | None:
    if value is None:
        findings.error("name", "is required")
        return None
    if not isinstance(value, str):
        findings.error("name", f"must be text (got {kind(value)})")
        return None
    if len(value) > _MAX_NAME:
        findings.error("name", f"must be at most {_MAX_NAME} characters (got {len(value)})")
        return None
    if not _NAME.fullmatch(value):
        findings.error(
            "name", f"must be lowercase letters, digits and single hyphens (got {value!r})"
        )
        return None
    return value


def _text(
    fields: Mapping[str, Any],
    key: str,
    findings: Findings,
    *,
    required: bool = False,
    limit: int = 1024,
) -> str | None:
    value = fields.get(key)
    if value is None:
        if required:
            findings.error(key, "is required")
        return None
    if not isinstance(value, str):
        findings.error(key, f"must be text (got {kind(value)})")
        return None
    text = " ".join(value.split())
    if not text:
        if required:
            findings.error(key, "must not be empty")
        return None
    if len(text) > limit:
        findings.error(key, f"must be at most {limit} characters (got {len(text)})")
        return None
    return text


def _names(fields: Mapping[str, Any], key: str, findings: Findings) -> tuple[str, ...] | None:
    """A list of names, written as a YAML list or as comma-separated text."""
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        items: list[object] = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, list):
        items = list(value)
    else:
        findings.error(key, f"must be a list of names or comma-separated text (got {kind(value)})")
        return None
    names: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            findings.error(f"{key}[{index}]", f"must be a name (got {kind(item)})")
            continue
        name = item.strip()
        if name not in names:
            names.append(name)
    return tuple(names)


def _mode(value: object, findings: Findings) -> AgentMode:
    if value is None:
        return "inherit"
    if value not in _MODES:
        shown = value if isinstance(value, str) else kind(value)
        findings.error(
            "mode",
            f"must be inherit or plan (got {shown!r}); a child never has more rights "
            "than its parent",
        )
        return "inherit"
    return "plan" if value == "plan" else "inherit"


def _turns(value: object, findings: Findings) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        shown = value if isinstance(value, int) and not isinstance(value, bool) else kind(value)
        findings.error("max_turns", f"must be a whole number of at least 1 (got {shown})")
        return None
    return value
