"""``skillkit --sandbox``: the flag reaches every command the agent runs, and ``on``
fails closed before anything starts where no sandbox can run."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from skillkit.cli import main
from skillkit.runtime.sandbox import Bubblewrap, find_bubblewrap

FOUND = find_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLKIT_MODEL", raising=False)
    monkeypatch.chdir(folder)
    return folder


def bash_script(folder: Path, command: str) -> str:
    script = folder.parent / "script.yaml"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                    {"text": "done"},
                ]
            }
        )
    )
    return f"scripted:{script}"


def run_cli(*flags: str, model: str) -> int:
    """``skillkit FLAGS -p go`` with every tool call allowed (the gate is not under test)."""
    return main([*flags, "--dangerously-bypass-permissions", "-p", "go", "--model", model])


def test_sandbox_on_without_bubblewrap_stops_before_the_run(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    model = bash_script(project, "touch ran")
    code = main(
        ["--sandbox", "on", "--dangerously-bypass-permissions", "-p", "go", "--model", model]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        "skillkit: error: sandbox is on but unavailable: bwrap not found; "
        "install the bubblewrap package\n"
    )
    assert not (project / "ran").exists()


@needs_bwrap
@pytest.mark.parametrize("flag", [[], ["--sandbox", "on"]])
def test_the_agents_bash_is_confined_to_the_workspace(
    project: Path, flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    outside = Path.cwd().parent.parent / f"outside-{secrets.token_hex(4)}"
    probe = Path(__file__).resolve().parent / f".skillkit-cli-probe-{secrets.token_hex(4)}"
    model = bash_script(project, f"echo in > inside.txt; echo out > {probe}; echo x > {outside}")
    try:
        code = run_cli(*flag, model=model)
    finally:
        leaked = probe.exists()
        probe.unlink(missing_ok=True)
    capsys.readouterr()
    assert code == 0
    assert (project / "inside.txt").read_text() == "in\n"
    assert not leaked and not outside.exists()


@needs_bwrap
def test_sandbox_off_runs_unconfined(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    probe = project.parent / "written-outside"
    model = bash_script(project, f"echo out > {probe}")
    code = main(
        ["--sandbox", "off", "--dangerously-bypass-permissions", "-p", "go", "--model", model]
    )
    capsys.readouterr()
    assert code == 0 and probe.read_text() == "out\n"


@needs_bwrap
def test_an_untrusted_project_cannot_switch_the_sandbox_off(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".skillkit").mkdir()
    (project / ".skillkit" / "settings.json").write_text(
        json.dumps({"sandbox": {"mode": "off", "network": True}})
    )
    probe = project.parent / "written-outside"
    model = bash_script(project, f"echo out > {probe}")
    code = run_cli(model=model)
    err = capsys.readouterr().err
    assert code == 0 and not probe.exists()
    assert "ignored project settings: sandbox.mode=off (the project is not trusted)" in err
    assert "ignored project settings: sandbox.network=true (the project is not trusted)" in err


# --------------------------------------------------------------------------- doctor


def sandbox_rows(report: str) -> list[str]:
    lines = report.split("Sandbox\n", 1)[1].splitlines()
    return [line.strip() for line in lines if line.strip()]


@needs_bwrap
def test_doctor_names_the_sandbox_in_force(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert isinstance(FOUND, Bubblewrap)
    assert main(["doctor"]) == 0
    rows = sandbox_rows(capsys.readouterr().out)
    assert rows[0].split(None, 1) == ["sandbox", f"bubblewrap {FOUND.version} (auto)"]
    assert rows[1].split(None, 1) == ["mode", "auto (settings files, default auto)"]
    assert main(["--sandbox", "off", "doctor"]) == 0
    rows = sandbox_rows(capsys.readouterr().out)
    assert rows[0].split(None, 1) == ["sandbox", "none (off)"]


def test_doctor_says_why_there_is_no_sandbox(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (project / ".skillkit").mkdir()
    (project / ".skillkit" / "settings.json").write_text('{"sandbox": {"mode": "off"}}')
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert main(["doctor"]) == 0
    rows = sandbox_rows(capsys.readouterr().out)
    assert rows[0].split(None, 1) == [
        "sandbox",
        "none — bwrap not found; install the bubblewrap package",
    ]
    assert any(row.startswith("! commands run unconfined") for row in rows)
    assert "! ignored project settings: sandbox.mode=off (the project is not trusted)" in rows
