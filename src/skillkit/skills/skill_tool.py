"""The ``skill`` tool: how the model loads a skill's instructions (or one of its files),
and finds a skill when the catalog is too large to list.

Offered only while at least one skill is visible to the model. While the catalog's
budget allows, its ``name`` argument is an enum of exactly those skills, so the model
cannot ask for one that does not exist; past it, ``name`` is free text (an unknown name
is answered with the closest names) and ``query`` searches names and descriptions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillkit.skills.prompt import SKILL_TOOL_NAME

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.skills.loader import Skill
    from skillkit.tools.base import ToolContext, ToolResult

__all__ = ["MAX_FILE_BYTES", "MAX_SEARCH_RESULTS", "SkillTool", "search_skills"]

MAX_FILE_BYTES = 64 * 1024
MAX_SEARCH_RESULTS = 20


def search_skills(
    skills: Sequence[Skill], query: str, limit: int = MAX_SEARCH_RESULTS
) -> list[Skill]:
    """The skills best matching ``query``: ranked by how many of its words occur in the
    name (counted twice) and the description, ties by name; skills matching no word are
    left out. Case-insensitive."""
    words = {w for w in query.lower().replace("-", " ").split() if w}
    if not words:
        return []
    scored: list[tuple[int, str, Skill]] = []
    for skill in skills:
        name = skill.name.lower()
        text = skill.description.lower()
        score = sum(2 * (w in name) + (w in text) for w in words)
        if score:
            scored.append((-score, skill.name, skill))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [skill for _, _, skill in scored[:limit]]


class SkillTool:
    """Returns the wrapped body of a skill, or the text of one of its companion files.

    ``lookup`` finds a visible skill by name; ``render`` wraps its body (see
    `render_skill_content`). Both come from the registry snapshot the tool was made for.
    """

    sequential = False
    read_only = True  # it only reads the skill's own files: a permission gate lets it run

    def __init__(
        self,
        names: Sequence[str],
        lookup: Callable[[str], Skill | None],
        render: Callable[[Skill], str],
        *,
        list_names: bool = True,
        skills: Callable[[], Sequence[Skill]] | None = None,
    ) -> None:
        from pydantic import ConfigDict, Field, create_model

        self.name = SKILL_TOOL_NAME
        self.description = (
            "Load a skill's full instructions by name (see <available_skills>). "
            "Give `path` to read one of the skill's own files instead (a path relative "
            "to the skill folder, as listed in <skill_resources>). Give `query` instead "
            "of `name` to search the skills' names and descriptions."
        )
        self._names = list(names)
        self._lookup = lookup
        self._render = render
        self._skills = skills
        choice: Any = Literal[tuple(names)] if list_names and names else str
        self.args_model: type[BaseModel] = create_model(
            "SkillArgs",
            __config__=ConfigDict(extra="forbid"),
            name=(choice | None, Field(None, description="The skill to load")),
            path=(
                str | None,
                Field(None, description="A file of the skill, relative to its folder"),
            ),
            query=(
                str | None,
                Field(None, description="Words to search skill names and descriptions for"),
            ),
        )

    def __repr__(self) -> str:
        return "<skill tool>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        from skillkit.tools.base import ToolError, ToolResult

        if not args.name:
            if not args.query:
                raise ToolError("give `name` (a skill to load) or `query` (words to search for)")
            return ToolResult.text(self._search(args.query), details={"query": args.query})
        skill = self._lookup(args.name)
        if skill is None:
            import difflib

            close = difflib.get_close_matches(args.name, self._names, n=5)
            hint = f"; closest names: {', '.join(close)}" if close else ""
            raise ToolError(f"no skill named '{args.name}' is available{hint}")
        if not args.path:
            return ToolResult.text(self._render(skill), details={"skill": skill.name})
        return ToolResult.text(
            _read_companion(skill, args.path),
            details={"skill": skill.name, "path": args.path},
        )

    def target_path(self, tool_input: Mapping[str, Any]) -> str | None:
        """The physical path a call would read (its ``path`` resolved in the real folder
        of the skill), so a permission gate judges file rules against the file actually
        read; None for a call that reads no companion file. Never raises."""
        name, relative = tool_input.get("name"), tool_input.get("path")
        if not isinstance(name, str) or not isinstance(relative, str) or not relative:
            return None
        try:
            skill = self._lookup(name)
            if skill is None:
                return None
            return os.path.realpath(os.path.join(os.path.realpath(skill.base_dir), relative))
        except (OSError, ValueError):
            return None

    def _search(self, query: str) -> str:
        skills = self._skills() if self._skills is not None else []
        found = search_skills(skills, query)
        if not found:
            return f"No skill matches '{query}'. Try other words."
        lines = [f"Skills matching '{query}' (load one with `name`):"]
        lines.extend(f"- {s.name}: {' '.join(s.description.split())}" for s in found)
        return "\n".join(lines)


def _read_companion(skill: Skill, relative: str) -> str:
    from skillkit.tools.base import ToolError

    if "\0" in relative or Path(relative).is_absolute():
        raise ToolError(f"'{relative}' is not inside the folder of skill '{skill.name}'")
    # judged where the kernel goes: the skill folder's real place, the file's real place
    root = Path(os.path.realpath(skill.base_dir))
    target = Path(os.path.realpath(root / relative))
    if root not in target.parents:
        raise ToolError(f"'{relative}' is not inside the folder of skill '{skill.name}'")
    shared = _shared_folder(root)
    if shared:
        raise ToolError(
            f"the folder of skill '{skill.name}' resolves to {root}, which holds {shared}: "
            "only a skill's own folder is read"
        )
    try:
        with target.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise ToolError(f"'{relative}' is a folder of skill '{skill.name}', not a file") from None
    except OSError as exc:
        raise ToolError(
            f"cannot read '{relative}' of skill '{skill.name}': {exc.strerror}"
        ) from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"'{relative}' of skill '{skill.name}' is a binary file")
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += f"\n[cut at {MAX_FILE_BYTES} bytes]"
    return text


def _shared_folder(root: Path) -> str:
    """What a skill folder's real place holds besides a skill — the home folder, the
    working folder, the whole file system — when a symbolic link made it one of those
    or one of their parents; "" for a skill's own folder."""
    for label, place in (("the home folder", Path.home()), ("the working folder", Path.cwd())):
        try:
            real = Path(os.path.realpath(place))
        except (OSError, ValueError):
            continue
        if real == root or root in real.parents:
            return label
    return "the whole file system" if root == Path(root.anchor) else ""
