"""`@tool`: schemas from typed functions and docstrings; execution and results."""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

import pytest
from pydantic import BaseModel

from skillkit.abort import AbortSignal
from skillkit.models import ImagePart, TextPart
from skillkit.tools import Tool, ToolContext, ToolRegistry, ToolResult, tool, tool_schema


@tool
def search(query: str, limit: int = 5, mode: Literal["fast", "deep"] = "fast") -> list[str]:
    """Search the notes.

    Longer explanation for the model.

    Args:
        query: What to look for.
        limit: How many results
            to return at most.
    """
    return [query] * limit


def test_schema_comes_from_signature_and_docstring() -> None:
    schema = tool_schema(search)
    assert schema.name == "search"
    assert schema.description == "Search the notes.\n\nLonger explanation for the model."
    params = schema.parameters
    assert params["required"] == ["query"]
    assert params["properties"]["query"] == {"type": "string", "description": "What to look for."}
    assert params["properties"]["limit"]["description"] == "How many results to return at most."
    assert params["properties"]["limit"]["default"] == 5
    assert params["properties"]["mode"]["enum"] == ["fast", "deep"]
    assert params["additionalProperties"] is False
    assert "title" not in params


def test_decorated_function_is_still_callable_and_is_a_tool() -> None:
    assert search("x", limit=2) == ["x", "x"]
    assert isinstance(search, Tool)


async def test_sync_tools_run_in_a_worker_thread_unless_told_otherwise() -> None:
    threads: list[str] = []

    @tool
    def where() -> str:
        """Where am I."""
        threads.append(threading.current_thread().name)
        return "ok"

    @tool(thread=False)
    def inline() -> str:
        """Inline."""
        threads.append(threading.current_thread().name)
        return "ok"

    ctx = ToolContext("1", "where")
    await where.execute(where.args_model(), ctx)
    await inline.execute(inline.args_model(), ctx)
    assert threads[0] != threading.current_thread().name
    assert threads[1] == threading.current_thread().name


async def test_context_parameter_is_injected_and_hidden_from_the_model() -> None:
    updates: list[str] = []

    @tool(name="progress", description="Reports progress.")
    async def run(steps: int, ctx: ToolContext) -> str:
        for i in range(steps):
            ctx.update(f"step {i}")
            await asyncio.sleep(0)
        return ctx.tool_call_id

    assert "ctx" not in tool_schema(run).parameters["properties"]
    ctx = ToolContext("call-7", "progress", AbortSignal(), updates.append)
    result = await run.execute(run.args_model(steps=2), ctx)
    assert result.output == "call-7" and updates == ["step 0", "step 1"]


async def test_return_values_become_tool_results() -> None:
    class Point(BaseModel):
        x: int

    @tool
    def values(kind: str) -> object:
        """Values."""
        return {
            "none": None,
            "dict": {"a": 1},
            "model": Point(x=1),
            "image": ImagePart("AAAA", "image/png"),
            "result": ToolResult.error("bad"),
        }[kind]

    async def run(kind: str) -> ToolResult:
        return await values.execute(values.args_model(kind=kind), ToolContext("1", "values"))

    assert (await run("none")).content == [TextPart("")]
    assert (await run("dict")).output == '{"a": 1}'
    assert (await run("model")).output == '{"x": 1}'
    assert (await run("image")).content == [ImagePart("AAAA", "image/png")]
    assert (await run("result")).is_error


def test_var_args_are_refused() -> None:
    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):

        @tool
        def bad(*names: str) -> str:
            """Bad."""
            return ""


def test_registry_names_sources_and_collisions() -> None:
    registry = ToolRegistry()
    registry.register(search, source="plugin-a")
    with pytest.raises(ValueError, match="already registered by plugin-a"):
        registry.register(search)
    registry.register(search, replace=True, source="plugin-b")
    assert registry.source_of("search") == "plugin-b"
    assert registry.unregister_by_source("plugin-b") == ["search"]
    assert "search" not in registry and len(registry) == 0
    with pytest.raises(TypeError, match="not a tool"):
        registry.register(object())  # type: ignore[arg-type]
