"""``--max-cost`` and ``--fallback-model``: the run budget and the fallback models of
`AgentConfig`, driven through the real command with scripted models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import assert_one_line_error, skillkit

pytestmark = pytest.mark.timeout(60)

DOWN = "replies:\n  - error: '429 rate limited'\n    error_kind: rate_limit\n"
BROKEN = "replies:\n  - error: 'bad request: no such field'\n    error_kind: bad_request\n"
ANSWER = "replies:\n  - 'answered by the fallback model'\n"


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    for name, text in {"down": DOWN, "broken": BROKEN, "ok": ANSWER}.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    return tmp_path


def test_a_fallback_model_answers_when_the_model_is_rate_limited(scripts: Path) -> None:
    result = skillkit(
        "-p", "hi", "--no-session", "--model", "scripted:down.yaml",
        "--fallback-model", "scripted:ok.yaml", cwd=scripts, home=scripts,
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (0, "answered by the fallback model\n")


def test_fallback_models_are_tried_in_the_order_given(scripts: Path) -> None:
    result = skillkit(
        "-p", "hi", "--no-session", "--mode", "json", "--model", "scripted:down.yaml",
        "--fallback-model", "scripted:down.yaml", "--fallback-model", "scripted:ok.yaml",
        cwd=scripts, home=scripts,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    switches = [e["payload"] for e in events if e["type"] == "model_fallback"]
    assert [(s["from_model"], s["to_model"]) for s in switches] == [
        ("scripted:down.yaml", "scripted:down.yaml"),
        ("scripted:down.yaml", "scripted:ok.yaml"),
    ]
    assert events[-1]["type"] == "agent_end"


def test_a_failure_another_model_would_not_fix_ends_the_run(scripts: Path) -> None:
    result = skillkit(
        "-p", "hi", "--no-session", "--model", "scripted:broken.yaml",
        "--fallback-model", "scripted:ok.yaml", cwd=scripts, home=scripts,
    )  # fmt: skip
    assert result.returncode == 1
    assert "answered by the fallback model" not in result.stdout
    assert "bad request" in result.stderr


def test_a_cost_limit_on_a_model_without_prices_stops_before_the_call(scripts: Path) -> None:
    result = skillkit(
        "-p", "hi", "--no-session", "--model", "scripted:ok.yaml", "--max-cost", "0.5",
        cwd=scripts, home=scripts,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    assert "max_cost_usd" in result.stderr and "cannot be known" in result.stderr
    unlimited = skillkit(
        "-p", "hi", "--no-session", "--model", "scripted:ok.yaml", cwd=scripts, home=scripts
    )
    assert unlimited.returncode == 0


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf"])
def test_a_cost_limit_that_is_not_a_positive_number_is_a_usage_error(
    scripts: Path, value: str
) -> None:
    result = skillkit("-p", "hi", "--model", "scripted:ok.yaml", f"--max-cost={value}", cwd=scripts)
    line = assert_one_line_error(result, 2)
    assert "--max-cost" in line


def test_the_flags_reach_the_agents_configuration(scripts: Path) -> None:
    from skillkit.cli import build_parser
    from skillkit.frontends.args import agent_options
    from skillkit.frontends.setup import build_agent

    args = build_parser([]).parse_args(
        ["-p", "hi", "--model", f"scripted:{scripts / 'ok.yaml'}", "--max-cost", "2.5",
         "--fallback-model", "openai:gpt-4o", "--fallback-model", "scripted:ok.yaml"]
    )  # fmt: skip
    agent = build_agent(agent_options(args, workspace=scripts, home=scripts, session="off"))
    config = agent.runner.config
    assert config.max_cost_usd == 2.5
    assert config.fallback_models == ["openai:gpt-4o", "scripted:ok.yaml"]
