"""Parsing and dispatching slash commands."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.commands import CommandContext, CommandError, CommandResult, parse_command
from skillkit.extensions import Command, CommandRegistry


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("/help", ("help", "")),
        ("  /HELP  ", ("help", "")),
        ("/model openai:gpt-4o", ("model", "openai:gpt-4o")),
        ("/skill:Review  src/app.py  --fast ", ("skill:Review", "src/app.py  --fast")),
        ("/compact keep the\nfile names", ("compact", "keep the\nfile names")),
        ("/usr/bin/env is a path", None),
        ("hello /help", None),
        ("/", None),
        ("/ help", None),
        ("//help", None),
        ("/9lives", None),
        ("", None),
    ],
)
def test_parse_command(text: str, parsed: tuple[str, str] | None) -> None:
    assert parse_command(text) == parsed


@given(st.text())
def test_parse_command_never_raises_and_only_takes_slash_lines(text: str) -> None:
    parsed = parse_command(text)
    if parsed is not None:
        name, args = parsed
        head = name.split(":")[0]
        stripped = text.strip()
        assert stripped.startswith("/") and stripped[1 : 1 + len(head)].lower() == head
        assert args == args.strip()
        assert not any(c.isspace() for c in name)


@given(
    st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
)
def test_parse_command_round_trips_name_and_arguments(name: str, args: str) -> None:
    assert parse_command(f"/{name} {args}") == (name, args.strip())


def registry_with(*commands: Command) -> CommandRegistry:
    registry = CommandRegistry()
    for command in commands:
        registry.register(command)
    return registry


async def test_handlers_may_be_sync_or_async_and_return_text_none_or_result() -> None:
    async def later(ctx: CommandContext, args: str) -> CommandResult:
        await asyncio.sleep(0)
        return CommandResult(output=f"later {args}", quit=True)

    registry = registry_with(
        Command("text", "", lambda ctx, args: f"got {args!r}"),
        Command("nothing", "", lambda ctx, args: None),
        Command("later", "", later),
    )
    ctx = CommandContext()
    assert await registry.dispatch("/text a b", ctx) == CommandResult(output="got 'a b'")
    assert await registry.dispatch("/nothing", ctx) == CommandResult()
    assert await registry.dispatch("/later x", ctx) == CommandResult(output="later x", quit=True)
    assert await registry.dispatch("just talk", ctx) is None


async def test_failures_are_results_never_exceptions() -> None:
    def clean(ctx: CommandContext, args: str) -> str:
        raise CommandError("need a NAME")

    def crash(ctx: CommandContext, args: str) -> str:
        raise KeyError("boom")

    registry = registry_with(
        Command("clean", "", clean),
        Command("crash", "", crash),
        Command("odd", "", lambda ctx, args: 42),  # type: ignore[arg-type,return-value]
    )
    ctx = CommandContext()
    assert await registry.dispatch("/clean", ctx) == CommandResult.fail("need a NAME")
    assert await registry.dispatch("/crash", ctx) == CommandResult.fail(
        "/crash failed: KeyError: 'boom'"
    )
    odd = await registry.dispatch("/odd", ctx)
    assert odd is not None and odd.error == (
        "/odd returned int, not CommandResult, str, dict or None"
    )
    unknown = await registry.dispatch("/clen", ctx)
    assert unknown is not None
    assert unknown.error == "unknown command /clen (did you mean /clean?); /help lists the commands"


async def test_prefix_commands_take_the_suffix_as_first_argument() -> None:
    registry = registry_with(
        Command("skill", "", lambda ctx, args: f"skill<{args}>"),
        Command("skill:exact", "", lambda ctx, args: f"exact<{args}>"),
    )
    ctx = CommandContext()
    assert await registry.dispatch("/skill:review a.py b.py", ctx) == CommandResult(
        output="skill<review a.py b.py>"
    )
    assert await registry.dispatch("/skill:exact x", ctx) == CommandResult(output="exact<x>")
    assert await registry.dispatch("/skill review", ctx) == CommandResult(output="skill<review>")


async def test_aliases_and_replacement() -> None:
    registry = registry_with(Command("quit", "end", lambda ctx, args: "bye", aliases=("exit",)))
    assert registry.get("exit") is registry.get("quit")
    with pytest.raises(ValueError, match="command /exit is already registered"):
        registry.register(Command("exit", "mine", lambda ctx, args: "mine"))
    registry.register(Command("exit", "mine", lambda ctx, args: "mine"), replace=True)
    assert await registry.dispatch("/exit", CommandContext()) == CommandResult(output="mine")
    assert await registry.dispatch("/quit", CommandContext()) == CommandResult(output="bye")


def test_command_names_are_checked() -> None:
    assert Command("/Help".lower(), "", lambda ctx, args: None).name == "help"
    with pytest.raises(ValueError, match="invalid command name"):
        Command("two words", "", lambda ctx, args: None)
    with pytest.raises(TypeError, match="handler must be callable"):
        Command("x", "", "not callable")  # type: ignore[arg-type]
