"""``/model`` in a real terminal (tmux) on the embedded model: switching away stops its
llama.cpp server, naming the model in use starts none, and a provider without its key
fails at once, naming the variable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from skillkit.local import find_default_gguf
from tests.frontends.tmux_terminal import SKILLKIT, Terminal

pytestmark = pytest.mark.timeout(120)


def _skillkit_pid(terminal: Terminal) -> int:
    shell = terminal.tmux("list-panes", "-t", "skillkit", "-F", "#{pane_pid}").strip()
    children = subprocess.run(
        ["pgrep", "-P", shell], capture_output=True, text=True, timeout=10
    ).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


def _listening_sockets(pid: int) -> int:
    """How many TCP sockets the process has listening (llama.cpp servers, here)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    listening = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
                listening += 1
    return listening


def test_model_switching_never_leaves_a_server_running(terminal: Terminal, tmp_path: Path) -> None:
    find_default_gguf()  # fails with the install command when the weights are missing
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - text: scripted answer\n")
    env_free = tmp_path / "work"
    env_free.mkdir()
    terminal.program = Path("/usr/bin/env")  # without the keys this machine may have
    terminal.start(
        "-u", "OPENAI_API_KEY", "-u", "OPENAI_BASE_URL", str(SKILLKIT), "--model", "local",
        cwd=env_free,
    )  # fmt: skip
    terminal.wait_for_prompt_count(1)
    pid = _skillkit_pid(terminal)
    assert _listening_sockets(pid) == 1

    terminal.type("/model local")
    terminal.wait_for("already using model local")
    assert _listening_sockets(pid) == 1

    terminal.type(f"/model scripted:{script}")
    terminal.wait_for(f"using model scripted:{script}")
    assert _listening_sockets(pid) == 0

    terminal.type("/model local")
    terminal.wait_for_prompt_count(4)
    terminal.type("/model local")
    terminal.wait_for_prompt_count(5)
    assert _listening_sockets(pid) == 1

    terminal.type("/model openai:gpt-4o")
    terminal.wait_for("no API key for openai: set OPENAI_API_KEY")
    assert _listening_sockets(pid) == 1
    terminal.type("/exit")
    assert terminal.wait_exit() == 0
