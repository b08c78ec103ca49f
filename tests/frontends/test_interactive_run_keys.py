"""The keyboard while a run works, in a real terminal (tmux): keys typed meanwhile never
answer a prompt nor reach the answer; Esc aborts; Enter steers, Alt+Enter queues;
Ctrl-J makes a new line; a working line shows what the agent does and for how long."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

SLOW_THEN_DELETE = """\
replies:
  - delay: 0.4
    text: Let me tidy up the build folder for you. This will take a little while to say,
      as the model streams slowly, so that there is time to type while it writes.
    tool_calls:
      - {name: bash, arguments: {command: "rm -rf build"}}
  - text: Finished.
cycle: true
"""

SLOW_TEXT = "slow words " * 60
"""Streamed for about 8 s (8 characters every 0.1 s): keys a test sends once the first
words show reach the run in progress, on a slow machine too."""

SLOW_THEN_QUICK = f"""\
replies:
  - delay: 0.1
    text: "{SLOW_TEXT.strip()}"
  - text: Second answer here.
  - text: Third answer here.
"""


def project(tmp_path: Path, script: str) -> tuple[Path, str]:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text(script)
    return work, f"scripted:{work / 'model.yaml'}"


def begin(terminal: Terminal, tmp_path: Path, script: str, prompt: str) -> Path:
    """Start ``skillkit`` on ``script`` in a new project and send ``prompt``; returns the
    project folder."""
    work, model = project(tmp_path, script)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type(prompt)
    return work


def leave(terminal: Terminal) -> None:
    """Ctrl-D at the prompt ends the session with exit code 0."""
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_type_ahead_during_the_stream_never_answers_the_approval(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, model = project(tmp_path, SLOW_THEN_DELETE)
    (work / "build").mkdir()
    (work / "build" / "keep.txt").write_text("precious\n")
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("tidy up")
    terminal.wait_for("Let me tidy")

    # "y" would allow once and "a" always: typed while the answer streams, neither
    # may reach the approval prompt drawn afterwards.
    terminal.press("-l", "hey, also")
    terminal.wait_for("» hey, also")
    screen = terminal.wait_for("Allow? y yes, once")

    assert "approval needed bash" in screen
    assert "✓ allowed" not in screen
    assert (work / "build" / "keep.txt").read_text() == "precious\n"
    terminal.press("n")
    terminal.wait_for("message for the model (Enter to skip) ›")
    terminal.press("Enter")
    screen = terminal.wait_for("● done")
    assert "✗ denied" in screen
    assert "from now on" not in screen
    assert (work / "build" / "keep.txt").read_text() == "precious\n"
    # What was typed and not sent is waiting at the next prompt.
    terminal.wait_for("› hey, also")
    terminal.press("C-u")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_text_typed_during_a_run_is_not_echoed_into_the_answer(
    terminal: Terminal, tmp_path: Path
) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")
    terminal.press("-l", "zebra")

    screen = terminal.wait_for("● done")
    answer = [line for line in screen.splitlines() if "slow words" in line]
    assert answer and all("zebra" not in line for line in answer)
    assert " ".join(" ".join(answer).split()) == SLOW_TEXT.strip()
    terminal.wait_for("› zebra")
    terminal.press("C-u")
    leave(terminal)


def test_esc_aborts_the_run_without_printing_an_escape(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")

    terminal.press("Escape")

    screen = terminal.wait_for("● aborted")
    assert "^[" not in screen
    assert "aborting…" not in screen  # said by the working line only, gone with the run
    terminal.wait_for_prompt_count(2)
    terminal.type("next")  # the session goes on: the next reply of the script
    terminal.wait_for("Second answer here.")
    terminal.wait_for_prompt_count(3)
    leave(terminal)


def test_a_working_line_shows_what_the_agent_does_and_for_how_long(
    terminal: Terminal, tmp_path: Path
) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")

    screen = terminal.wait_for(lambda s: re.search(r"writing · [1-9]\d*s", s) is not None)
    assert "esc stops · enter steers · alt+enter queues · ctrl+j new line" in screen
    # the working line goes when the run ends (a redraw just after "● done" is drawn)
    terminal.wait_for(lambda s: "● done" in s and "esc stops" not in s)
    leave(terminal)


def test_enter_during_a_run_steers_it(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")

    terminal.type("use bullet points")

    terminal.wait_for("↳ sent to the running agent: use bullet points")
    # The steering message makes the same run take another turn: the next reply.
    screen = terminal.wait_for("● done")
    assert "Second answer here." in screen
    assert re.search(r"● done\s+2 turns", screen)
    assert screen.count("● done") == 1
    terminal.wait_for_prompt_count(2)
    leave(terminal)


def test_alt_enter_during_a_run_queues_a_follow_up(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")

    terminal.press("-l", "then summarize")
    terminal.press("Escape", "Enter")

    terminal.wait_for("⧗ queued for after this run: then summarize")
    screen = terminal.wait_for("Second answer here.")
    assert "aborted" not in screen  # Esc followed by Enter is Alt+Enter, not an abort
    lines = screen.splitlines()
    first = max(i for i, line in enumerate(lines) if "slow words" in line)
    second = next(i for i, line in enumerate(lines) if "Second answer here." in line)
    assert first < second  # handled after the first answer ended
    # the queued message is shown as the prompt of the answer that follows it
    assert lines[second - 1] == "› then summarize"
    terminal.wait_for_prompt_count(3)
    leave(terminal)


def test_ctrl_j_inserts_a_new_line_in_the_prompt(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(tmp_path, "replies:\n  - text: One answer.\ncycle: true\n")
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)

    terminal.press("-l", "first line")
    terminal.press("C-j")
    terminal.type("second line")

    screen = terminal.wait_for("● done")
    assert screen.count("One answer.") == 1  # one prompt of two lines, one run
    lines = screen.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("› first line"))
    assert "second line" in lines[at + 1]
    leave(terminal)


def test_ctrl_c_twice_during_a_run_exits_130(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")

    terminal.press("C-c")
    terminal.wait_for("aborting… (Ctrl-C again to exit)")
    terminal.press("C-c")

    assert terminal.wait_exit() == 130


TWO_QUESTIONS = """\
replies:
  - text: Two questions.
    tool_calls:
      - name: ask_user
        arguments:
          questions:
            - question: Which colour do you like?
              header: Colour
              options: [{label: red}, {label: blue}]
      - name: ask_user
        arguments:
          questions:
            - question: Which fruit do you like?
              header: Fruit
              options: [{label: apple}, {label: pear}]
  - text: Thanks for answering.
"""


def test_several_questions_are_asked_one_at_a_time(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, TWO_QUESTIONS, "ask me")

    screen = terminal.wait_for("Colour ›")
    assert "Which colour do you like?" in screen
    assert "Which fruit do you like?" not in screen  # not drawn before its turn
    terminal.type("2")
    screen = terminal.wait_for("Fruit ›")
    assert "Which fruit do you like?" in screen
    terminal.type("1")

    screen = terminal.wait_for("● done")
    assert "→ blue" in screen and "→ apple" in screen
    assert "Thanks for answering." in screen
    leave(terminal)


def test_one_ctrl_c_declines_every_open_question(terminal: Terminal, tmp_path: Path) -> None:
    begin(terminal, tmp_path, TWO_QUESTIONS, "ask me")
    terminal.wait_for("Colour ›")

    terminal.press("C-c")

    screen = terminal.wait_for("● done")
    assert "✗ the questions were not answered" in screen
    assert "Which fruit do you like?" not in screen  # never asked
    assert "Fruit ›" not in screen
    assert "Thanks for answering." in screen  # the run went on with the refusals
    leave(terminal)


def test_tool_output_is_shown_once(terminal: Terminal, tmp_path: Path) -> None:
    command = "printf 'line-%s\\\\n' alpha beta gamma"
    work, model = project(
        tmp_path,
        "replies:\n"
        f'  - tool_calls: [{{name: bash, arguments: {{command: "{command}"}}}}]\n'
        "  - text: Printed.\n",
    )
    terminal.start("--model", model, "--allow", "bash(printf:*)", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("print")

    screen = terminal.wait_for("● done")
    for word in ("alpha", "beta", "gamma"):
        assert screen.count(f"line-{word}") == 1, screen
    assert "✓ bash · 3 lines above" in screen
    leave(terminal)


def test_compaction_shows_its_progress(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(
        tmp_path,
        "replies:\n"
        "  - text: "
        + "A first answer, long enough that there is something to compact. "
        * 25
        + "\n"
        "  - delay: 0.25\n"
        "    text: Summary of the talk so far, written slowly.\n",
    )
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("hello")
    terminal.wait_for("● done")
    terminal.wait_for_prompt_count(2)

    terminal.type("/compact")

    screen = terminal.wait_for(
        lambda s: re.search(r"compacting the conversation · [1-9]\d*s", s) is not None
    )
    assert "compacting the conversation…" in screen
    # a conversation this short may not shrink (then the compaction is refused, the
    # transcript kept): either way the outcome is drawn when the work ends
    terminal.wait_for(lambda s: "conversation compacted:" in s or "compaction refused" in s)
    terminal.wait_for_prompt_count(3)
    leave(terminal)


class _Overloaded(http.server.BaseHTTPRequestHandler):
    """A provider that is always overloaded: every request gets a 503."""

    def do_POST(self) -> None:
        body = b'{"error": {"message": "overloaded, try later", "type": "server_error"}}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


FLAKY_PLUGIN = """
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.extensions import hookimpl


@hookimpl
def skillkit_register_adapters(registry):
    registry.register(
        "overloaded",
        OpenAIAdapter(
            "gpt-4o", base_url="{url}", api_key="test-key", max_retries=2, retry_base_delay=3.0
        ),
    )
"""


@pytest.fixture
def overloaded_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Overloaded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_provider_retries_are_shown_as_they_happen(
    terminal: Terminal, tmp_path: Path, overloaded_server: str
) -> None:
    work = tmp_path / "project"
    (work / ".skillkit" / "plugins").mkdir(parents=True)
    plugin = FLAKY_PLUGIN.replace("{url}", overloaded_server)
    (work / ".skillkit" / "plugins" / "overloaded.py").write_text(plugin)
    terminal.start("--model", "overloaded", cwd=work)
    terminal.wait_for("Trust this project and run its plugins from now on? [y/N]")
    terminal.type("y")
    terminal.wait_for_prompt_count(1)

    terminal.type("hello")

    # The working line counts down to the retry while the session waits for it.
    screen = terminal.wait_for(lambda s: re.search(r"retry 1 of 2 in \d+s · \d+s", s) is not None)
    assert "the model call failed" in screen and "retry 1 of 2 in" in screen
    screen = terminal.wait_for("● failed")
    assert "retry 2 of 2" in screen
    terminal.wait_for_prompt_count(2)
    leave(terminal)


def test_a_steering_message_the_run_did_not_read_is_named(
    terminal: Terminal, tmp_path: Path
) -> None:
    begin(terminal, tmp_path, SLOW_THEN_QUICK, "talk")
    terminal.wait_for("slow words slow")
    terminal.type("keep it short")
    terminal.wait_for("↳ sent to the running agent: keep it short")

    terminal.press("Escape")  # the run stops before its next turn could read it

    screen = terminal.wait_for("● aborted")
    terminal.wait_for("↳ not read by this run, sent with your next prompt: keep it short")
    assert "Second answer here." not in screen
    terminal.wait_for_prompt_count(2)
    leave(terminal)
