"""Permission rules: parsing, matching and precedence; loading from settings files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.permissions.modes import PermissionMode
from skillkit.permissions.rules import RuleAction, RuleSet, Subject, parse_rule
from skillkit.permissions.settings import load_permission_settings

WS = "/work/project"
HOME = "/home/dev"


def rules(**by_action: list[str]) -> RuleSet:
    out = RuleSet(workspace=WS, home=HOME)
    for action, texts in by_action.items():
        for text in texts:
            out.add(text, action)
    return out


def path(p: str) -> Subject:
    return Subject("path", (p,))


def test_parse_rule_forms() -> None:
    rule = parse_rule("bash(git status:*)", "allow", "user")
    assert (rule.tool, rule.pattern, rule.source, rule.text) == (
        "bash",
        "git status:*",
        "user",
        "bash(git status:*)",
    )
    assert parse_rule("read", "deny").pattern is None
    assert parse_rule("  edit( src/** ) ", "ask").pattern == "src/**"
    assert parse_rule("bash(echo (nested))", "allow").pattern == "echo (nested)"


@pytest.mark.parametrize("bad", ["", "bash(", "bash()", "(x)", "ba sh(x)", "bash(x) y"])
def test_malformed_rules_are_rejected_with_a_clear_message(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid permission rule"):
        parse_rule(bad, "allow")


def test_deny_beats_ask_beats_allow() -> None:
    rs = rules(allow=["bash(git *)"], ask=["bash(git push:*)"], deny=["bash(git push --force*)"])
    assert rs.evaluate("bash", [Subject.command("git status")]).action is RuleAction.ALLOW
    assert rs.evaluate("bash", [Subject.command("git push origin")]).action is RuleAction.ASK
    found = rs.evaluate("bash", [Subject.command("git push --force")])
    assert found.action is RuleAction.DENY
    assert found.matched is not None and found.matched.text == "bash(git push --force*)"


def test_order_of_addition_does_not_change_precedence() -> None:
    a = rules(deny=["read(**)"], allow=["read(src/**)"])
    b = rules(allow=["read(src/**)"], deny=["read(**)"])
    for rs in (a, b):
        assert rs.evaluate("read", [path(f"{WS}/src/a.py")]).action is RuleAction.DENY


def test_command_prefix_pattern_respects_word_boundaries() -> None:
    rs = rules(allow=["bash(npm test:*)"])
    assert rs.evaluate("bash", [Subject.command("npm test")]).allowed
    assert rs.evaluate("bash", [Subject.command("npm   test  --watch")]).allowed
    assert not rs.evaluate("bash", [Subject.command("npm testx")]).allowed
    assert not rs.evaluate("bash", [Subject.command("npm run test")]).allowed


def test_every_part_of_a_compound_command_must_be_allowed() -> None:
    rs = rules(allow=["bash(git status*)", "bash(ls*)"])
    both = [Subject.command("git status"), Subject.command("ls -la")]
    assert rs.evaluate("bash", both).allowed
    mixed = [Subject.command("git status"), Subject.command("rm -rf x")]
    found = rs.evaluate("bash", mixed)
    assert not found.allowed and found.unmatched == ["rm -rf x"]


def test_exact_and_broad_allow_rules() -> None:
    assert parse_rule("bash(git push --force)", "allow").broad is False
    assert parse_rule("bash(git *)", "allow").broad is True
    assert parse_rule("bash", "allow").broad is True
    assert parse_rule(r"bash(rm \*.o)", "allow").broad is False
    rs = rules(allow=[r"bash(rm \*.o)"])
    assert rs.evaluate("bash", [Subject.command("rm *.o")]).exact
    assert not rs.evaluate("bash", [Subject.command("rm a.o")]).allowed


@pytest.mark.parametrize(
    ("pattern", "target", "matches"),
    [
        ("~/.ssh/**", f"{HOME}/.ssh/id_rsa", True),
        ("~/.ssh/**", f"{HOME}/.ssh", True),
        ("~/.ssh/**", f"{HOME}/.sshx/key", False),
        ("src/**", f"{WS}/src/a/b/c.py", True),
        ("src/**", f"{WS}/lib/src/a.py", False),
        ("src/*.py", f"{WS}/src/a.py", True),
        ("src/*.py", f"{WS}/src/sub/a.py", False),
        ("src/**/*.py", f"{WS}/src/a.py", True),
        ("src/**/*.py", f"{WS}/src/x/y/a.py", True),
        ("./docs", f"{WS}/docs/index.md", True),
        ("/etc/**", "/etc/passwd", True),
        ("/etc/**", f"{WS}/etc/x", False),
        (".env", f"{WS}/.env", True),
        (".env", "/elsewhere/deep/.env", True),
        (".env", f"{WS}/.env.example", False),
        ("*.pem", f"{HOME}/keys/server.pem", True),
        ("secret?.txt", f"{WS}/a/secret1.txt", True),
        ("[ab].txt", f"{WS}/b.txt", True),
        ("[!ab].txt", f"{WS}/b.txt", False),
    ],
)
def test_path_patterns(pattern: str, target: str, matches: bool) -> None:
    rs = rules(deny=[f"read({pattern})"])
    assert (rs.evaluate("read", [path(target)]).deny is not None) is matches


def test_a_symlink_is_judged_by_every_spelling() -> None:
    rs = rules(deny=["read(~/.ssh/**)"], allow=["read(src/**)"])
    link = Subject("path", (f"{WS}/src/key", f"{HOME}/.ssh/id_rsa"))
    found = rs.evaluate("read", [link])
    assert found.deny is not None and not found.allowed


def test_tool_name_patterns_and_bare_tools() -> None:
    rs = rules(allow=["mcp__github__*"], deny=["mcp__github__delete_repo"])
    assert rs.evaluate("mcp__github__list", [Subject.text("{}")]).allowed
    assert rs.evaluate("mcp__github__delete_repo", [Subject.text("{}")]).action is RuleAction.DENY
    assert rs.evaluate("mcp__gitlab__list", [Subject.text("{}")]).action is None


def test_rules_track_their_source() -> None:
    rs = rules(allow=["read"])
    rs.add("bash(ls)", "allow", source="session")
    assert [r.source for r in rs] == ["sdk", "session"]
    assert [r.text for r in rs.remove_source("session")] == ["bash(ls)"]
    assert len(rs) == 1


@given(st.text(max_size=40))
def test_parse_rule_never_fails_with_anything_but_value_error(text: str) -> None:
    try:
        rule = parse_rule(text, "deny")
    except ValueError:
        return
    rs = RuleSet([rule], workspace=WS, home=HOME)
    rs.evaluate(rule.tool, [Subject.command(text), path(f"{WS}/{text}"), Subject.text(text)])


# --------------------------------------------------------------------------- settings files


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_user_and_project_settings_are_merged(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    write(home / ".skillkit/settings.json", {"permissions": {"deny": ["read(~/.ssh/**)"]}})
    write(
        ws / ".skillkit/settings.json",
        {
            "permissions": {
                "allow": ["bash(npm test:*)"],
                "ask": ["bash(git push:*)"],
                "defaultMode": "accept_edits",
                "additionalDirectories": ["../shared"],
            }
        },
    )
    write(ws / ".skillkit/settings.local.json", {"permissions": {"allow": ["edit(src/**)"]}})
    settings = load_permission_settings(ws, home=home, trusted=True)
    assert [(r.source, str(r)) for r in settings.rules] == [
        ("user", "deny read(~/.ssh/**)"),
        ("project", "allow bash(npm test:*)"),
        ("project", "ask bash(git push:*)"),
        ("local", "allow edit(src/**)"),
    ]
    assert settings.default_mode is PermissionMode.ACCEPT_EDITS
    assert settings.additional_directories == [str(tmp_path / "shared")]
    assert settings.problems == []


def test_bad_settings_are_reported_not_raised(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    write(home / ".skillkit/settings.json", "{not json")
    write(
        ws / ".skillkit/settings.json",
        {"permissions": {"allow": ["bash(", "read"], "deny": "read", "default_mode": "bypass"}},
    )
    settings = load_permission_settings(ws, home=home, trusted=True)
    assert [str(r) for r in settings.rules] == ["allow read"]
    assert settings.default_mode is None
    assert len(settings.problems) == 4
    assert any("not valid JSON" in p for p in settings.problems)
    assert any("bypass" in p for p in settings.problems)


def test_missing_settings_files_are_fine(tmp_path: Path) -> None:
    settings = load_permission_settings(tmp_path / "ws", home=tmp_path / "home")
    assert settings.rules == [] and settings.problems == [] and settings.files == []
