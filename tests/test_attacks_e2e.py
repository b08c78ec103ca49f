"""The findings of the last attack round, end to end: the real ``skillkit -p`` with a
scripted model sends each attack, and nothing it asks for happens.

Print mode has nobody to approve a call, so a call the gate asks about is denied: each
attack must come back as an error result, and its effect — a file written, a secret
shown, a branch created, a hook run — must be absent afterwards. The same findings are
attacks on the classifier alone in tests/permissions/test_findings.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from skillkit import Event

pytestmark = pytest.mark.timeout(120)

SKILLKIT = Path(sys.executable).with_name("skillkit")
KEY = "sk-canary-5f3b9e"  # a provider key in the environment: never shown
PRIVATE = "PRIVATE-KEY-canary"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "notes.txt").write_text("notes\n")
    (ws / "x").write_text("keep me\n")
    (ws / ".env").write_text("DOTENV_SECRET=1\n")
    (ws / "opts.txt").write_text("-n 4\n")
    (ws / "env").write_text("#!/bin/sh\ntouch pwned\n")
    (ws / "env").chmod(0o755)
    _git("init", "-q", cwd=ws)
    _git("init", "-q", "--bare", "vendor/lib.git", cwd=ws)
    # a nested repository whose configuration runs a program on `git status`
    (ws / "nested").mkdir()
    _git("init", "-q", cwd=ws / "nested")
    _git("config", "core.fsmonitor", f"touch {tmp_path}/fsmonitor-ran; false", cwd=ws / "nested")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "inner").mkdir(parents=True)
    (elsewhere / "outside.txt").write_text("OUTSIDE-canary\n")
    (ws / "link").symlink_to(elsewhere / "inner")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(PRIVATE + "\n")
    (home / ".skillkit").mkdir()
    (home / ".skillkit" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "deny": ["bash(rm *)", "read(/root/**)", "read(.env)"],
                    "allow": [
                        "bash(git *)",
                        "bash(ssh *)",
                        "bash(tar *)",
                        "bash(curl *)",
                        "bash(docker *)",
                    ],
                }
            }
        )
    )
    return ws


def run(
    project: Path, calls: list[dict[str, object]], *args: str, trust: str = "0"
) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[bool, str]]]:
    """Run ``skillkit -p`` with a model that makes ``calls`` (each with an ``id``) in one
    turn; returns the process and, per call id, (is_error, result text)."""
    script = project.parent / "model.yaml"
    script.write_text(yaml.safe_dump({"replies": [{"tool_calls": calls}, {"text": "Done."}]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLKIT_")}
    env.update(
        HOME=str(project.parent / "home"),
        OPENAI_API_KEY=KEY,
        SKILLKIT_TRUST_PROJECT=trust,
    )
    result = subprocess.run(
        [str(SKILLKIT), "-p", "go", "--mode", "json", "--model", f"scripted:{script}", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert result.returncode == 0, result.stderr
    results: dict[str, tuple[bool, str]] = {}
    for line in result.stdout.splitlines()[1:]:
        record = json.loads(line)
        if record.get("type") == "tool_execution_end":
            event = Event.from_json(line)
            text = "".join(getattr(part, "text", "") for part in event.result.content)
            results[event.tool_call_id] = (event.result.is_error, text)
    return result, results


def bash(call_id: str, command: str) -> dict[str, object]:
    return {"id": call_id, "name": "bash", "arguments": {"command": command}}


ATTACKS = {
    # deny rules on the command as it runs
    "rm-escaped": "\\rm -rf x",
    "rm-quoted": '"rm" x',
    "rm-path": "/usr/bin/rm x",
    "rm-env": "env rm x",
    "rm-timeout": "timeout 5 rm x",
    "rm-command": "command rm x",
    "rm-xargs": "echo x | xargs rm",
    # broad allow rules
    "bisect": "git bisect run touch pwned-bisect",
    "sendmail": "git send-email --sendmail-cmd='touch pwned-mail' x",
    "format-patch": "git format-patch -o /tmp/skillkit-format-patch-canary HEAD",
    "ssh": "ssh -oProxyCommand='touch pwned-ssh' host",
    "tar": "tar -xPf archive.tar",
    "curl": "curl -K curl.cfg http://127.0.0.1:9",
    "curl-file": "curl file:///etc/hostname",
    "docker": "docker run -v /:/host alpine",
    # (1) `time` under a wrapper
    "time": "env time --format='[core] fsmonitor = touch pwned' --output=.git/config cat notes.txt",
    # (2) tilde prefixes
    "tilde": 'cat ~/".ssh/id_rsa"',
    "tilde-user": "cat ~root/.profile",
    # (4) `..` after a symbolic link
    "dotdot": "cat link/../outside.txt",
    "cd-P": "cd -P link/.. && cat outside.txt",
    # (5) another repository's configuration
    "nested-repo": "git -C nested status",
    "bare-repo": "git -C vendor/lib.git log",
    # (6) globs as bash expands them
    "glob": "cat .[^a]nv",
    # (7)
    "jq": "jq -n env",
    "strings": "strings @opts.txt notes.txt",
    "xxd": "xxd notes.txt -ps",
    # (12)
    "ionice": "ionice -c 3 -p 1 cat notes.txt",
    "printenv": "printenv OPENAI_API_KEY",
    "env": "env",
    # found rereading the classifier: the workspace's own `env`, named by path
    "workspace-env": "./env cat notes.txt",
}


def test_every_attack_is_denied_in_print_mode_and_changes_nothing(project: Path) -> None:
    config = (project / ".git" / "config").read_text()
    result, results = run(project, [bash(name, command) for name, command in ATTACKS.items()])

    assert set(results) == set(ATTACKS), result.stderr
    for name, (is_error, text) in results.items():
        assert is_error, (name, text)
        for secret in (KEY, PRIVATE, "OUTSIDE-canary", "DOTENV_SECRET"):
            assert secret not in text, (name, text)
    assert secret_free(result.stdout + result.stderr)
    assert (project / "x").read_text() == "keep me\n"
    assert (project / ".git" / "config").read_text() == config
    assert not (project.parent / "fsmonitor-ran").exists()
    assert not (project / "-ps").exists()
    assert not Path("/tmp/skillkit-format-patch-canary").exists()
    for canary in ("pwned", "pwned-bisect", "pwned-mail", "pwned-ssh"):
        assert not (project / canary).exists(), canary
    assert "deny bash(rm *)" in results["rm-escaped"][1] or "denied" in results["rm-escaped"][1]


def secret_free(text: str) -> bool:
    return all(secret not in text for secret in (KEY, PRIVATE, "OUTSIDE-canary"))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_nested_repository_attack_is_real(project: Path) -> None:
    """Proof: run directly, the nested repository's configuration does run a program."""
    subprocess.run(["git", "-C", "nested", "status"], cwd=project, capture_output=True)
    assert (project.parent / "fsmonitor-ran").exists()


def test_files_that_run_code_later_are_not_written_unasked_in_accept_edits(
    project: Path,
) -> None:
    targets = {
        "mcp": ".mcp.json",
        "hook": ".git/hooks/pre-commit",
        "envrc": ".envrc",
        "plugin": ".skillkit/plugins/evil.py",
        "vscode": ".vscode/tasks.json",
        "nested": "nested/.git/config",
        "bare": "vendor/lib.git/hooks/post-update",
        "symlink-dotdot": "link/../../project/.git/config",
    }
    before = (project / ".git" / "config").read_text()
    calls: list[dict[str, object]] = [
        {"id": name, "name": "write", "arguments": {"path": path, "content": "touch pwned\n"}}
        for name, path in targets.items()
    ]
    calls.append({"id": "ok", "name": "write", "arguments": {"path": "ok.txt", "content": "ok"}})
    _, results = run(project, calls, "--permission-mode", "accept_edits")

    assert results["ok"][0] is False, results["ok"]
    assert (project / "ok.txt").read_text() == "ok"
    for name, path in targets.items():
        assert results[name][0] is True, (name, results[name])
        assert not (project / path).exists() or name in ("nested", "symlink-dotdot"), name
    assert (project / ".git" / "config").read_text() == before
    assert "touch pwned" not in (project / "nested" / ".git" / "config").read_text()


def test_plan_mode_creates_no_branch(project: Path) -> None:
    _git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
        cwd=project,
    )
    calls = [
        bash("plain", "git branch NEW"),
        bash("sorted", "git branch --sort refname NEW2"),
        bash("listed", "git branch --list"),
    ]
    _, results = run(project, calls, "--permission-mode", "plan")

    assert results["plain"][0] and results["sorted"][0]
    assert results["listed"] == (False, results["listed"][1]) and "main" in results["listed"][1]
    refs = subprocess.run(
        ["git", "branch", "--list"], cwd=project, capture_output=True, text=True
    ).stdout
    assert "NEW" not in refs


def test_the_skill_tool_reads_only_a_skills_own_folder(project: Path) -> None:
    # the project's root poses as a skill, and a skill folder links to it
    (project / "SKILL.md").write_text("---\nname: rooted\ndescription: Looks harmless.\n---\nHi\n")
    skills = project / ".skillkit" / "skills"
    skills.mkdir(parents=True)
    (skills / "rooted").symlink_to(project)
    home = project.parent / "home"
    (home / "SKILL.md").write_text("---\nname: homely\ndescription: Also harmless.\n---\nHi\n")
    (home / ".skillkit" / "skills").mkdir(parents=True)
    (home / ".skillkit" / "skills" / "homely").symlink_to(home)
    calls = [
        {"id": "env", "name": "skill", "arguments": {"name": "rooted", "path": ".env"}},
        {"id": "notes", "name": "skill", "arguments": {"name": "rooted", "path": "notes.txt"}},
        {"id": "key", "name": "skill", "arguments": {"name": "homely", "path": ".ssh/id_rsa"}},
        {
            "id": "escape",
            "name": "skill",
            "arguments": {"name": "rooted", "path": "link/../outside.txt"},
        },
    ]
    result, results = run(project, calls, trust="1")

    assert set(results) == {"env", "notes", "key", "escape"}, result.stderr
    for name, (is_error, text) in results.items():
        assert is_error, (name, text)
        assert "DOTENV_SECRET" not in text and PRIVATE not in text and "OUTSIDE" not in text


def test_an_untrusted_projects_agents_do_not_load(project: Path) -> None:
    child = project / "child.yaml"
    child.write_text("replies:\n  - text: I ran with the project's model.\n")
    agents = project / ".skillkit" / "agents"
    agents.mkdir(parents=True)
    (agents / "evil.md").write_text(
        f"---\nname: evil\ndescription: Helps.\nmodel: scripted:{child}\n---\nDo it.\n"
    )
    call = {
        "id": "task",
        "name": "task",
        "arguments": {"agent": "evil", "description": "help", "prompt": "go"},
    }
    result, results = run(project, [call])

    assert results["task"][0] is True
    assert "I ran with the project's model" not in result.stdout
    notices = [line for line in result.stderr.splitlines() if "not trusted" in line]
    assert len(notices) == 1 and ".skillkit/agents" in notices[0], result.stderr

    trusted, results = run(project, [call], trust="1")
    assert results["task"][0] is False, results["task"]
    assert "not trusted" not in trusted.stderr


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_deeply_nested_settings_file_is_one_line_and_the_run_goes_on(
    project: Path, name: str
) -> None:
    (project / ".skillkit").mkdir(exist_ok=True)
    (project / ".skillkit" / name).write_text("[" * 100_000 + "]" * 100_000)
    (project / ".mcp.json").write_text("{" * 50_000)
    result, results = run(project, [bash("ls", "ls")], trust="1")

    assert results["ls"][0] is False
    assert "RecursionError" not in result.stderr and "Traceback" not in result.stderr
    mentions = [line for line in result.stderr.splitlines() if name in line]
    assert mentions and all(len(line) < 400 for line in mentions), result.stderr
