"""SkillKit's own commands (registered by the built-in plugin into the command table).

``/help``, ``/model``, ``/models``, ``/compact``, ``/clear``, ``/skills``, ``/skill``
(also ``/skill:NAME``), ``/cost``, ``/init``, ``/quit``, ``/todos``, and the session commands
``/tree``, ``/fork``, ``/name``, ``/label`` (`skillkit.commands.sessions`), the checkpoint
commands ``/rewind``, ``/undo``, ``/diff`` (`skillkit.commands.checkpoints`). Each is an
ordinary `Command`: a plugin replaces one by registering the same name with
``replace=True``. The commands about plugins (``/plugins``, ``/reload``) belong to the
plugin layer:
`skillkit.extensions.commands`.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from skillkit.commands.checkpoints import checkpoint_commands
from skillkit.commands.dispatch import (
    Argument,
    Command,
    CommandContext,
    CommandError,
    CommandRegistry,
    CommandResult,
)
from skillkit.commands.sessions import session_commands
from skillkit.commands.skills import skill_command, skills_command
from skillkit.commands.todos import todos_command

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skillkit.agent.runner import AgentRunner
    from skillkit.model_registry import ModelDefinition
    from skillkit.models import TokenUsage

__all__ = ["SESSION_GROUP", "builtin_commands"]

_MODELS_SHOWN = 25
_HELP_COLUMN = 24  # the widest synopsis /help puts beside its description
_HELP_WIDTH = 80  # /help wraps a group's line of commands to fit an 80-column terminal

SESSION_GROUP = "session"
"""The `Command.group` of the commands that drive the session (``/help`` lists them on
one line; they work the same over RPC and HTTP)."""


def _commands(ctx: CommandContext) -> CommandRegistry:
    if ctx.commands is not None:
        return ctx.commands
    registries = ctx.registries
    if registries is None:
        raise CommandError("no command registry in this session")
    return registries.commands


def _idle_runner(ctx: CommandContext) -> AgentRunner:
    return ctx.require_idle_runner()


def help_command(ctx: CommandContext, args: str) -> str:
    registry = _commands(ctx)
    wanted = args.strip().removeprefix("/")
    if wanted:
        command = registry.get(wanted)
        if command is None:
            raise CommandError(f"no command /{wanted}; /help lists the commands")
        lines = [f"/{command.name} {command.usage}".rstrip(), f"  {command.description}"]
        for argument in command.arguments or ():
            need = "" if argument.required else ", optional"
            lines.append(f"  {argument.name} ({argument.kind}{need}): {argument.help}".rstrip(": "))
        if command.aliases:
            lines.append("  also: " + ", ".join(f"/{a}" for a in command.aliases))
        source = registry.source_of(command.name)
        if source:
            lines.append(f"  from: {source}")
        return "\n".join(lines)
    commands = registry.list()
    entries = [(f"/{c.name} {c.usage}".rstrip(), c.description) for c in commands if not c.group]
    entries.append(
        ("!command", "run a shell command yourself; its output goes with your next prompt")
    )
    width = min(max((len(left) for left, _ in entries), default=0), _HELP_COLUMN)
    body: list[str] = []
    for left, text in entries:
        if len(left) > width:  # a long synopsis: its description on the next line
            body += [f"  {left}", f"  {'':<{width}}  {text}"]
        else:
            body.append(f"  {left.ljust(width)}  {text}")
    groups: dict[str, list[str]] = {}
    for command in commands:
        if command.group:
            groups.setdefault(command.group, []).append(f"/{command.name}")
    for group, names in groups.items():
        body += textwrap.wrap(
            " ".join(names),
            width=_HELP_WIDTH,
            initial_indent=f"  {group}: ",
            subsequent_indent=" " * (len(group) + 4),
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(["Commands:", *body, "Anything else is sent to the agent."])


async def model_command(ctx: CommandContext, args: str) -> str:
    """``/model``: show the model; ``/model NAME``: switch to an adapter registered as
    NAME or a new adapter for the model string NAME. Naming the model in use does
    nothing. Switching to a model string closes the adapter it leaves when that one was
    not a plugin's (a plugin's stays open for its owner; one left for a plugin's adapter
    stays open because the agent returns to it when the plugin goes away), so an
    embedded llama.cpp server never outlives its use. A provider without its API key
    fails before anything changes."""
    name = args.strip()
    if not name:
        runner = ctx.require_runner()
        adapter = runner.adapter
        model = runner.config.model or str(getattr(adapter, "model", "") or "?")
        lines = [f"model: {model} (provider: {adapter.provider})"]
        registries = ctx.registries
        if registries is not None and len(registries.adapters):
            lines.append("adapters: " + ", ".join(registries.adapters.list()))
        return "\n".join(lines)
    runner = _idle_runner(ctx)
    if name == runner.config.model:
        return f"already using model {name}"
    previous = runner.adapter
    registries = ctx.registries

    def registered(adapter: object) -> bool:
        return registries is not None and any(
            registries.adapters.get(known) is adapter for known in registries.adapters.list()
        )

    left_owned = not registered(previous)
    if ctx.manager is None:
        import msgspec

        from skillkit.adapters.factory import create_adapter

        try:
            adapter = create_adapter(
                msgspec.structs.replace(runner.config, model=name), models=runner.models
            )
        except (ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from None
        runner.set_adapter(adapter)
        runner.config = msgspec.structs.replace(runner.config, model=name)
        message = f"using model {name}"
    else:
        try:
            message = ctx.manager.switch_model(runner, name)
        except (ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from None
    # Leaving a plugin's adapter for ours, the agent returns to it if the plugin goes
    # away; leaving ours for a model string, nothing ever returns to it.
    if runner.adapter is not previous and left_owned and not registered(runner.adapter):
        await previous.aclose()
    return message


def models_command(ctx: CommandContext, args: str) -> str:
    from skillkit.model_registry import default_registry

    lines: list[str] = []
    registries = ctx.registries
    if registries is not None and len(registries.adapters):
        lines.append("Adapters (use with /model NAME):")
        for name in registries.adapters.list():
            lines.append(f"  {name}  (from {registries.adapters.source_of(name) or 'code'})")
    models = ctx.runner.models if ctx.runner is not None else default_registry()
    found = models.find(args.strip())
    if found:
        lines.append("Models:" if not args.strip() else f"Models matching '{args.strip()}':")
        for model in found[:_MODELS_SHOWN]:
            window = f"{model.context_window // 1000}k"
            lines.append(f"  {model.provider}:{model.id}  ({window} context)")
        if len(found) > _MODELS_SHOWN:
            lines.append(f"  ... and {len(found) - _MODELS_SHOWN} more (narrow with /models QUERY)")
    elif args.strip():
        lines.append(f"no model matches '{args.strip()}'")
    return "\n".join(lines) if lines else "no models known"


async def compact_command(ctx: CommandContext, args: Mapping[str, object] | str) -> CommandResult:
    """``compact [INSTRUCTIONS]``: summarize the conversation now (idle only); the
    answer's data is ``tokens_before`` / ``tokens_after``. ``args`` are the checked
    values (``instructions``), or the text typed after the name."""
    text = args if isinstance(args, str) else args.get("instructions")
    instructions = text.strip() if isinstance(text, str) else ""
    runner = _idle_runner(ctx)
    result = await runner.compact(instructions or None)
    if not result.ok:
        raise CommandError(f"compaction failed: {result.error or 'unknown reason'}")
    output = "compacted"
    if result.tokens_before:
        output = f"compacted: about {result.tokens_before} -> {result.tokens_after} tokens"
    return CommandResult(
        output=output,
        data={"tokens_before": result.tokens_before, "tokens_after": result.tokens_after},
    )


def clear_command(ctx: CommandContext, args: str) -> str:
    _idle_runner(ctx).clear()
    return "conversation cleared"


def cost_command(ctx: CommandContext, args: str) -> str:
    runner = ctx.require_runner()
    usage = runner.usage
    tokens = f"tokens: {usage.input} in, {usage.output} out"
    if usage.cache_read or usage.cache_write:
        tokens += f", {usage.cache_read} cache read, {usage.cache_write} cache write"
    model = _model_definition(runner)
    # Child agents' tokens are priced at their own models (what their calls reported);
    # the rest at this agent's model.
    spent = runner.roles.spent  # what child agents spent, at their own models' prices
    children = spent.usage
    own = _minus(usage, children)
    cost = runner.cost(own) if runner.cost is not None else None
    if cost is None and model is not None:
        cost = model.cost.cost_of(own)
    if cost is not None and children.total:
        cost = None if spent.cost is None else cost + spent.cost
    priced = (
        f"cost: ${cost:.4f}" if cost is not None else "cost: unknown (no prices for this model)"
    )
    lines = [tokens, priced]
    if usage.cache_read:
        lines.append(_cache_line(usage, model))
    return "\n".join(lines)


def _minus(usage: TokenUsage, part: TokenUsage) -> TokenUsage:
    """``usage`` without ``part`` (field by field, never below zero)."""
    if not part.total:
        return usage
    from skillkit.models import TokenUsage

    return TokenUsage(
        input=max(0, usage.input - part.input),
        output=max(0, usage.output - part.output),
        cache_read=max(0, usage.cache_read - part.cache_read),
        cache_write=max(0, usage.cache_write - part.cache_write),
    )


def _model_definition(runner: AgentRunner) -> ModelDefinition | None:
    """The definition of the runner's model: its own, else the catalog's entry for the
    configured model, else for the adapter's provider and model."""
    if runner.config.model_definition is not None:
        return runner.config.model_definition
    registry = runner.models
    names = [runner.config.model]
    adapter = runner.adapter
    adapter_model = str(getattr(adapter, "model", "") or "")
    if adapter_model:
        names.append(f"{adapter.provider}:{adapter_model}")
    for name in names:
        found = registry.get(name) if name else None
        if found is not None:
            return found
    return None


def _cache_line(usage: TokenUsage, model: ModelDefinition | None) -> str:
    """What caching saved: the cache reads priced at the input price minus their price
    as cache reads."""
    if model is None:
        return f"caching: {usage.cache_read} tokens read from cache (saving unknown: no prices)"
    rate_in, _, rate_read, _ = model.cost.rates_for(usage.prompt_tokens)
    saved = model.cost.cache_savings(usage)
    read = f"{usage.cache_read} tokens read from cache"
    if not rate_in:
        return f"caching: {read} (the model's input is free: nothing to save)"
    if rate_read >= rate_in:
        return f"caching: {read} (priced as input at ${rate_in:g}/M: nothing saved)"
    return f"caching saved: ${saved:.4f} ({read} at ${rate_read:g}/M instead of ${rate_in:g}/M)"


def init_command(ctx: CommandContext, args: str) -> str:
    """Write a starter ``AGENTS.md`` in the working directory (the one the agent's
    `ProjectInstructions` reads, else the process's); never overwrites a file."""
    import os

    from skillkit.instructions import ProjectInstructions, write_starter

    folder = os.getcwd()
    if ctx.runner is not None:
        for contributor in ctx.runner.contributors:
            if isinstance(contributor, ProjectInstructions):
                folder = str(contributor.cwd)
                break
    try:
        path = write_starter(folder)
    except FileExistsError:
        raise CommandError(
            f"{os.path.join(folder, 'AGENTS.md')} already exists; /init never overwrites it"
        ) from None
    except OSError as exc:
        raise CommandError(f"cannot write AGENTS.md: {exc.strerror or exc}") from None
    return f"wrote {path}: edit it to describe the project; it is read from the next turn on"


def quit_command(ctx: CommandContext, args: str) -> CommandResult:
    return CommandResult(quit=True)


def builtin_commands() -> list[Command]:
    """New `Command` values for SkillKit's own commands."""
    return [
        Command("help", "list the commands, or explain one", help_command, usage="[COMMAND]"),
        Command("model", "show the model, or switch to another", model_command, usage="[NAME]"),
        Command("models", "list the adapters and known models", models_command, usage="[QUERY]"),
        Command(
            "compact",
            "summarize the conversation to free context",
            compact_command,
            usage="[INSTRUCTIONS]",
            arguments=(Argument("instructions", rest=True, help="what the summary should keep"),),
        ),
        Command("clear", "forget the conversation", clear_command),
        Command("skills", "list the skills and whether each can be used", skills_command),
        Command(
            "skill",
            "use a skill (/skill:NAME ARGS), or run one of its actions (/skill:NAME ACTION ARGS)",
            skill_command,
            usage="NAME [ARGS]",
        ),
        Command("cost", "tokens used and their cost", cost_command),
        Command("init", "write a starter AGENTS.md for this project", init_command),
        Command("quit", "end the session", quit_command, aliases=("exit",)),
        todos_command(),
        *session_commands(),
        *checkpoint_commands(),
    ]
