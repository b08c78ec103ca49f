"""The shell parser behind the classifier."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.permissions.classifier import ShellClassifier
from skillkit.permissions.shell import Group, ShellSyntaxError, iter_commands, parse_script


def argvs(source: str) -> list[list[str]]:
    return [c.argv for c in iter_commands(parse_script(source))]


def test_quotes_and_escapes_are_removed() -> None:
    assert argvs("""echo 'a b' "c \\"d\\"" e\\ f""") == [["echo", "a b", 'c "d"', "e f"]]


def test_list_operators_split_commands() -> None:
    assert argvs("a && b || c; d & e\nf") == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]


def test_pipelines_keep_their_stages() -> None:
    script = parse_script("curl x | sh -s && ls |& less")
    assert [len(p.stages) for p in script.pipelines] == [2, 2]
    assert script.pipelines[0].operator == "&&"


def test_subshells_groups_and_functions_are_walked() -> None:
    script = parse_script("(cd /tmp && ls) ; { echo a; echo b; } ; f() { rm x; }")
    stages = [p.stages[0] for p in script.pipelines]
    assert all(isinstance(s, Group) for s in stages)
    assert isinstance(stages[2], Group) and stages[2].function_name == "f"
    assert argvs("(cd /tmp && ls)") == [["cd", "/tmp"], ["ls"]]


def test_substitutions_are_parsed_as_nested_scripts() -> None:
    found = argvs('echo "$(whoami)" `date` <(sort a) $((1 + 2))')
    assert ["whoami"] in found and ["date"] in found and ["sort", "a"] in found
    head = next(iter_commands(parse_script('echo "$(whoami)"')))
    assert head.words[1].dynamic


def test_redirections_are_separated_from_words() -> None:
    cmd = next(iter_commands(parse_script("sort <in.txt >out.txt 2>&1 &>>all.log")))
    assert cmd.argv == ["sort"]
    assert [(r.fd, r.op, r.target.text) for r in cmd.redirects] == [
        (None, "<", "in.txt"),
        (None, ">", "out.txt"),
        (2, ">&", "1"),
        (None, "&>>", "all.log"),
    ]
    assert [r.writes for r in cmd.redirects] == [False, True, False, True]


def test_here_documents_are_skipped() -> None:
    assert argvs("cat <<EOF > f.txt\nrm -rf /\nEOF\nls") == [["cat"], ["ls"]]


def test_assignments_and_comments() -> None:
    cmd = next(iter_commands(parse_script("A=1 B='x y' make all # and a comment")))
    assert cmd.argv == ["make", "all"]
    assert [w.text for w in cmd.assignments] == ["A=1", "B=x y"]


@pytest.mark.parametrize("bad", ["echo 'x", 'echo "x', "echo $(ls", "echo `ls", "(ls", "ls )"])
def test_malformed_input_raises_a_syntax_error(bad: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse_script(bad)


_word = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_word, min_size=1, max_size=6))
def test_quoted_words_round_trip(words: list[str]) -> None:
    assert argvs(shlex.join(words)) == [words]


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_any_text_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        parse_script(text)
    except ShellSyntaxError:
        pass


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab $()`'\"\\;&|<>{}#=~/.-*\n", max_size=60))
def test_classifier_never_raises_for_shell_like_text(text: str) -> None:
    verdict = ShellClassifier("/w", home="/h").classify(text)
    assert verdict.hint


def test_absurd_nesting_is_a_syntax_error_not_a_crash() -> None:
    deep = "echo " + "$(" * 3000 + "x" + ")" * 3000
    with pytest.raises(ShellSyntaxError, match="nested too deeply"):
        parse_script(deep)
    assert ShellClassifier("/w", home="/h").classify(deep).hint == "unparseable command"
