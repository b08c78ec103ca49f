"""The ``skill`` tool: how the model loads a skill's instructions (or one of its files).

Offered only while at least one skill is visible to the model; its ``name`` argument is
an enum of exactly those skills, so the model cannot ask for one that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillkit.skills.prompt import SKILL_TOOL_NAME

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.skills.loader import Skill
    from skillkit.tools.base import ToolContext, ToolResult

__all__ = ["MAX_FILE_BYTES", "SkillTool"]

MAX_FILE_BYTES = 64 * 1024


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
    ) -> None:
        from pydantic import ConfigDict, Field, create_model

        self.name = SKILL_TOOL_NAME
        self.description = (
            "Load a skill's full instructions by name (see <available_skills>). "
            "Give `path` to read one of the skill's own files instead (a path relative "
            "to the skill folder, as listed in <skill_resources>)."
        )
        self._lookup = lookup
        self._render = render
        choice: Any = Literal[tuple(names)]
        self.args_model: type[BaseModel] = create_model(
            "SkillArgs",
            __config__=ConfigDict(extra="forbid"),
            name=(choice, Field(description="The skill to load")),
            path=(
                str | None,
                Field(None, description="A file of the skill, relative to its folder"),
            ),
        )

    def __repr__(self) -> str:
        return "<skill tool>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        from skillkit.tools.base import ToolError, ToolResult

        skill = self._lookup(args.name)
        if skill is None:
            raise ToolError(f"skill '{args.name}' is no longer available")
        if not args.path:
            return ToolResult.text(self._render(skill), details={"skill": skill.name})
        return ToolResult.text(
            _read_companion(skill, args.path),
            details={"skill": skill.name, "path": args.path},
        )


def _read_companion(skill: Skill, relative: str) -> str:
    from skillkit.tools.base import ToolError

    root = skill.base_dir.resolve()
    target = (skill.base_dir / relative).resolve()
    if Path(relative).is_absolute() or root not in target.parents:
        raise ToolError(f"'{relative}' is not inside the folder of skill '{skill.name}'")
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
