"""The agent the ``skillkit`` command builds: built-in tools behind the permission gate,
a background-task manager, the project's skills, and one-line setup errors."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.frontends.setup import AgentOptions, CliAgent, SetupError, build_agent
from skillkit.models import ToolResultMessage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(30)


def script(tmp_path: Path, text: str = "replies:\n  - text: Done.\n") -> str:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return f"scripted:{path}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def options(tmp_path: Path, workspace: Path, **overrides: object) -> AgentOptions:
    values: dict[str, object] = {"workspace": workspace, "home": tmp_path / "home"}
    values.update(overrides)
    if "model" not in values:
        values["model"] = script(tmp_path)
    return AgentOptions(**values)  # type: ignore[arg-type]


def offered(agent: CliAgent) -> list[str]:
    """Every tool the model is offered this turn."""
    return sorted(t.name for t in agent.runner.offered_tools())


async def test_the_agent_offers_the_built_in_tools_and_ask_user(
    tmp_path: Path, workspace: Path
) -> None:
    agent = build_agent(options(tmp_path, workspace))
    try:
        assert offered(agent) == [
            "ask_user", "bash", "bash_output", "edit", "find", "grep",
            "kill_task", "ls", "monitor", "read", "task", "todo", "web_fetch",
            "web_search", "write",
        ]  # fmt: skip
        assert agent.permissions.mode.value == "default"
        assert agent.background is not None
        assert agent.background in agent.runner.contributors
        assert agent.warnings == []
    finally:
        await agent.aclose()


async def test_no_tools_leaves_only_ask_user(tmp_path: Path, workspace: Path) -> None:
    agent = build_agent(options(tmp_path, workspace, tools=False))
    try:
        assert offered(agent) == ["ask_user"]
        assert agent.background is None
    finally:
        await agent.aclose()


async def test_mode_bypass_and_rule_flags_reach_the_gate(tmp_path: Path, workspace: Path) -> None:
    planned = build_agent(options(tmp_path, workspace, permission_mode="plan"))
    bypassing = build_agent(options(tmp_path, workspace, bypass=True, deny=("bash(rm:*)",)))
    try:
        assert planned.permissions.mode.value == "plan"
        assert "exit_plan_mode" in offered(planned)
        assert bypassing.permissions.mode.value == "bypass"
        gate = bypassing.permissions.gate
        assert gate.decide("bash", {"command": "make"}).action.value == "run"
        assert gate.decide("bash", {"command": "rm x"}).action.value == "refuse"
    finally:
        await planned.aclose()
        await bypassing.aclose()


def test_setup_errors_are_one_line(tmp_path: Path, workspace: Path) -> None:
    with pytest.raises(SetupError, match=r"^unknown model 'gpt-9'"):
        build_agent(options(tmp_path, workspace, model="gpt-9"))
    with pytest.raises(SetupError, match=r"^invalid permission rule 'bash\(\('"):
        build_agent(options(tmp_path, workspace, allow=("bash((",)))
    with pytest.raises(SetupError, match="script file not found"):
        build_agent(options(tmp_path, workspace, model="scripted:nowhere.yaml"))


async def test_settings_problems_become_warnings(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".skillkit").mkdir()
    (workspace / ".skillkit" / "settings.json").write_text('{"permissions": {"allow": 3}}')

    agent = build_agent(options(tmp_path, workspace))
    try:
        (warning,) = agent.warnings
        assert warning.startswith("permission settings: ") and "settings.json" in warning
    finally:
        await agent.aclose()


async def test_project_skills_are_loaded_and_offered(tmp_path: Path, workspace: Path) -> None:
    shutil.copytree(ROOT / "examples/skills/word-stats", workspace / ".skillkit/skills/word-stats")

    agent = build_agent(options(tmp_path, workspace))
    try:
        assert "word-stats" in agent.skills
        assert {"skill", "word-stats__count"} <= set(offered(agent))
    finally:
        await agent.aclose()


async def test_non_interactive_denies_at_once_and_notifies(tmp_path: Path, workspace: Path) -> None:
    model = script(
        tmp_path,
        "replies:\n"
        "  - tool_calls:\n"
        "      - {name: bash, arguments: {command: touch made.txt}}\n"
        "  - text: Done.\n",
    )
    agent = build_agent(options(tmp_path, workspace, model=model))
    notes: list[str] = []
    agent.make_non_interactive(notify=notes.append)
    try:
        response = await asyncio.wait_for(agent.runner.chat("go"), 10)
    finally:
        await agent.aclose()

    assert response.text == "Done."
    assert not (workspace / "made.txt").exists()
    assert notes == [
        "denied bash: touch made.txt (writes files): no user to approve it; "
        "to allow it: --allow 'bash(touch made.txt)'"
    ]
    (result,) = [m for m in agent.runner.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and "no user is available" in result.text


async def test_a_background_command_is_killed_when_the_agent_closes(
    tmp_path: Path, workspace: Path
) -> None:
    agent = build_agent(options(tmp_path, workspace, bypass=True))
    assert agent.background is not None
    task = agent.background.start("sleep 60", cwd=workspace)
    assert task.status == "running"

    await agent.aclose()

    assert task.status != "running"


def test_the_scripted_adapter_is_used_for_scripted_models(tmp_path: Path, workspace: Path) -> None:
    agent = build_agent(options(tmp_path, workspace))
    assert isinstance(agent.runner.adapter, ScriptedAdapter)
    asyncio.run(agent.aclose())


# --------------------------------------------------------------------------- plugins

EXTRA_TOOL = '''
from skillkit import tool
from skillkit.extensions import hookimpl


@tool
def extra_tool(text: str) -> str:
    """Say it back."""
    return f"extra: {text}"


@hookimpl
def skillkit_register_tools(registry):
    registry.register(extra_tool)
'''

REWRITE_GUARD = """
from skillkit.events import ToolCallEventResult
from skillkit.extensions import hookimpl


@hookimpl
def skillkit_before_tool_call(tool_call):
    if tool_call.arguments.get("command") == "touch made.txt":
        return ToolCallEventResult(args={"command": "ls"})
    return None
"""

ECHO_ADAPTER = """
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.extensions import hookimpl


@hookimpl
def skillkit_register_adapters(registry):
    registry.register("echo", FunctionAdapter(lambda request: "echoed", model="echo"))
"""

BROKEN_FRONTEND = """
from skillkit.extensions import FrontendFactory, hookimpl


def broken(**options):
    raise RuntimeError("no screen here")


@hookimpl
def skillkit_register_frontends(registry):
    registry.register(FrontendFactory("print", broken), replace=True)
"""

FAILING_PROMPT = """
from skillkit.extensions import hookimpl


@hookimpl
def skillkit_system_prompt(context):
    raise ValueError("no prompt today")
"""


def add_plugin(workspace: Path, name: str, source: str) -> Path:
    path = workspace / ".skillkit" / "plugins" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


@pytest.fixture(autouse=True)
def _no_trust_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLKIT_TRUST_PROJECT", raising=False)


async def test_everything_comes_from_the_built_in_plugin_once(
    tmp_path: Path, workspace: Path
) -> None:
    from skillkit.extensions.builtin import DEFAULT_SYSTEM_PROMPT

    agent = build_agent(options(tmp_path, workspace))
    try:
        registries = agent.manager.registries
        assert agent.manager.plugins()[0].name == "builtin"
        assert len(agent.runner.tools) == 0  # no tool list of its own
        names = [t.name for t in agent.runner.offered_tools()]
        assert len(names) == len(set(names))
        assert {registries.tools.source_of(n) for n in registries.tools.names()} == {"builtin"}
        assert "bash_output" in registries.tools  # with the session's background tasks
        assert agent.skills is registries.skills
        assert agent.runner.system_prompt().startswith(DEFAULT_SYSTEM_PROMPT)
        names = [c.name for c in agent.runner.contributors]
        assert names[0] == "plugins" and names[-1] == "permissions"  # the gate goes last
        assert {"help", "skills", "plugins", "reload"} <= set(registries.commands.names())
        assert registries.frontends.names() == ["interactive", "print", "json"]
    finally:
        await agent.aclose()


async def test_a_plugin_guard_runs_before_the_gate_which_judges_the_final_arguments(
    tmp_path: Path, workspace: Path
) -> None:
    add_plugin(workspace, "guard", REWRITE_GUARD)
    (workspace / "notes.txt").write_text("notes\n")
    model = script(
        tmp_path,
        "replies:\n"
        "  - tool_calls:\n"
        "      - {name: bash, arguments: {command: touch made.txt}}\n"
        "  - text: Done.\n",
    )
    agent = build_agent(options(tmp_path, workspace, model=model, trust_project=True))
    notes: list[str] = []
    agent.make_non_interactive(notify=notes.append)
    try:
        await asyncio.wait_for(agent.runner.chat("go"), 10)
    finally:
        await agent.aclose()

    assert notes == []  # `ls` is read-only: the gate let it run without asking
    assert not (workspace / "made.txt").exists()
    (result,) = [m for m in agent.runner.messages if isinstance(m, ToolResultMessage)]
    assert not result.is_error and "notes.txt" in result.text


def test_project_plugins_load_only_in_a_trusted_project(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = add_plugin(workspace, "extra", EXTRA_TOOL)

    untrusted = build_agent(options(tmp_path, workspace))
    asyncio.run(untrusted.aclose())
    assert "extra_tool" not in offered(untrusted)
    (notice,) = untrusted.notices
    assert notice.startswith("project plugins not loaded (extra.py): ")
    assert "skillkit plugins trust" in notice

    asked: list[tuple[Path, list[Path]]] = []

    def refuse(project: Path, files: object) -> bool:
        asked.append((project, list(files)))  # type: ignore[call-overload]
        return False

    refused = build_agent(options(tmp_path, workspace), ask=refuse)
    asyncio.run(refused.aclose())
    assert "extra_tool" not in offered(refused)
    assert asked == [(workspace.resolve(), [plugin])]

    accepted = build_agent(options(tmp_path, workspace), ask=lambda project, files: True)
    asyncio.run(accepted.aclose())
    assert "extra_tool" in offered(accepted) and accepted.notices == []

    remembered = build_agent(options(tmp_path, workspace))  # stored under the given home
    asyncio.run(remembered.aclose())
    assert "extra_tool" in offered(remembered)
    assert (tmp_path / "home" / ".skillkit" / "trusted-projects.json").exists()

    elsewhere = tmp_path / "other-home"
    monkeypatch.setenv("SKILLKIT_TRUST_PROJECT", "1")
    from_env = build_agent(options(tmp_path, workspace, home=elsewhere))
    asyncio.run(from_env.aclose())
    assert "extra_tool" in offered(from_env)


async def test_a_broken_plugin_is_one_warning_and_the_agent_still_works(
    tmp_path: Path, workspace: Path
) -> None:
    add_plugin(workspace, "broken", "import a_module_that_does_not_exist\n")
    add_plugin(workspace, "extra", EXTRA_TOOL)

    agent = build_agent(options(tmp_path, workspace, trust_project=True))
    try:
        assert agent.warnings == [
            "plugin 'project:broken' failed to load: ModuleNotFoundError: "
            "No module named 'a_module_that_does_not_exist'"
        ]
        assert "extra_tool" in offered(agent)
        response = await asyncio.wait_for(agent.runner.chat("go"), 10)
        assert response.text == "Done."
    finally:
        await agent.aclose()


async def test_a_model_name_a_plugin_registered_selects_its_adapter(
    tmp_path: Path, workspace: Path
) -> None:
    add_plugin(workspace, "echo", ECHO_ADAPTER)

    agent = build_agent(options(tmp_path, workspace, model="echo", trust_project=True))
    try:
        assert agent.runner.adapter is agent.manager.registries.adapters.get("echo")
        assert agent.runner.adapters is agent.manager.registries.adapters
        response = await asyncio.wait_for(agent.runner.chat("anyone?"), 10)
        assert response.text == "echoed"
    finally:
        await agent.aclose()


async def test_a_plugin_frontend_that_fails_is_replaced_by_skillkits_own(
    tmp_path: Path, workspace: Path
) -> None:
    from skillkit.frontends.builtin import PrintFrontend

    add_plugin(workspace, "face", BROKEN_FRONTEND)
    agent = build_agent(options(tmp_path, workspace, trust_project=True))
    warnings: list[str] = []
    try:
        frontend = agent.frontend("print", {"prompt": "hi"}, warn=warnings.append)
    finally:
        await agent.aclose()

    assert isinstance(frontend, PrintFrontend)
    assert warnings == [
        "plugin 'project:face' failed to make the print frontend: "
        "RuntimeError: no screen here; using SkillKit's own"
    ]


async def test_a_failing_plugin_hook_is_reported_once_and_the_run_goes_on(
    tmp_path: Path, workspace: Path
) -> None:
    add_plugin(workspace, "prompt", FAILING_PROMPT)
    model = script(tmp_path, "replies:\n  - text: One.\n  - text: Two.\n")
    agent = build_agent(options(tmp_path, workspace, model=model, trust_project=True))
    lines: list[str] = []
    agent.report_plugin_errors(lines.append)
    try:
        first = await asyncio.wait_for(agent.runner.chat("one"), 10)
        second = await asyncio.wait_for(agent.runner.chat("two"), 10)
    finally:
        await agent.aclose()

    assert (first.text, second.text) == ("One.", "Two.")
    assert lines == [
        "plugin 'project:prompt' failed in skillkit_system_prompt: ValueError: no prompt today"
    ]


async def test_the_settings_choose_the_native_search_and_the_rules_decide_it(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillkit.models import ServerToolSchema
    from skillkit.tools.base import tool_schema
    from skillkit.tools.builtin.websearch import WebSearchTool

    monkeypatch.delenv("SKILLKIT_WEB_SEARCH", raising=False)
    home = tmp_path / "home" / ".skillkit"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"web_search": {"provider": "native"}}')
    (workspace / ".skillkit").mkdir()
    (workspace / ".skillkit" / "settings.json").write_text('{"web_search": {"provider": "brave"}}')

    allowed = build_agent(options(tmp_path, workspace, allow=("web_search",)))
    asking = build_agent(options(tmp_path, workspace))
    trusted = build_agent(options(tmp_path, workspace, trust_project=True))
    try:
        search = web_search_of(allowed)
        assert isinstance(search, WebSearchTool) and search.native  # untrusted project ignored
        schema = tool_schema(search)
        assert isinstance(schema, ServerToolSchema) and schema.server_tool == "web_search"
        assert not isinstance(tool_schema(web_search_of(asking)), ServerToolSchema)
        chosen = web_search_of(trusted)
        assert isinstance(chosen, WebSearchTool) and not chosen.native  # the project's brave
        assert chosen.environ is not None and chosen.environ["SKILLKIT_WEB_SEARCH"] == "brave"
    finally:
        for agent in (allowed, asking, trusted):
            await agent.aclose()


async def test_a_malformed_web_search_setting_is_a_warning(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLKIT_WEB_SEARCH", raising=False)
    home = tmp_path / "home" / ".skillkit"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"web_search": "native"}')
    agent = build_agent(options(tmp_path, workspace))
    try:
        assert any('"web_search" must be {"provider": "NAME"}' in w for w in agent.warnings)
    finally:
        await agent.aclose()


def web_search_of(agent: CliAgent) -> object:
    return next(t for t in agent.runner.offered_tools() if t.name == "web_search")
