"""A handoff in the terminal: one line says which agent answers now (``→ handed to
NAME``), the agent that handed over draws no footer of its own, and the target's answer
follows — drawn by the renderer in process, and in a real terminal (tmux) driving the
``skillkit`` command with an agent the settings let the main agent hand to; a rewind to
before the handoff gives the conversation back to the main agent, and says so."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.handoffs import Handoffs
from skillkit.frontends.terminal import TerminalRenderer
from tests.frontends.tmux_terminal import Terminal


async def test_the_renderer_draws_one_line_for_a_handoff() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False, color_system=None)
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing"),
        adapter=ScriptedAdapter(["Billing here."]),
    )
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("transfer_to_billing", {})])]),
        contributors=[Handoffs([billing])],
    )
    triage.events.add_sink(TerminalRenderer(console))

    await triage.chat("my invoice")

    screen = out.getvalue()
    order = ["⏺ transfer_to_billing", "→ handed to billing", "Billing here.", "● done"]
    positions = [screen.index(fragment) for fragment in order]
    assert positions == sorted(positions), screen
    assert screen.count("●") == 1, screen  # one footer: the run's end, not the handoff's


REVIEWER = """---
name: reviewer
description: Reviews changes.
model: scripted:{script}
---
You review changes.
"""


def test_the_terminal_shows_who_answers_after_a_handoff(terminal: Terminal, tmp_path: Path) -> None:
    assert terminal.home is not None
    agents = terminal.home / ".skillkit" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(REVIEWER.format(script=tmp_path / "reviewer.yaml"))
    (terminal.home / ".skillkit" / "settings.json").write_text(
        json.dumps({"agents": {"handoff_to": ["reviewer"]}})
    )
    (tmp_path / "reviewer.yaml").write_text(
        json.dumps({"replies": [{"text": "Reviewer: it looks fine."}, {"text": "Still me."}]})
    )
    main = {"replies": [{"text": "Over to review.", "tool_calls": [
        {"name": "transfer_to_reviewer", "arguments": {}}]}]}  # fmt: skip
    (tmp_path / "main.yaml").write_text(json.dumps(main))
    work = tmp_path / "work"
    work.mkdir()

    terminal.start("--model", f"scripted:{tmp_path / 'main.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("review my change")
    screen = terminal.wait_for("Reviewer: it looks fine.")
    assert screen.index("→ handed to reviewer") < screen.index("Reviewer: it looks fine.")
    terminal.wait_for_prompt_count(2)
    terminal.type("anything else?")
    terminal.wait_for("Still me.")  # the reviewer answers the next prompt too
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_a_rewind_before_the_handoff_gives_the_terminal_back_to_the_main_agent(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    agents = terminal.home / ".skillkit" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(REVIEWER.format(script=tmp_path / "reviewer.yaml"))
    (terminal.home / ".skillkit" / "settings.json").write_text(
        json.dumps({"agents": {"handoff_to": ["reviewer"]}})
    )
    (tmp_path / "reviewer.yaml").write_text(
        json.dumps({"replies": [{"text": "Reviewer: it looks fine."}]})
    )
    transfer = {"name": "transfer_to_reviewer", "arguments": {}}
    main = {
        "replies": [
            {"text": "Over to review.", "tool_calls": [transfer]},
            {"text": "The main agent again."},
        ]
    }
    (tmp_path / "main.yaml").write_text(json.dumps(main))
    work = tmp_path / "work"
    work.mkdir()

    terminal.start("--model", f"scripted:{tmp_path / 'main.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("review my change")
    terminal.wait_for("Reviewer: it looks fine.")
    terminal.wait_for_prompt_count(2)
    terminal.type("/rewind 1 conversation")
    terminal.wait_for("the main agent answers from here (reviewer answered on the branch left)")
    terminal.wait_for_prompt_count(3)
    terminal.type("and now?")
    terminal.wait_for("The main agent again.")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
