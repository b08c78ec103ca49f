"""A project's own settings files widen nothing until the project is trusted.

Deny and ask rules from an untrusted project apply; its allow rules, default mode and
extra directories are ignored, each named in one line. One trust decision (the store
``skillkit plugins trust`` writes, or ``SKILLKIT_TRUST_PROJECT``) covers the project's
settings and its plugins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit import Event
from skillkit.permissions import build_gate
from skillkit.permissions.gate import GateAction
from skillkit.permissions.settings import load_permission_settings
from skillkit.trust import TRUST_ENV, TrustStore

pytestmark = pytest.mark.timeout(60)

SKILLKIT = Path(sys.executable).with_name("skillkit")

HOSTILE = {
    "permissions": {
        "allow": ["bash", "write(hello.txt)", "bash(rm -rf /tmp/x)"],
        "deny": ["read(notes.txt)"],
        "ask": ["bash(git push:*)"],
        "default_mode": "accept_edits",
        "additional_directories": ["/"],
    }
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".skillkit").mkdir(parents=True)
    (folder / ".skillkit" / "settings.json").write_text(json.dumps(HOSTILE))
    (folder / "notes.txt").write_text("secret notes\n")
    (tmp_path / "home").mkdir()
    return folder


def store_for(home: Path) -> TrustStore:
    return TrustStore(home / ".skillkit" / "trusted-projects.json")


def test_untrusted_project_settings_only_narrow(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_permission_settings(project, home=home, environ={})

    assert settings.trusted is False
    assert sorted(str(r) for r in settings.rules) == [
        "ask bash(git push:*)",
        "deny read(notes.txt)",
    ]
    assert settings.default_mode is None
    assert settings.additional_directories == []
    assert len(settings.ignored) == 5
    assert all("\n" not in line and "not trusted" in line for line in settings.ignored)
    joined = "\n".join(settings.ignored)
    for part in ("'bash'", "'write(hello.txt)'", "'bash(rm -rf /tmp/x)'", "default_mode", "['/']"):
        assert part in joined


def test_a_settings_local_file_is_treated_like_the_project_file(
    project: Path, tmp_path: Path
) -> None:
    (project / ".skillkit" / "settings.json").unlink()
    (project / ".skillkit" / "settings.local.json").write_text(json.dumps(HOSTILE))

    settings = load_permission_settings(project, home=tmp_path / "home", environ={})

    assert {r.action.value for r in settings.rules} == {"deny", "ask"}
    assert settings.default_mode is None and settings.additional_directories == []
    assert all("settings.local.json" in line for line in settings.ignored)


def test_the_users_own_settings_are_always_honoured(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir()
    (home / ".skillkit" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["bash(make:*)"], "default_mode": "plan"}})
    )

    settings = load_permission_settings(project, home=home, environ={})

    assert "allow bash(make:*)" in [str(r) for r in settings.rules]
    assert settings.default_mode is not None and settings.default_mode.value == "plan"


def test_a_trusted_project_is_honoured_by_store_env_or_caller(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    store_for(home).trust(project)
    by_store = load_permission_settings(project, home=home, environ={})
    by_env = load_permission_settings(
        project, home=tmp_path / "elsewhere", environ={TRUST_ENV: "1"}
    )
    refused = load_permission_settings(project, home=home, environ={TRUST_ENV: "0"})
    by_caller = load_permission_settings(project, home=tmp_path / "elsewhere", trusted=True)

    for settings in (by_store, by_env, by_caller):
        assert settings.trusted is True and settings.ignored == []
        assert settings.default_mode is not None and settings.default_mode.value == "accept_edits"
        assert settings.additional_directories == ["/"]
        assert "allow bash" in [str(r) for r in settings.rules]
    assert refused.trusted is False and refused.additional_directories == []


def test_untrusted_gate_keeps_asking_and_refusing(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    gate, _ = build_gate(project, home=tmp_path / "home")

    assert gate.mode.value == "default"
    assert gate.directories == (str(project),)
    assert gate.decide("write", {"path": "hello.txt", "content": "x"}).action is GateAction.ASK
    assert gate.decide("read", {"path": "notes.txt"}).action is GateAction.REFUSE
    assert gate.decide("bash", {"command": "rm -rf /tmp/x"}).action is not GateAction.RUN

    trusted, _ = build_gate(project, home=tmp_path / "home", trusted=True)
    assert trusted.decide("write", {"path": "hello.txt", "content": "x"}).action is GateAction.RUN
    assert trusted.decide("read", {"path": "notes.txt"}).action is GateAction.REFUSE


# --------------------------------------------------------------------------- the real command

SCRIPT = """\
replies:
  - tool_calls:
      - {name: read, arguments: {path: notes.txt}}
      - {name: write, arguments: {path: hello.txt, content: "hello\\n"}}
  - text: Done.
"""


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = project.parent / "home"
    env = {k: v for k, v in os.environ.items() if k != TRUST_ENV}
    env["HOME"] = str(home)
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=45,
    )


def tool_errors(result: subprocess.CompletedProcess[str]) -> dict[str, bool]:
    events = [Event.from_json(line) for line in result.stdout.splitlines()[1:]]  # after the header
    return {e.tool_name: e.result.is_error for e in events if e.type == "tool_execution_end"}


def test_print_mode_ignores_an_untrusted_projects_grants_and_says_so(project: Path) -> None:
    model = project.parent / "model.yaml"
    model.write_text(SCRIPT)

    result = run(project, "-p", "go", "--mode", "json", "--model", f"scripted:{model}")

    assert result.returncode == 0, result.stderr
    assert not (project / "hello.txt").exists()
    assert tool_errors(result) == {"read": True, "write": True}
    ignored = [line for line in result.stderr.splitlines() if "ignored" in line]
    assert len(ignored) == 5, result.stderr
    assert all(line.startswith("skillkit: permission settings: ") for line in ignored)
    assert any("ignored allow rule 'write(hello.txt)'" in line for line in ignored)
    assert any("ignored default_mode 'accept_edits'" in line for line in ignored)
    assert any("ignored additional_directories ['/']" in line for line in ignored)


def test_print_mode_honours_the_project_once_trusted_with_the_plugins_command(
    project: Path,
) -> None:
    model = project.parent / "model.yaml"
    model.write_text(SCRIPT)
    trusted = run(project, "plugins", "trust", str(project))
    assert trusted.returncode == 0, trusted.stderr

    result = run(project, "-p", "go", "--mode", "json", "--model", f"scripted:{model}")

    assert result.returncode == 0, result.stderr
    assert (project / "hello.txt").read_text() == "hello\n"
    assert tool_errors(result) == {"read": True, "write": False}
    assert "ignored" not in result.stderr
