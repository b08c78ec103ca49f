"""The ``task`` tool: how a model hands work to a child agent.

Arguments: ``agent`` (one of the definitions' names — an enum, so the model cannot ask
for one that does not exist), ``description`` (three to five words for the user) and
``prompt`` (everything the child needs: it sees nothing of the parent's conversation).
The child's final answer is the result; a child that fails is an error result saying
why. Several calls in one turn run at the same time.

For the permission gate the tool only reads (``read_only``): it changes nothing itself,
and every call the child makes is judged on its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from skillkit.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.subagents.definition import AgentDefinition

__all__ = ["TASK_TOOL_NAME", "TaskTool"]

TASK_TOOL_NAME = "task"

_AGENT = "The agent to run"
_WHAT = "What the child does, in 3-5 words"
_PROMPT = "The complete task for the child"

RunTask = Callable[[str, str, str], Awaitable[ToolResult]]
"""``run(agent, description, prompt)``: the result of one child run."""


class TaskTool:
    """The ``task`` tool for a set of ``definitions``; ``run`` starts the child."""

    name = TASK_TOOL_NAME
    sequential = False
    read_only = True

    def __init__(self, definitions: Sequence[AgentDefinition], run: RunTask) -> None:
        self.definitions = tuple(definitions)
        self._run = run
        self._names = tuple(d.name for d in self.definitions)
        self._model: type[BaseModel] | None = None
        self._replaced = False
        listing = "\n".join(f"- {d.name}: {d.description}" for d in self.definitions)
        self.description = (
            "Hand a self-contained task to a child agent that works in its own context "
            "and returns one answer. Use it for searches and research that would fill "
            "your context, or to run independent tasks in parallel (call it several "
            "times in one turn). The child sees only `prompt`: include every detail it "
            "needs and say what to return. Agents:\n" + listing
        )
        agent: dict[str, Any] = {"description": _AGENT, "type": "string"}
        if self._names:
            agent["enum"] = list(self._names)
        self._schema: dict[str, Any] = {
            "additionalProperties": False,
            "properties": {
                "agent": agent,
                "description": {"description": _WHAT, "maxLength": 120, "type": "string"},
                "prompt": {"description": _PROMPT, "minLength": 1, "type": "string"},
            },
            "required": ["agent", "description", "prompt"],
            "type": "object",
        }

    @property
    def args_schema(self) -> dict[str, Any] | None:
        """What the model is shown: `args_model`'s JSON schema, written out so that
        offering the tool needs no pydantic (a test holds the two equal); None once
        another model was set."""
        return self._schema if not self._replaced else None

    @property
    def args_model(self) -> type[BaseModel]:
        """The arguments' model (``agent`` one of the definitions' names), made with
        pydantic on first use."""
        if self._model is None:
            from pydantic import ConfigDict, Field, create_model

            choice: Any = Literal[self._names] if self._names else str
            self._model = create_model(
                "TaskArgs",
                __config__=ConfigDict(extra="forbid"),
                agent=(choice, Field(description=_AGENT)),
                description=(str, Field(max_length=120, description=_WHAT)),
                prompt=(str, Field(min_length=1, description=_PROMPT)),
            )
        return self._model

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:
        self._model = model
        self._replaced = True

    def __repr__(self) -> str:
        return "<task tool>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        return await self._run(str(args.agent), str(args.description), str(args.prompt))
