"""Argument models kept unimported until a call needs them, with their schemas stored
beside them (`skillkit.tools.arguments`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.permissions.schemas import ARGUMENTS as PERMISSION_ARGUMENTS
from skillkit.tools.arguments import ArgumentModels, clean_schema
from skillkit.tools.builtin.schemas import ARGUMENTS as BUILTIN_ARGUMENTS

STORES = [BUILTIN_ARGUMENTS, PERMISSION_ARGUMENTS]


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.module)
def test_the_stored_schemas_are_the_models_own(store: ArgumentModels) -> None:
    assert store.stale() == [], f"run `python -m {store.module}` to regenerate them"


def test_offering_the_default_tools_imports_no_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from skillkit.permissions import QuestionBroker, ask_user_tool\n"
        "from skillkit.runtime.background import BackgroundTasks\n"
        "from skillkit.subagents.task_tool import TaskTool\n"
        "from skillkit.tools import tool_schema\n"
        "from skillkit.tools.builtin import builtin_tools\n"
        "tools = builtin_tools(allow_writes=True, background=BackgroundTasks())\n"
        "tools += [ask_user_tool(QuestionBroker()), TaskTool([], run=None)]\n"
        "schemas = [tool_schema(t) for t in tools]\n"
        "print(len(schemas), 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.split() == ["15", "False"]


def test_a_model_is_imported_on_first_use_and_validates() -> None:
    from skillkit.tools.builtin.ls import LsArgs, LsTool

    assert LsTool.args_model is LsArgs
    assert LsTool.args_model.model_validate({"path": "src"}).path == "src"
    assert LsTool.args_schema == clean_schema(LsArgs.model_json_schema())


def test_the_task_tools_written_schema_is_its_models() -> None:
    from skillkit.subagents.definition import AgentDefinition
    from skillkit.subagents.task_tool import TaskTool

    for names in ([], ["general", "explore"]):
        definitions = [AgentDefinition(name=n, description=f"{n} agent") for n in names]
        tool = TaskTool(definitions, run=None)  # type: ignore[arg-type]
        assert tool.args_schema == clean_schema(tool.args_model.model_json_schema())


def test_a_replaced_model_is_shown_by_its_own_schema() -> None:
    from pydantic import BaseModel

    from skillkit.permissions import QuestionBroker, ask_user_tool
    from skillkit.tools import tool_schema

    class Other(BaseModel):
        text: str

    tool = ask_user_tool(QuestionBroker())
    tool.args_model = Other
    assert tool_schema(tool).parameters["required"] == ["text"]
