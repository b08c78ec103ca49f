"""End to end with the real ``skillkit -p --mode json --model scripted:FILE``: the kernel
holds what the gate decided — a command run unasked as read-only cannot write, an
approved one cannot touch what runs code later, credential stores read empty, keys are
not in the environment, and without bubblewrap only the minimal core runs unasked.

The project and HOME live outside the host's /tmp (the sandbox's private /tmp would hide
them, and the tests would prove nothing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.cli import main
from skillkit.runtime.sandbox import Bubblewrap, find_bubblewrap
from tests.conftest import host_folder_outside_tmp

FOUND = find_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)
CANARY = "canary-e2e-5b1d-private"


@pytest.fixture
def outside() -> Iterator[Path]:
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        base = host_folder_outside_tmp()
    folder = Path(tempfile.mkdtemp(prefix="skillkit-kernel-cli-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = outside / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("notes\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / ".skillkit").mkdir()
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(CANARY + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLKIT_MODEL", raising=False)
    monkeypatch.chdir(folder)
    return folder


def script(folder: Path, *commands: str) -> str:
    path = folder.parent / "script.json"
    calls = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
        for command in commands
    ]
    path.write_text(json.dumps({"replies": [*calls, {"text": "done"}]}))
    return f"scripted:{path}"


def run(capsys: pytest.CaptureFixture[str], model: str, *flags: str) -> tuple[list[str], str]:
    """The text of each bash result the model read, and stderr."""
    code = main([*flags, "-p", "go", "--mode", "json", "--model", model])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    texts = []
    for line in captured.out.splitlines():
        event = json.loads(line)
        if event["type"] == "tool_execution_end":
            texts.append(event["payload"]["result"]["content"][0]["text"])
    return texts, captured.err


@needs_bwrap
def test_a_command_judged_read_only_can_no_longer_write_git_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = (project / ".git" / "config").read_bytes()
    model = script(project, "env time --output=.git/config cat notes.txt")
    [text], _ = run(capsys, model)
    assert (project / ".git" / "config").read_bytes() == config
    if "Permission denied" not in text:  # the classifier let it run: the kernel held it
        assert "Read-only file system" in text


@needs_bwrap
def test_a_rule_allowed_command_writes_the_workspace_but_not_what_runs_code_later(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "build.sh").write_text(
        "echo built > out.txt\n"
        "echo '[core] fsmonitor = touch pwned' >> .git/config\n"
        "mkdir -p .skillkit/plugins && echo 'import os' > .skillkit/plugins/x.py\n"
    )
    config = (project / ".git" / "config").read_bytes()
    model = script(project, "sh build.sh")
    [text], _ = run(capsys, model, "--allow", "bash(sh build.sh)")
    assert (project / "out.txt").read_text() == "built\n"
    assert (project / ".git" / "config").read_bytes() == config
    assert not (project / ".skillkit" / "plugins").exists()
    assert "Read-only file system" in text


@needs_bwrap
def test_the_ssh_key_reads_empty_and_printenv_shows_no_key(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + CANARY)
    model = script(project, "cat ~/.ssh/id_rsa", "printenv")
    # a bare printenv asks (it could show secrets): the user's rule lets it run here, so
    # what is checked is the environment the command really gets
    texts, _ = run(capsys, model, "--allow", "bash(cat ~/.ssh/id_rsa)", "--allow", "bash(printenv)")
    assert len(texts) == 2
    assert not texts[0].startswith("Permission denied")  # the rule let it run: it read
    assert "No such file" in texts[0]  # an empty folder where the keys were
    assert all(CANARY not in text for text in texts)
    assert "OPENAI_API_KEY" not in texts[1]
    assert "PATH=" in texts[1]  # printenv ran
    assert (Path(os.environ["HOME"]) / ".ssh" / "id_rsa").read_text() == CANARY + "\n"


def test_without_bubblewrap_only_the_minimal_core_runs_unasked(
    project: Path,
    outside: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bin_dir = outside / "bin"
    bin_dir.mkdir()
    for program in ("bash", "sh", "ls", "cat", "git", "env", "head"):
        found = shutil.which(program)
        if found is not None:
            (bin_dir / program).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    model = script(project, "ls", "cat notes.txt", "ls -la", "cat notes.txt | head -n 1 -")
    texts, err = run(capsys, model)
    assert err.count("NOT sandboxed") == 1
    assert "notes.txt" in texts[0]
    assert texts[1] == "notes"
    assert texts[2].startswith("Permission denied")
    assert texts[3].startswith("Permission denied")


@needs_bwrap
def test_a_deny_read_rule_reaches_the_sandbox_as_a_mask(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "secret.txt").write_text(CANARY + "\n")
    (project / "show.sh").write_text("cat secret.txt; grep -r canary .\n")
    model = script(project, "sh show.sh")
    [text], _ = run(capsys, model, "--allow", "bash(sh show.sh)", "--deny", "read(secret.txt)")
    assert not text.startswith("Permission denied")  # the rule let the script run
    assert CANARY not in text
