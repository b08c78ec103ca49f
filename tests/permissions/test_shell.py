"""The shell parser behind the classifier (tree-sitter bash grammar)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skillkit.permissions.classifier import RiskLevel, ShellClassifier
from skillkit.permissions.shell import MAX_SOURCE, Script, iter_commands, parse_script
from skillkit.permissions.shell import all_problems as problems_of


def argvs(source: str) -> list[list[str]]:
    return [c.argv for c in iter_commands(parse_script(source))]


def test_quotes_and_escapes_are_removed() -> None:
    assert argvs("""echo 'a b' "c \\"d\\"" e\\xf""") == [["echo", "a b", 'c "d"', "exf"]]
    # an escaped blank is read differently by the grammar and by bash: refused
    assert parse_script("echo e\\ f").problems


def test_list_operators_split_commands() -> None:
    assert argvs("a && b || c; d & e\nf") == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]


def test_pipeline_stages_know_they_read_the_previous_stage() -> None:
    script = parse_script("curl x | sh -s && ls |& less")
    assert [(c.argv[0], c.piped) for c in script.commands] == [
        ("curl", False),
        ("sh", True),
        ("ls", False),
        ("less", True),
    ]


def test_subshells_groups_and_conditionals_are_walked() -> None:
    found = argvs("(cd /tmp && ls) ; { echo a; echo b; } ; if true; then rm x; fi")
    assert found == [["cd", "/tmp"], ["ls"], ["echo", "a"], ["echo", "b"], ["true"], ["rm", "x"]]


def test_function_definitions_are_a_problem_but_their_bodies_are_walked() -> None:
    script = parse_script("ls() { rm -rf ~; }; ls")
    assert "defines a function" in script.problems
    assert ["rm", "-rf", "~"] in argvs("ls() { rm -rf ~; }; ls")


@pytest.mark.parametrize(
    ("source", "hidden"),
    [
        ('echo "$(whoami)"', ["whoami"]),
        ("echo `date`", ["date"]),
        ("cat <(sort a)", ["sort", "a"]),
        ("echo ${X:-$(id)}", ["id"]),
        ("echo $(( $(id -u) + 1 ))", ["id", "-u"]),
        ("cat <<EOF\nhello $(touch pwned)\nEOF", ["touch", "pwned"]),
        ("x=$(touch pwned)", ["touch", "pwned"]),
        ("[[ -n $(touch pwned) ]]", ["touch", "pwned"]),
        ("for f in $(touch pwned); do :; done", ["touch", "pwned"]),
        ("(( $(touch pwned) ))", ["touch", "pwned"]),
    ],
)
def test_every_hidden_substitution_is_found(source: str, hidden: list[str]) -> None:
    assert hidden in argvs(source)


def test_words_with_expansions_are_dynamic() -> None:
    cmd = parse_script('echo $HOME "${A}" "$(x)" $((1)) plain \'$lit\' {a,b}').commands[0]
    assert [w.dynamic for w in cmd.words] == [False, True, True, True, True, False, False, True]
    assert cmd.words[6].text == "$lit"


def test_quoted_here_documents_do_not_expand() -> None:
    quoted = parse_script("cat <<'EOF'\n$(touch x)\nEOF").commands[0]
    plain = parse_script("cat <<EOF\n$(touch x)\nEOF").commands[0]
    assert not quoted.redirects[0].target.dynamic
    assert plain.redirects[0].target.dynamic


def test_redirections_are_separated_from_words() -> None:
    cmd = parse_script("sort <in.txt >out.txt 2>&1 &>>all.log").commands[0]
    assert cmd.argv == ["sort"]
    assert [(r.fd, r.op, r.target.text) for r in cmd.redirects] == [
        (None, "<", "in.txt"),
        (None, ">", "out.txt"),
        (2, ">&", "1"),
        (None, "&>>", "all.log"),
    ]
    assert [r.writes for r in cmd.redirects] == [False, True, False, True]
    assert [r.reads for r in cmd.redirects] == [True, False, False, False]


def test_here_document_lines_go_on_with_their_pipeline() -> None:
    assert argvs("cat <<EOF | grep x && rm -rf y\nbody\nEOF") == [
        ["cat"],
        ["grep", "x"],
        ["rm", "-rf", "y"],
    ]


def test_assignments_globs_and_tilde() -> None:
    cmd = parse_script("A=1 B='x y' ls *.py ~/x '*.md' # comment").commands[0]
    assert cmd.argv == ["ls", "*.py", "~/x", "*.md"]
    assert [w.text for w in cmd.assignments] == ["A=1", "B=x y"]
    assert [(w.glob, w.tilde) for w in cmd.words[1:]] == [
        (True, False),
        (False, True),
        (False, False),
    ]


@pytest.mark.parametrize(
    "bad", ["echo 'x", 'echo "x', "echo $(ls", "echo `ls", "(ls", "ls )", "echo $((1+", "if x"]
)
def test_malformed_input_is_a_problem_not_an_error(bad: str) -> None:
    assert "syntax error" in parse_script(bad).problems


@pytest.mark.parametrize(
    "construct", ["(( x++ ))", "[[ -f x ]]", "f() { :; }", "for ((;;)); do :; done"]
)
def test_constructs_not_modelled_are_problems(construct: str) -> None:
    assert parse_script(construct).problems


def test_absurd_nesting_and_size_are_problems_not_crashes() -> None:
    deep = "echo " + "$(" * 3000 + "x" + ")" * 3000
    assert "nested too deeply" in problems_of(parse_script(deep))
    assert ShellClassifier("/w", home="/h").classify(deep).level is RiskLevel.DANGEROUS
    huge = "echo " + "x" * (MAX_SOURCE + 1)
    assert parse_script(huge).problems


# control characters and Unicode spaces are refused as a whole (see the test below)
_word = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), st.just(" ")
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.parametrize("blank", ["\r", "\f", "\v", "\x1b", "\u00a0", "\u2028", "\x7f"])
def test_blanks_bash_does_not_split_on_are_a_problem(blank: str) -> None:
    assert parse_script(f"ls{blank}#$(touch pwned)").problems
    assert not ShellClassifier("/w", home="/h").classify(f"ls{blank}x").understood


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


@settings(max_examples=150, deadline=None)
@given(st.lists(_word, min_size=1, max_size=6))
def test_quoted_words_round_trip(words: list[str]) -> None:
    line = " ".join(_quote(w) for w in words)
    assume("\\ " not in line and "\\\t" not in line)  # escaped blanks are refused
    script = parse_script(line)
    assert not script.problems
    assert [c.argv for c in script.commands] == [words]
    assert not any(w.dynamic for w in script.commands[0].words)


@settings(max_examples=150, deadline=None)
@given(st.lists(_word, min_size=1, max_size=6))
def test_shlex_joined_words_round_trip_or_are_refused(words: list[str]) -> None:
    """`shlex.join` leaves some words bare (``1%``, ``if``); where the grammar cannot
    read those as bash does, the line is a problem (it asks) rather than misread."""
    # a bare leading `NAME=value` is an assignment to bash as well, not a word
    assume(re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=", shlex.join(words[:1])) is None)
    script = parse_script(shlex.join(words))
    assert script.problems or [c.argv for c in script.commands] == [words]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_parses_and_classifies_without_raising(text: str) -> None:
    assert isinstance(parse_script(text), Script)
    verdict = ShellClassifier("/w", home="/h").classify(text)
    assert verdict.level is not RiskLevel.SAFE or verdict.understood


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab $()`'\"\\;&|<>{}[]#=~/.-*\n!", max_size=60))
def test_classifier_never_raises_and_never_calls_unparsed_text_read_only(text: str) -> None:
    verdict = ShellClassifier("/w", home="/h").classify(text)
    assert verdict.hint
    if problems_of(parse_script(text)):
        assert verdict.level is not RiskLevel.SAFE
        assert not verdict.understood


def test_a_parse_past_its_time_budget_is_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillkit.permissions import shell

    monkeypatch.setattr(shell, "PARSE_TIMEOUT", -1.0)
    assert parse_script("echo " + "$(" * 500 + "x" + ")" * 500).problems == ["parse timed out"]
    monkeypatch.undo()
    assert not parse_script("ls -la").problems  # the parser is usable again


def test_input_that_crashed_the_grammar_scanner_parses(tmp_path: Path) -> None:
    """Non-ASCII text once made the tree-sitter scanner crash the interpreter; run it in
    a child process so a regression fails this test instead of killing the suite."""
    crasher = (
        "1N\U000b31b4\\B=\U0001b31a [q{~\U000c6e0fo|+\U000a9276\U0002c1beg"
        "J\U000e55d2\U0002a676M\U00054827-7\U000fc8f8\U000e983c(qR\U000a719fo$T~xJFvC"
        "\U00017b00jtq{\U000e7853`\U000dca75_"
    )
    script = tmp_path / "crash.py"
    script.write_text(
        "from skillkit.permissions.shell import parse_script\n"
        f"for _ in range(200): parse_script({crasher!r})\n"
        "print('parsed')\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "parsed", out.stderr


def test_non_ascii_text_keeps_its_value() -> None:
    cmd = parse_script("grep -n 'café' 字.txt").commands[0]
    assert cmd.argv == ["grep", "-n", "café", "字.txt"]
