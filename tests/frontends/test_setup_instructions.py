"""The command line's agent carries the project instructions, the system-prompt flags,
the reasoning level and, with a session, the session id as its prompt cache key."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.cli import build_parser
from skillkit.extensions.builtin import DEFAULT_SYSTEM_PROMPT
from skillkit.frontends.setup import AgentOptions, SetupError, build_agent
from skillkit.instructions import ProjectInstructions

pytestmark = pytest.mark.timeout(30)


def make_options(tmp_path: Path, **overrides: object) -> AgentOptions:
    workspace = tmp_path / "project"
    workspace.mkdir(exist_ok=True)
    script = tmp_path / "model.yaml"
    script.write_text("replies:\n  - text: Done.\n")
    values: dict[str, object] = {
        "workspace": workspace,
        "home": tmp_path / "home",
        "model": f"scripted:{script}",
    }
    values.update(overrides)
    return AgentOptions(**values)  # type: ignore[arg-type]


async def test_the_system_prompt_reads_default_then_instructions_then_appended(
    tmp_path: Path,
) -> None:
    options = make_options(tmp_path, append_system_prompt="Always answer in haiku.")
    (options.workspace / "AGENTS.md").write_text("Run make check before finishing.")
    agent = build_agent(options)
    try:
        prompt = agent.runner.system_prompt()
        default_at = prompt.index(DEFAULT_SYSTEM_PROMPT.strip()[:40])
        environment_at = prompt.index(f"Working directory: {options.workspace}")
        rule_at = prompt.index("Run make check before finishing.")
        assert default_at < environment_at < rule_at
        assert prompt.endswith("Always answer in haiku.")
        assert any(isinstance(c, ProjectInstructions) for c in agent.runner.contributors)
    finally:
        await agent.aclose()


async def test_system_prompt_flag_replaces_the_default_but_keeps_instructions(
    tmp_path: Path,
) -> None:
    options = make_options(tmp_path, system_prompt="You are a release bot.")
    (options.workspace / "CLAUDE.md").write_text("Tag releases as vX.Y.Z.")
    agent = build_agent(options)
    try:
        prompt = agent.runner.system_prompt()
        assert prompt.startswith("You are a release bot.")
        assert DEFAULT_SYSTEM_PROMPT.strip()[:40] not in prompt
        assert "Tag releases as vX.Y.Z." in prompt
    finally:
        await agent.aclose()


async def test_a_session_id_is_the_prompt_cache_key(tmp_path: Path) -> None:
    agent = build_agent(make_options(tmp_path, session="new", reasoning="low"))
    try:
        assert agent.session is not None
        assert agent.runner.config.prompt_cache_key == agent.session.id
        assert agent.runner.config.reasoning == "low"
    finally:
        await agent.aclose()
    without = build_agent(make_options(tmp_path, session="off"))
    try:
        assert without.runner.config.prompt_cache_key is None
    finally:
        await without.aclose()


def test_reasoning_for_a_model_that_cannot_reason_is_a_one_line_setup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(SetupError) as info:
        build_agent(make_options(tmp_path, model="openai:gpt-4o", reasoning="high"))
    assert "\n" not in str(info.value) and "cannot reason" in str(info.value)


def test_the_flags_reach_the_options() -> None:
    args = build_parser([]).parse_args(
        ["--reasoning", "medium", "--system-prompt", "S", "--append-system-prompt", "A"]
    )
    assert (args.reasoning, args.system_prompt, args.append_system_prompt) == ("medium", "S", "A")
    with pytest.raises(SystemExit):
        build_parser([]).parse_args(["--reasoning", "max"])
