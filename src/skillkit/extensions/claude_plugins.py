"""Claude Code plugins read as they are: a folder with ``.claude-plugin/plugin.json``.

What a plugin folder may hold, and what SkillKit makes of it:

- ``skills/<name>/SKILL.md`` — skills (a plugin skill source);
- ``agents/*.md`` — child agents, read as leniently as Claude Code reads them: front
  matter that strict YAML rejects is read line by line (``key: value``), descriptions
  longer than SkillKit's limit are cut (and said), ``tools: Read, Grep`` become
  SkillKit's tool names, a Claude model alias (``sonnet``) means the parent's model;
- ``commands/*.md`` — slash commands: the body, with ``$ARGUMENTS`` (and ``$1``...)
  replaced, is sent to the agent as the user's message; ``description`` and
  ``argument-hint`` show in ``/help``;
- ``hooks/hooks.json`` — shell hooks (`skillkit.hooks`), ``${CLAUDE_PLUGIN_ROOT}`` set
  in the hook's environment (the shell expands it: never pasted into the command);
- ``.mcp.json`` — MCP servers, ``${CLAUDE_PLUGIN_ROOT}`` replaced.

Names: a plugin's command or agent keeps its own name unless another plugin (or an
earlier registration) has it; then it is ``plugin:name`` for commands and
``plugin-name`` for agents (agent names are lowercase words and hyphens). What cannot be
honoured (a tool SkillKit lacks, an option it does not support) is collected per plugin
and said in one line each (`ClaudePlugin.notes`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from skillkit.commands.dispatch import Command, CommandContext, CommandResult
from skillkit.extensions.hookspecs import hookimpl
from skillkit.extensions.plugin_folders import plugin_roots
from skillkit.hooks.config import HookConfig, parse_hooks
from skillkit.hooks.names import CLAUDE_NAMES, skillkit_name

if TYPE_CHECKING:
    from skillkit.commands.dispatch import CommandRegistry
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents import AgentRegistry

__all__ = [
    "LOCK_FILE",
    "MANIFEST",
    "ClaudePlugin",
    "MarkdownCommand",
    "PluginAgent",
    "content_hash",
    "find_plugins",
    "is_plugin",
    "plugin_roots",
    "read_plugin",
    "register_plugins",
]

MANIFEST = Path(".claude-plugin") / "plugin.json"
LOCK_FILE = "plugins.lock.json"
"""The lock file of an install root (`skillkit.extensions.installer`)."""
_ROOT = "${CLAUDE_PLUGIN_ROOT}"
_MAX_DESCRIPTION = 1024
_AGENT_NAME = re.compile(r"[^a-z0-9]+")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_CLAUDE_TOOL_NAMES = frozenset(CLAUDE_NAMES.values()) | {"MultiEdit"}


@dataclass(frozen=True)
class MarkdownCommand:
    """A Markdown slash command: its name, ``description``, ``argument-hint`` and body."""

    name: str
    description: str
    body: str
    argument_hint: str = ""

    def prompt(self, arguments: str) -> str:
        """The body with ``$ARGUMENTS`` and ``$1``.. ``$9`` filled in."""
        words = arguments.split()
        text = self.body.replace("$ARGUMENTS", arguments)
        return re.sub(
            r"\$([1-9])",
            lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "",
            text,
        )


@dataclass(frozen=True)
class PluginAgent:
    """An agent file as read: name, description, prompt, SkillKit tool names (None: all),
    and the file."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None
    path: Path


@dataclass
class ClaudePlugin:
    """One plugin folder as read (see the module docs). ``notes`` are one-line things
    not honoured; ``problems`` files that could not be read."""

    name: str
    root: Path
    version: str = ""
    description: str = ""
    scope: str = "user"
    skills: Path | None = None
    agents: list[PluginAgent] = field(default_factory=list)
    commands: list[MarkdownCommand] = field(default_factory=list)
    hooks: HookConfig = field(default_factory=HookConfig)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line: what the plugin adds (for notes and trust prompts)."""
        parts = []
        if self.skills is not None:
            parts.append("skills")
        if self.agents:
            parts.append(f"{len(self.agents)} agent(s)")
        if self.commands:
            parts.append(f"{len(self.commands)} command(s)")
        if self.hooks.hooks:
            parts.append(f"{len(self.hooks.hooks)} hook(s)")
        if self.mcp_servers:
            parts.append(f"{len(self.mcp_servers)} MCP server(s)")
        return f"{self.name}: " + (", ".join(parts) or "nothing")


def is_plugin(folder: Path) -> bool:
    """Whether ``folder`` is a Claude Code plugin (it has ``.claude-plugin/plugin.json``)."""
    return (folder / MANIFEST).is_file()


def _frontmatter(text: str) -> tuple[dict[str, Any], str, bool]:
    """(fields, body, lenient): strict YAML first; front matter YAML rejects is read as
    ``key: value`` lines (an indented line continues the value before it)."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, text, False
    raw, body = match.group(1), text[match.end() :]
    try:
        data = yaml.safe_load(raw)
        if isinstance(data, dict):
            return {str(k): v for k, v in data.items()}, body, False
    except yaml.YAMLError:
        pass
    fields: dict[str, Any] = {}
    last: str | None = None
    for line in raw.splitlines():
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if colon and not line[:1].isspace() and re.fullmatch(r"[A-Za-z_][\w-]*", key.strip()):
            last = key.strip()
            fields[last] = value.strip()
        elif last is not None:
            fields[last] = f"{fields[last]} {line.strip()}".strip()
    return fields, body, True


def _text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    return str(value)


def _tool_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t).strip() for t in value if str(t).strip()]
    return []


def _read_agent(path: Path, plugin: ClaudePlugin) -> PluginAgent | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        plugin.problems.append(f"{path}: cannot read: {exc}")
        return None
    fields, body, lenient = _frontmatter(text)
    where = f"agent {path.stem}"
    if lenient:
        plugin.notes.append(f"{where}: front matter is not valid YAML; read line by line")
    name = _AGENT_NAME.sub("-", _text(fields.get("name")).lower() or path.stem.lower()).strip("-")
    description = _text(fields.get("description"))
    if not name or not description:
        plugin.problems.append(f"{path}: an agent needs a name and a description")
        return None
    if len(description) > _MAX_DESCRIPTION:
        plugin.notes.append(
            f"{where}: description cut to {_MAX_DESCRIPTION} of {len(description)} characters"
        )
        description = description[: _MAX_DESCRIPTION - 1] + "…"
    tools: tuple[str, ...] | None = None
    if "tools" in fields:
        names = []
        for tool in _tool_list(fields["tools"]):
            own = skillkit_name(tool)
            if tool not in _CLAUDE_TOOL_NAMES and not tool.startswith("mcp__"):
                # said, and left out: a child asking for a tool nobody has would not start
                plugin.notes.append(f"{where}: tool {tool!r} is not a SkillKit tool; left out")
                continue
            names.append(own)
        tools = tuple(names)
    model = _text(fields.get("model"))
    if model and model != "inherit":
        plugin.notes.append(f"{where}: model {model!r} not honoured (the parent's model is used)")
    for key in sorted(set(fields) - {"name", "description", "tools", "model", "color"}):
        plugin.notes.append(f"{where}: field {key!r} ignored")
    return PluginAgent(name, description, body.strip(), tools, path)


def _read_command(path: Path, plugin: ClaudePlugin, name: str) -> MarkdownCommand | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        plugin.problems.append(f"{path}: cannot read: {exc}")
        return None
    fields, body, _ = _frontmatter(text)
    where = f"command /{name}"
    if fields.get("allowed-tools"):
        plugin.notes.append(
            f"{where}: allowed-tools not honoured (SkillKit's permission rules apply)"
        )
    model = _text(fields.get("model"))
    if model:
        plugin.notes.append(f"{where}: model {model!r} not honoured (the session's model is used)")
    if re.search(r"!`[^`]+`", body):
        plugin.notes.append(f"{where}: !`command` lines are not run (sent as text)")
    description = _text(fields.get("description")) or body.strip().split("\n", 1)[0][:80]
    return MarkdownCommand(
        name=name,
        description=description or f"/{name} from plugin {plugin.name}",
        body=body.strip(),
        argument_hint=_text(fields.get("argument-hint")),
    )


def _command_name(path: Path, commands: Path) -> str:
    parts = path.relative_to(commands).with_suffix("").parts
    return ":".join(p.lower().replace(" ", "-") for p in parts)


def _substitute(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(_ROOT, root)
    if isinstance(value, list):
        return [_substitute(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, root) for k, v in value.items()}
    return value


def _json(path: Path, plugin: ClaudePlugin) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        plugin.problems.append(f"{path}: {exc}")
        return None


def read_plugin(folder: str | os.PathLike[str], *, scope: str = "user") -> ClaudePlugin:
    """Read the plugin in ``folder`` (see the module docs). Never raises: what cannot be
    read is in ``problems``, what is not honoured in ``notes``."""
    root = Path(os.path.abspath(folder))
    plugin = ClaudePlugin(name=root.name, root=root, scope=scope)
    manifest = _json(root / MANIFEST, plugin) if (root / MANIFEST).is_file() else {}
    if isinstance(manifest, Mapping):
        plugin.name = _text(manifest.get("name")) or root.name
        plugin.version = _text(manifest.get("version"))
        plugin.description = _text(manifest.get("description"))
        for key in ("commands", "agents", "hooks", "mcpServers"):
            if key in manifest:
                plugin.notes.append(
                    f"plugin.json {key!r}: custom paths not supported "
                    "(the default folders are read)"
                )
    text_root = str(root)
    if (root / "skills").is_dir():
        plugin.skills = root / "skills"
    if (root / "agents").is_dir():
        for path in sorted((root / "agents").glob("*.md")):
            agent = _read_agent(path, plugin)
            if agent is not None:
                plugin.agents.append(agent)
    commands = root / "commands"
    if commands.is_dir():
        for path in sorted(commands.rglob("*.md")):
            command = _read_command(path, plugin, _command_name(path, commands))
            if command is not None:
                plugin.commands.append(command)
    hooks_file = root / "hooks" / "hooks.json"
    if hooks_file.is_file():
        data = _json(hooks_file, plugin)
        section = data.get("hooks", data) if isinstance(data, Mapping) else data
        if section is not None:
            plugin.hooks = parse_hooks(
                section, source=f"plugin:{plugin.name}", path=str(hooks_file), plugin_root=text_root
            )
    mcp_file = root / ".mcp.json"
    if mcp_file.is_file():
        data = _json(mcp_file, plugin)
        servers = data.get("mcpServers", data) if isinstance(data, Mapping) else None
        if isinstance(servers, Mapping):
            plugin.mcp_servers = _substitute(dict(servers), text_root)
    plugin.notes.extend(plugin.hooks.unsupported)
    plugin.problems.extend(plugin.hooks.problems)
    return plugin


def find_plugins(
    workspace: str | os.PathLike[str],
    *,
    trusted: bool,
    home: str | os.PathLike[str] | None = None,
    disabled: Iterable[str] = (),
) -> tuple[list[ClaudePlugin], list[str]]:
    """The plugin folders under `plugin_roots` (a project's only when ``trusted``),
    less the ``disabled`` names; and one line per plugin folder left out. An installed
    plugin (named in its root's lock file with a hash) whose files no longer match that
    hash is left out, and so is every plugin of a root whose lock file cannot be read
    (fail closed: an edited lock file or plugin folder loads nothing)."""
    found: list[ClaudePlugin] = []
    skipped: list[str] = []
    off = set(disabled)
    seen: set[str] = set()
    for root, scope in plugin_roots(workspace, home):
        if not root.is_dir():
            continue
        lock = _lock_entries(root)
        if lock is None:
            skipped.append(f"the plugins in {root} (its {LOCK_FILE} cannot be read)")
            continue
        off_here = off | {name for name, entry in lock.items() if entry.get("enabled") is False}
        for folder in sorted(root.iterdir()):
            real = os.path.realpath(folder)
            if real in seen or not folder.is_dir() or not is_plugin(folder):
                continue
            seen.add(real)
            if scope == "project" and not trusted:
                skipped.append(f"plugin {folder.name} (the project is not trusted)")
                continue
            recorded = lock.get(folder.name, {}).get("hash")
            if isinstance(recorded, str) and recorded and content_hash(folder) != recorded:
                skipped.append(
                    f"plugin {folder.name} (its files differ from the hash in {LOCK_FILE}:"
                    f" install it again to accept them)"
                )
                continue
            plugin = read_plugin(folder, scope=scope)
            if plugin.name in off_here:
                skipped.append(f"plugin {plugin.name} (disabled)")
                continue
            found.append(plugin)
    return found, skipped


def _lock_entries(root: Path) -> dict[str, dict[str, Any]] | None:
    """The entries of ``root``'s lock file: {} when there is none, None when it cannot
    be read (then no installed plugin of ``root`` is loaded)."""
    try:
        text = (root / LOCK_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    try:
        entries = json.loads(text)["plugins"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in entries.values()):
        return None
    return {str(name): entry for name, entry in entries.items()}


def content_hash(folder: Path) -> str:
    """sha256 over every file's relative path and bytes, and every symlink's target
    (``.git`` and ``__pycache__`` left out): what the lock file records and
    `find_plugins` checks."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if ".git" in relative.parts or "__pycache__" in relative.parts:
            continue  # (a Python hook's imports leave caches behind)
        if path.is_symlink():
            digest.update(str(relative).encode() + b"\0->" + os.readlink(path).encode() + b"\0")
        elif path.is_file():
            digest.update(str(relative).encode() + b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


# --------------------------------------------------------------------------- registering


class _PluginAdapter:
    """A Claude Code plugin as a pluggy plugin: it registers the skills, commands and
    agents it has; ``taken`` holds the command and agent names in use (for namespacing)."""

    def __init__(self, plugin: ClaudePlugin, taken: dict[str, set[str]]) -> None:
        self.plugin = plugin
        self.taken = taken

    @hookimpl
    def skillkit_register_skills(self, registry: SkillRegistry) -> None:
        if self.plugin.skills is not None:
            registry.add_source(self.plugin.skills, scope="plugin")

    @hookimpl
    def skillkit_register_commands(self, registry: CommandRegistry) -> None:
        for command in self.plugin.commands:
            name = command.name
            if name in self.taken["commands"] or name in registry:
                name = f"{_slug(self.plugin.name)}:{command.name}"
            self.taken["commands"].add(name)
            usage = command.argument_hint
            registry.register(
                Command(name, command.description, _send(command), usage=usage),
                source=f"plugin {self.plugin.name}",
            )

    @hookimpl
    def skillkit_register_agents(self, registry: AgentRegistry) -> None:
        from skillkit.subagents import AgentDefinition

        for agent in self.plugin.agents:
            name = agent.name
            if name in self.taken["agents"] or registry.get(name) is not None:
                name = f"{_slug(self.plugin.name)}-{agent.name}"
            self.taken["agents"].add(name)
            registry.register(
                AgentDefinition(
                    name=name,
                    description=agent.description,
                    prompt=agent.prompt,
                    tools=agent.tools,
                    location=agent.path,
                    source="plugin",
                ),
                replace=True,
            )


def _slug(name: str) -> str:
    return _AGENT_NAME.sub("-", name.lower()).strip("-") or "plugin"


def _send(command: MarkdownCommand) -> Any:
    def handler(ctx: CommandContext, args: str) -> CommandResult:
        return CommandResult(send=command.prompt(args.strip()))

    return handler


def register_plugins(manager: Any, plugins: Sequence[ClaudePlugin]) -> list[str]:
    """Register each plugin with ``manager`` (a `PluginManager`) as ``claude:<name>``;
    one line per plugin for what it could not honour or read."""
    taken: dict[str, set[str]] = {"commands": set(), "agents": set()}
    lines: list[str] = []
    for plugin in plugins:
        manager.register(
            _PluginAdapter(plugin, taken),
            name=f"claude:{plugin.name}",
            origin=plugin.scope,
            version=plugin.version or None,
            location=str(plugin.root),
        )
        said = [*plugin.problems, *plugin.notes]
        if said:
            lines.append(f"plugin {plugin.name}: " + "; ".join(said))
    return lines
