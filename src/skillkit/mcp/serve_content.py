"""What ``skillkit mcp serve`` offers besides tools: the skills' files as resources
(``skill://<skill>/<path>``) and the user-invocable skills as prompts (what
``/skill:NAME ARGS`` would send), and the MCP handlers that serve them
(`content_handlers`). The ``mcp`` SDK is imported only when they are used."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

__all__ = [
    "MAX_RESOURCES_PER_SKILL",
    "MAX_RESOURCE_BYTES",
    "Content",
    "SkillFiles",
    "content_handlers",
    "prompt_of",
    "prompts_of",
    "read_resource",
    "resources_of",
]

MAX_RESOURCE_BYTES = 1_000_000
"""A skill file larger than this is not offered as a resource."""
MAX_RESOURCES_PER_SKILL = 200
"""At most this many files of one skill are offered."""

_SCHEME = "skill://"


class SkillFiles(Protocol):
    """What the resources need of a skill (``skillkit.skills.Skill``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def location(self) -> Path: ...


class Content(Protocol):
    """What the handlers serve (a `skillkit.mcp.serve.SkillServer`)."""

    def prompts(self) -> list[Any]: ...

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None) -> Any: ...

    def resources(self) -> list[Any]: ...

    def read_resource(self, uri: str) -> Any: ...


Prompt = Callable[[str, str], str]
"""A skill's prompt text from its name and arguments (``SkillRegistry.activation_message``)."""


def prompts_of(skills: Sequence[SkillFiles], prompt: Prompt | None) -> list[Any]:
    """The user-invocable ``skills`` as ``mcp_types.Prompt`` (none without ``prompt``)."""
    import mcp_types as types

    if prompt is None:
        return []
    return [
        types.Prompt(
            name=skill.name,
            description=skill.description,
            arguments=[
                types.PromptArgument(
                    name="arguments",
                    description="what to do with the skill (as after /skill:NAME)",
                    required=False,
                )
            ],
        )
        for skill in skills
        if getattr(skill, "user_invocable", True)
    ]


def prompt_of(
    skills: Sequence[SkillFiles],
    prompt: Prompt | None,
    name: str,
    arguments: Mapping[str, str] | None,
) -> Any:
    """Skill ``name``'s prompt as one user message; raises `LookupError` for a skill
    that is not offered as a prompt."""
    import mcp_types as types

    offered = {p.name for p in prompts_of(skills, prompt)}
    if prompt is None or name not in offered:
        raise LookupError(f"unknown prompt: {name}")
    text = prompt(name, (arguments or {}).get("arguments", "") or "")
    return types.GetPromptResult(
        description=next(s.description for s in skills if s.name == name),
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


def resources_of(skills: Sequence[SkillFiles]) -> list[Any]:
    """The skills' files, as ``mcp_types.Resource``."""
    import mcp_types as types

    out: list[Any] = []
    for skill in skills:
        for path, relative in _skill_files(skill):
            mime, _ = mimetypes.guess_type(path.name)
            out.append(
                types.Resource(
                    uri=_uri(skill.name, relative),
                    name=f"{skill.name}/{relative}",
                    description=skill.description if relative == path.name else None,
                    mime_type=mime or "text/plain",
                    size=path.stat().st_size,
                )
            )
    return out


def read_resource(skills: Sequence[SkillFiles], uri: str) -> Any:
    """The contents of resource ``uri``; raises `LookupError` for one not offered."""
    import mcp_types as types

    path = _resource_path(skills, uri)
    data = path.read_bytes()
    mime, _ = mimetypes.guess_type(path.name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        blob = base64.b64encode(data).decode("ascii")
        return types.ReadResourceResult(
            contents=[
                types.BlobResourceContents(
                    uri=uri, blob=blob, mime_type=mime or "application/octet-stream"
                )
            ]
        )
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=text, mime_type=mime or "text/plain")]
    )


def content_handlers(server: Content) -> dict[str, Any]:
    """The low-level server's handlers of resources, resource templates (none) and
    prompts, as keyword arguments of ``mcp.server.lowlevel.server.Server``."""
    import mcp_types as types

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=server.resources())

    async def read(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return server.read_resource(str(params.uri))
        except (LookupError, OSError) as exc:
            raise MCPError(code=-32002, message=str(exc)) from None

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=server.prompts())

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return server.get_prompt(params.name, params.arguments)
        except LookupError as exc:
            raise MCPError(code=-32602, message=str(exc.args[0] if exc.args else exc)) from None

    return {
        "on_list_prompts": list_prompts,
        "on_get_prompt": get_prompt,
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_resource_templates,
        "on_read_resource": read,
    }


def _resource_path(skills: Sequence[SkillFiles], uri: str) -> Path:
    if not uri.startswith(_SCHEME):
        raise LookupError(f"unknown resource: {uri}")
    skill_name, _, relative = uri[len(_SCHEME) :].partition("/")
    skill_name, relative = unquote(skill_name), unquote(relative)
    for skill in skills:
        if skill.name != skill_name:
            continue
        for path, rel in _skill_files(skill):
            if rel == relative:
                return path
    raise LookupError(f"unknown resource: {uri}")


def _uri(skill: str, relative: str) -> str:
    return f"{_SCHEME}{quote(skill, safe='')}/{quote(relative)}"


def _skill_files(skill: SkillFiles) -> list[tuple[Path, str]]:
    """The files of ``skill``'s folder offered as resources: regular files (no links
    leaving it), no hidden ones, at most `MAX_RESOURCES_PER_SKILL`, none larger than
    `MAX_RESOURCE_BYTES`; with their paths relative to the folder."""
    location = Path(skill.location)
    root = location.parent if location.is_file() else location
    try:
        base = root.resolve()
    except OSError:
        return []
    out: list[tuple[Path, str]] = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        try:
            if not path.is_file() or path.stat().st_size > MAX_RESOURCE_BYTES:
                continue
            if not path.resolve().is_relative_to(base):
                continue
        except OSError:
            continue
        out.append((path, relative.as_posix()))
        if len(out) >= MAX_RESOURCES_PER_SKILL:
            break
    return out
