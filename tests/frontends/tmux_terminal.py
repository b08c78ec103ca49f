"""A real terminal for interactive tests: ``skillkit`` running in a private tmux server."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKILLKIT = Path(sys.executable).with_name("skillkit")
POLL_TIMEOUT = 30.0
"""How long one wait for the screen may take: generous, for a slow shared CI machine
(a wait ends as soon as its text shows, so only a failure takes this long)."""
# The pane's real size must win: COLUMNS / LINES (set under pytest) would override it.
_ENVIRONMENT = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


class Terminal:
    """One ``skillkit`` process in a 120x40 tmux pane; every wait polls with a timeout."""

    def __init__(
        self, socket: Path, exit_file: Path, home: Path | None = None, program: Path = SKILLKIT
    ) -> None:
        self.socket = socket
        self.exit_file = exit_file
        self.home = home
        self.program = program

    def tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
            env=_ENVIRONMENT,
        )
        return result.stdout

    def start(self, *args: str, cwd: Path = ROOT) -> None:
        """Start ``skillkit ARGS`` (``program``) in ``cwd``; ``home`` (if set) replaces
        ``$HOME``, where user settings, user skills and trusted projects are kept."""
        command = " ".join(shlex.quote(a) for a in (str(self.program), *args))
        home = self.home
        if home is not None:
            command = f"HOME={shlex.quote(str(home))} {command}"
        # bash waits for skillkit and writes its exit code; its INT trap keeps it alive
        # when Ctrl-C reaches the whole foreground group (skillkit itself gets SIGINT
        # with the default disposition, as in any shell).
        script = f"trap : INT; {command}; echo $? > {shlex.quote(str(self.exit_file))}; sleep 600"
        self.tmux(
            "-f", "/dev/null",
            "new-session", "-d", "-x", "120", "-y", "40", "-s", "skillkit",
            "-c", str(cwd),
            f"bash -c {shlex.quote(script)}",
        )  # fmt: skip

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self.tmux("send-keys", "-t", "skillkit", "-l", text)
        self.tmux("send-keys", "-t", "skillkit", "Enter")

    def press(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "skillkit", *keys)

    def screen(self, *, escapes: bool = False, history: bool = False) -> str:
        """The visible pane (wrapped lines joined), with colour codes if ``escapes``;
        with ``history``, the lines scrolled off above it too."""
        flags = ["-p", "-J"] + (["-e"] if escapes else []) + (["-S", "-"] if history else [])
        return self.tmux("capture-pane", *flags, "-t", "skillkit")

    def wait_for(
        self,
        expected: str | Callable[[str], bool],
        *,
        escapes: bool = False,
        history: bool = False,
    ) -> str:
        """Poll the screen until it contains ``expected`` (or the predicate holds); with
        ``history`` the lines scrolled off the top count too."""
        check = expected if callable(expected) else (lambda screen: expected in screen)
        deadline = time.monotonic() + POLL_TIMEOUT
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen(escapes=escapes, history=history)
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {expected!r}; the screen was:\n{screen}")

    def wait_for_prompt_count(self, count: int) -> str:
        """Wait until ``count`` input prompts (``›``) have been drawn (also those a long
        output scrolled off the top)."""
        return self.wait_for(lambda screen: _prompts(screen) >= count, history=True)

    def wait_for_prompt(self) -> str:
        """Wait until skillkit reads the next prompt: the last input line on the screen is
        the empty prompt (``›``), not a run's input line (``»``). An answer's text shows
        before its run ends, and a line typed (Enter) while the run ends steers that run
        instead of being the next prompt or command: wait for this before typing on."""
        return self.wait_for(_awaits_prompt)

    def restart(self, *args: str, cwd: Path = ROOT) -> None:
        """End the current session (skillkit must have exited) and start a new one."""
        self.tmux("kill-session", "-t", "skillkit")
        self.exit_file.unlink(missing_ok=True)
        self.start(*args, cwd=cwd)

    def wait_exit(self) -> int:
        """Wait for skillkit to exit; its exit code. What it printed last may not be on
        the pane yet (tmux reads the terminal in its own time): ``wait_for`` that text
        rather than reading ``screen()`` once."""
        deadline = time.monotonic() + POLL_TIMEOUT
        while time.monotonic() < deadline:
            if self.exit_file.exists() and self.exit_file.read_text().strip():
                return int(self.exit_file.read_text())
            time.sleep(0.05)
        raise AssertionError(f"skillkit did not exit; the screen was:\n{self.screen()}")


def _prompts(screen: str) -> int:
    return sum(1 for line in screen.splitlines() if line.startswith("›"))


def _awaits_prompt(screen: str) -> bool:
    inputs = [line.rstrip() for line in screen.splitlines() if line.startswith(("›", "»"))]
    return bool(inputs) and inputs[-1] == "›"
