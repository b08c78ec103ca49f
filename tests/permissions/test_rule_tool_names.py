"""Tool names in permission rules: matched in any case, file families and wildcards
included; rules naming no known tool are found (the command warns about them)."""

from __future__ import annotations

from pathlib import Path

from skillkit.permissions.rules import RuleAction, RuleSet, Subject, parse_rule, unknown_tool_rules


def test_a_capitalised_command_rule_allows_the_command(tmp_path: Path) -> None:
    rules = RuleSet(workspace=tmp_path, home=tmp_path)
    rules.add("Bash(echo:*)", "allow")

    allowed = rules.evaluate("bash", [Subject.command("echo hi")])
    other = rules.evaluate("bash", [Subject.command("rm -rf build")])

    assert allowed.action is RuleAction.ALLOW
    assert other.action is None


def test_a_capitalised_command_rule_is_a_command_pattern_not_a_path(tmp_path: Path) -> None:
    # "git *" as a path glob would stop at "/"; as a command pattern "*" matches any text
    rules = RuleSet(workspace=tmp_path, home=tmp_path)
    rules.add("BASH(git log *)", "allow")

    assert rules.evaluate("bash", [Subject.command("git log a/b/c")]).allowed


def test_a_capitalised_file_rule_covers_its_whole_family(tmp_path: Path) -> None:
    rules = RuleSet(workspace=tmp_path, home=tmp_path)
    rules.add("READ(.env)", "deny")
    secret = Subject("path", (str(tmp_path / ".env"),))

    for tool in ("read", "grep", "find", "ls"):
        assert rules.evaluate(tool, [secret]).action is RuleAction.DENY, tool
    assert rules.evaluate("write", [secret]).action is None


def test_a_wildcard_tool_name_matches_in_any_case(tmp_path: Path) -> None:
    rules = RuleSet(workspace=tmp_path, home=tmp_path)
    rules.add("MCP__GitHub__*", "deny")

    assert rules.evaluate("mcp__github__push", []).action is RuleAction.DENY
    assert rules.evaluate("mcp__gitlab__push", []).action is None


def test_the_rule_keeps_its_spelling() -> None:
    assert parse_rule("Write(*.txt)", "allow").text == "Write(*.txt)"


def test_unknown_tool_rules_are_those_naming_nothing_offered() -> None:
    rules = [
        parse_rule(text, "allow")
        for text in (
            "Bash(ls)",
            "Write(*.txt)",
            "grep",
            "word_count",
            "Shell(ls)",
            "mcp__x__y",
            "w*",
        )
    ]

    unknown = unknown_tool_rules(rules, ["read", "Word_Count"])

    # bash and the file tools are always known; wildcards and MCP tools never count
    assert [rule.text for rule in unknown] == ["Shell(ls)"]
