"""Every known way around the shell gate, as a table that grows with each new finding.

Each row is a command line an attacker (a malicious repository, a prompt-injected tool
output, a careless model) could send through the ``bash`` tool, the rules in force, and
what the gate must do: ``asks`` or ``refused`` — never run unasked. Rows are checked
through `PermissionGate.decide` in the modes ``default``, ``accept_edits`` and ``plan``
(where refusing a state-changing command is also acceptable), and through the
non-interactive (print mode) answerer, which must deny them.

Rows marked ``PROOF`` are first run for real with bash in a scratch folder, to show the
attack does execute code there (it creates a file named ``pwned``): the table guards
against real bypasses, not imagined ones.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.permissions import (
    GateAction,
    PermissionGate,
    PermissionMode,
    ShellClassifier,
    configure_non_interactive,
)

ASKS, REFUSED = "asks", "refused"
GIT_STAR = ("allow", "bash(git *)")
GIT_COLON = ("allow", "bash(git:*)")
DENY_SECRET = ("deny", "read(secret.txt)")
DENY_SSH = ("deny", "read(~/.ssh/**)")
DENY_ENV = ("deny", "read(.env)")

Row = tuple[str, tuple[tuple[str, str], ...], str]

# (command, rules, expected)
ATTACKS: list[Row] = [
    # ---- code hidden where a hand-written parser did not look
    ("cat <<EOF\n$(touch pwned)\nEOF", (), ASKS),
    ("cat <<EOF\n`touch pwned`\nEOF", (), ASKS),
    ("cat <<-EOF | wc -l\n\t${X:-$(touch pwned)}\nEOF", (), ASKS),
    ("echo ${X:-$(touch pwned)}", (), ASKS),
    ("echo ${X:=`touch pwned`}", (), ASKS),
    ("echo $(( $(touch pwned) ))", (), ASKS),
    ("echo $(( 1 + $(touch pwned) ))", (), ASKS),
    ("ls $(touch pwned)", (), ASKS),
    ("ls `touch pwned`", (), ASKS),
    ("cat <(touch pwned)", (), ASKS),
    ("wc -l < <(touch pwned)", (), ASKS),
    ("ls -la; touch pwned", (), ASKS),
    ("ls && touch pwned", (), ASKS),
    ("ls || touch pwned", (), ASKS),
    ("ls | touch pwned", (), ASKS),
    ("(touch pwned)", (), ASKS),
    ("{ touch pwned; }", (), ASKS),
    ("if true; then touch pwned; fi", (), ASKS),
    ("ls\ntouch pwned", (), ASKS),
    ("ls & touch pwned", (), ASKS),
    ("echo 'unterminated; touch pwned", (), ASKS),
    ("echo $((1+", (), ASKS),
    # blanks the grammar splits on but bash does not: `#...` is no comment to bash
    ("ls\r#$(touch pwned)", (), ASKS),
    ("ls\f#$(touch pwned)", (), ASKS),
    ("ls\v#$(touch pwned)", (), ASKS),
    ("ls\u00a0#$(touch pwned)", (), ASKS),
    ("ls\u2028#$(touch pwned)", (), ASKS),
    ("ls\x1b#$(touch pwned)", (), ASKS),
    # an escaped blank starts a word to bash, and `#` inside a word is no comment
    ("\\\n\\ #`touch pwned`", (), ASKS),
    ("ls \\ #`touch pwned`", (), ASKS),
    ("ls \\\t#$(touch pwned)", (), ASKS),
    ("ls \\;#`touch pwned`", (), ASKS),
    # `==` joins the next line to the command for the grammar, not for bash
    ("echo a ==\ntouch pwned", (), ASKS),
    ("echo a =~\ntouch pwned", (), ASKS),
    # a line continuation right after a newline joins lines for the grammar, not bash
    ("ls\n\\\ntouch pwned", (), ASKS),
    ("echo a \n\\\ntouch pwned", (), ASKS),
    # a here-document delimiter the grammar does not read as bash does
    ("ls <<$}~ \n$(touch pwned)", (), ASKS),
    ("cat <<EOF\nhi", (), ASKS),
    # ---- array subscripts evaluated as code
    ("[[ 'a[$(touch pwned)]' -eq 0 ]]", (), ASKS),
    ("test -v 'a[$(touch pwned)]'", (), ASKS),
    ("[ -v 'a[$(touch pwned)]' ]", (), ASKS),
    ("printf -v 'a[$(touch pwned)]' x", (), ASKS),
    ("declare 'a[$(touch pwned)]=1'", (), ASKS),
    ("read 'a[$(touch pwned)]' < README.md", (), ASKS),
    ("let 'a[$(touch pwned)]'", (), ASKS),
    ("(( a[$(touch pwned)] ))", (), ASKS),
    ("x='a[$(touch pwned)]'; echo $((x))", (), ASKS),
    # ---- programs with options that execute
    ("env -S 'sh -c \"touch pwned\"'", (), ASKS),
    ("env --split-string='sh -c id'", (), ASKS),
    ("env sh -c 'touch pwned'", (), ASKS),
    ("hash -p /bin/bash cat; cat -c 'touch pwned'", (), ASKS),
    ("awk 'BEGIN { \"touch pwned\" | getline x }'", (), ASKS),
    ("awk 'BEGIN { system(\"touch pwned\") }'", (), ASKS),
    ("awk '{ print > \"/tmp/out\" }' README.md", (), ASKS),
    ("awk 'BEGIN { ARGV[1] = \"/etc/passwd\"; ARGC = 2 } { print }'", (), ASKS),
    ("awk -f prog.awk README.md", (), ASKS),
    ("tar --use-compress-program='sh -c \"touch pwned\"' -cf x.tar README.md", (), ASKS),
    ("tar --use-compress-prog=touch -tf x.tar", (), ASKS),
    ("tar -I 'touch pwned' -tf x.tar", (), ASKS),
    ("tar -tf x.tar --to-command='touch pwned'", (), ASKS),
    ("rg --pre ./evil.sh foo", (), ASKS),
    ("rg --pre-glob '*' --pre rm foo", (), ASKS),
    ("rg --hostname-bin ./evil.sh foo", (), ASKS),
    ("rg --pre rm -e x /tmp/victim", (), ASKS),
    ("rg --pre=rm x", (("allow", "bash(rg:*)"),), ASKS),
    ("diff -r . /tmp/other", (), ASKS),
    ("diff -r src link-dir-outside", (), ASKS),
    ("diff src other", (), ASKS),
    ("git grep -O'touch pwned' foo", (), ASKS),
    ("git grep --open-files-in-pager='touch pwned' foo", (), ASKS),
    ("git grep --open=touch foo", (), ASKS),
    ("find . -exec touch pwned \\;", (), ASKS),
    ("find . -execdir touch pwned \\;", (), ASKS),
    ("find . -ok touch pwned \\;", (), ASKS),
    ("find . -delete", (), ASKS),
    ("find . -fprint /tmp/out", (), ASKS),
    ("find -L / -name x", (), ASKS),
    ("sed -i 's/a/b/' README.md", (), ASKS),
    ("sed 's/x/touch pwned/e' README.md", (), ASKS),
    ("sed -n '1e touch pwned' README.md", (), ASKS),
    ("sed 'w /tmp/out' README.md", (), ASKS),
    ("sed 's/a/b/w /tmp/out' README.md", (), ASKS),
    ("sed -f script.sed README.md", (), ASKS),
    ("less README.md", (), ASKS),
    ("more README.md", (), ASKS),
    ("man -P 'touch pwned' ls", (), ASKS),
    ("xargs touch < README.md", (), ASKS),
    ("watch -n1 touch pwned", (), ASKS),
    ("timeout 5 touch pwned", (), ASKS),
    ("command touch pwned", (), ASKS),
    ("exec touch pwned", (), ASKS),
    ("bash -c 'touch pwned'", (), ASKS),
    ("eval 'touch pwned'", (), ASKS),
    ("source ./evil.sh", (), ASKS),
    (". ./evil.sh", (), ASKS),
    ("./ls", (), ASKS),
    ("/tmp/cat README.md", (), ASKS),
    ("ls() { touch pwned; }; ls", (), ASKS),
    ("alias ls='touch pwned'", (), ASKS),
    ("sort --compress-program='touch pwned' README.md", (), ASKS),
    ("sort -o /tmp/out README.md", (), ASKS),
    ("jq -n 'import \"../../etc/x\" as $x; $x'", (), ASKS),
    ("ldd ./binary", (), ASKS),
    # ---- configuration through the environment
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
        "GIT_CONFIG_VALUE_0='touch pwned' git status",
        (),
        ASKS,
    ),
    ("GIT_EXTERNAL_DIFF='touch pwned' git diff", (), ASKS),
    ("GIT_PAGER='touch pwned' git log", (), ASKS),
    ("PAGER='touch pwned' git log", (), ASKS),
    ("LESSOPEN='|touch pwned' less README.md", (), ASKS),
    ("LD_PRELOAD=./evil.so ls", (), ASKS),
    ("BASH_ENV=./evil.sh bash -c ls", (), ASKS),
    ("ENV=./evil.sh sh -c ls", (), ASKS),
    ("PATH=.:$PATH ls", (), ASKS),
    ("PATH=. ls", (), ASKS),
    ("export GIT_EXTERNAL_DIFF=touch; git diff", (), ASKS),
    ("GIT_DIR=/tmp/evil git log", (), ASKS),
    ("env GIT_PAGER='touch pwned' git log", (), ASKS),
    ("X=1 ls", (), ASKS),
    ("for PATH in .; do ls; done", (), ASKS),
    ("for GIT_DIR in /tmp/evil; do git log; done", (("allow", "bash(git *)"),), ASKS),
    ("select PATH in .; do ls; break; done", (), ASKS),
    # ---- options that write files
    ("xxd -r dump.hex out.bin", (), ASKS),
    ("xxd README.md /tmp/out", (), ASKS),
    ("tree -o /tmp/out", (), ASKS),
    ("info -o /tmp/out ls", (), ASKS),
    ("strace -o /tmp/out ls", (), ASKS),
    ("git log --output=/tmp/out", (), ASKS),
    ("git log --outp=/tmp/out", (), ASKS),
    ("git diff --output /tmp/out", (), ASKS),
    ("uniq README.md /tmp/out", (), ASKS),
    ("ls > /tmp/out", (), ASKS),
    ("ls >> README.md", (), ASKS),
    ("cat <<'EOF'>pwned\nhi\nEOF", (), ASKS),
    ("cat <<EOF 2>/dev/null >pwned | wc -l\nhi\nEOF", (), ASKS),
    ("cat <<EOF >>/tmp/out && ls\nhi\nEOF", (), ASKS),
    ("cat README.md 1<>README.md", (), ASKS),
    ("date -s 2020-01-01", (), ASKS),
    ("date 0101010120", (), ASKS),
    ("hostname evil", (), ASKS),
    # ---- git code-running options, also under broad allow rules
    ("git -c core.fsmonitor='touch pwned' status", (GIT_STAR,), ASKS),
    ("git -c core.fsmonitor='touch pwned' status", (GIT_COLON,), ASKS),
    ("git -c alias.x='!touch pwned' x", (GIT_STAR,), ASKS),
    ("git -c core.pager='touch pwned' -p log", (GIT_STAR,), ASKS),
    ("git --config-env=core.fsmonitor=EVIL status", (GIT_STAR,), ASKS),
    ("git --exec-path=. status", (GIT_STAR,), ASKS),
    ("git -p log", (GIT_STAR,), ASKS),
    ("git --paginate log", (GIT_COLON,), ASKS),
    ("git fetch --upload-pack='touch pwned' origin", (GIT_STAR,), ASKS),
    ("git ls-remote --upload-pack='touch pwned' origin", (GIT_STAR,), ASKS),
    ("git push --receive-pack='touch pwned' origin", (GIT_STAR,), ASKS),
    ("git clone -u 'touch pwned' src dst", (GIT_STAR,), ASKS),
    ("git clone --template=/tmp/hooks src dst", (GIT_STAR,), ASKS),
    ("git diff --ext-diff", (GIT_STAR,), ASKS),
    ("git log -p --textconv", (GIT_STAR,), ASKS),
    ("git grep -O'touch pwned' foo", (GIT_STAR,), ASKS),
    ("git rebase -x 'touch pwned' main", (GIT_STAR,), ASKS),
    ("git rebase --exec='touch pwned' main", (GIT_COLON,), ASKS),
    ("git difftool -x 'touch pwned'", (GIT_STAR,), ASKS),
    ("git submodule foreach 'touch pwned'", (GIT_STAR,), ASKS),
    ("git config core.fsmonitor 'touch pwned'", (GIT_STAR,), ASKS),
    ("git config alias.st '!touch pwned'", (GIT_COLON,), ASKS),
    ("git log --output=/tmp/out", (GIT_STAR,), ASKS),
    ("git -C /tmp/evil status", (GIT_STAR,), ASKS),
    ("git --git-dir=/tmp/evil/.git log", (GIT_STAR,), ASKS),
    ("git status $(touch pwned)", (GIT_STAR,), ASKS),
    ("git log ${X:-$(touch pwned)}", (GIT_STAR,), ASKS),
    ('git log "$REF"', (GIT_COLON,), ASKS),
    ("git status; touch pwned", (GIT_STAR,), ASKS),
    ("git status && bash -c 'touch pwned'", (GIT_STAR,), ASKS),
    ("GIT_PAGER='touch pwned' git log", (GIT_STAR,), ASKS),
    ("git log > /tmp/out", (GIT_STAR,), ASKS),
    ("git push --force origin main", (GIT_STAR,), ASKS),
    ("git reset --hard", (GIT_COLON,), ASKS),
    ("rg --pre ./evil.sh foo", (("allow", "bash(rg *)"),), ASKS),
    ("find . -exec touch pwned \\;", (("allow", "bash(find:*)"),), ASKS),
    ("sed 's/x/y/e' README.md", (("allow", "bash(sed *)"),), ASKS),
    (
        "make -f /tmp/evil.mk test",
        (("allow", "bash(make test:*)"), ("allow", "bash(make *)")),
        ASKS,
    ),
    ("make test SHELL=/tmp/evil", (("allow", "bash(make test:*)"),), ASKS),
    ("npm test --prefix /tmp/evil", (("allow", "bash(npm test:*)"),), ASKS),
    # ---- deny rules: what the shell really reads
    ("cat secret.txt", (DENY_SECRET,), REFUSED),
    ("cat secre*", (DENY_SECRET,), REFUSED),
    ("cat *", (DENY_SECRET,), REFUSED),
    ("cat ./s?cret.txt", (DENY_SECRET,), REFUSED),
    ("cat < secret.txt", (DENY_SECRET,), REFUSED),
    ("wc -l < secret.txt", (DENY_SECRET,), REFUSED),
    ("head -c 100 src/../secret.txt", (DENY_SECRET,), REFUSED),
    ("cd src && cat ../secret.txt", (DENY_SECRET,), REFUSED),
    ("cat link-to-secret", (DENY_SECRET,), REFUSED),
    ("cat ~/.ssh/id_rsa", (DENY_SSH,), REFUSED),
    ("cat ~/.ssh/*", (DENY_SSH,), REFUSED),
    ("cat < ~/.ssh/id_rsa", (DENY_SSH,), REFUSED),
    ("git diff --no-index /dev/null ~/.ssh/id_rsa", (DENY_SSH,), REFUSED),
    ("python3 -c 'print(1)' ~/.ssh/id_rsa", (DENY_SSH,), REFUSED),
    ("cp ~/.ssh/id_rsa leak.txt", (DENY_SSH,), REFUSED),
    ("git show HEAD:secret.txt", (DENY_SECRET,), REFUSED),
    ("cat .env", (DENY_ENV,), REFUSED),
    ("cat $(echo secret.txt)", (DENY_SECRET,), ASKS),
    ('cat "$F"', (DENY_SECRET,), ASKS),
    ("cat ~root/.ssh/id_rsa", (DENY_SSH,), ASKS),
    ("cat ~+/secret.txt", (DENY_SECRET,), ASKS),
    ("F=secret.txt; cat $F", (DENY_SECRET,), ASKS),
    ("cat `echo secret.txt`", (DENY_SECRET,), ASKS),
    ("grep -r KEY .", (DENY_ENV,), ASKS),
    ("rg KEY", (DENY_ENV,), ASKS),
    ("git grep KEY", (DENY_ENV,), ASKS),
    ("git log -p", (DENY_ENV,), ASKS),
    ("git log --patch -1", (DENY_ENV,), ASKS),
    ("git log -S KEY", (DENY_ENV,), ASKS),
    ("git log -np1", (DENY_ENV,), ASKS),
    ("git show HEAD", (DENY_ENV,), ASKS),
    ("git diff", (DENY_ENV,), ASKS),
    ("grep -r key ~", (DENY_SSH,), ASKS),
    ("cat secret.txt", (DENY_SECRET, ("allow", "bash(cat *)")), REFUSED),
    ("cat *", (DENY_SECRET, ("allow", "bash")), REFUSED),
    ("echo x > secret.txt", (("deny", "write(secret.txt)"),), REFUSED),
    ("echo x > secret.txt", (("deny", "edit(secret.txt)"),), REFUSED),
    # ---- reads outside the workspace ask even without rules
    ("cat /etc/passwd", (), ASKS),
    ("cat /etc/*", (), ASKS),
    ("cat ~/.ssh/id_rsa", (), ASKS),
    ("ls /", (), ASKS),
    ("cd / && ls", (), ASKS),
    ("cd .. && cat x", (), ASKS),
    ("cat ../outside.txt", (), ASKS),
    ("cat link-outside", (), ASKS),
    ("grep -R foo .", (), ASKS),
    ("rg -L foo", (), ASKS),
    ("tree -l", (), ASKS),
]

# rows run for real with bash (the program must exist): the attack creates ./pwned
PROOF = [
    "ls\n\\\ntouch pwned",
    "ls <<$}~ \n$(touch pwned)",
    "echo a ==\ntouch pwned",
    "ls \\ #`touch pwned`",
    "\\\n\\ #`touch pwned`",
    "for PATH in .; do ls; done",
    "ls\r#$(touch pwned)",
    "ls\f#$(touch pwned)",
    "ls\v#$(touch pwned)",
    "cat <<EOF\n$(touch pwned)\nEOF",
    "echo ${X:-$(touch pwned)}",
    "echo $(( $(touch pwned) ))",
    "[[ 'a[$(touch pwned)]' -eq 0 ]]",
    "test -v 'a[$(touch pwned)]'",
    "printf -v 'a[$(touch pwned)]' x",
    "declare 'a[$(touch pwned)]=1'",
    "hash -p /bin/bash cat; cat -c 'touch pwned'",
    "env -S 'sh -c \"touch pwned\"'",
    "awk 'BEGIN { \"touch pwned\" | getline x }'",
    "x='a[$(touch pwned)]'; echo $((x))",
    "find . -exec touch pwned \\;",
    "sed 's/x/touch pwned/e' README.md",
]

# legitimate read-only commands keep running unasked
READ_ONLY = [
    "ls",
    "ls -la",
    "ls -la src",
    "git status",
    "git status --short",
    "git log --oneline -5",
    "git log --oneline -n 20 -- src",
    "git diff",
    "git diff --stat HEAD~1",
    "git show HEAD",
    "git branch -a",
    "git rev-parse --show-toplevel",
    "cat README.md",
    "cat -n src/app.py",
    "grep -rn foo src",
    "grep -n 'def ' src/app.py",
    "rg -n TODO src",
    "rg --files",
    "wc -l x",
    "head -20 x | tail -5",
    "head -n 5 README.md",
    "tail -n 3 x",
    "find . -name '*.py' -not -path './.venv/*'",
    "find src -type f -maxdepth 2",
    "sed -n '1,40p' src/app.py",
    "awk '{print $1}' x | sort | uniq -c",
    "cut -d: -f1 x | sort -u",
    "cd src && ls",
    "cat < README.md",
    "ls 2>/dev/null",
    "echo done",
    "pwd",
    "tree -L 2",
    "du -sh src",
    "diff x README.md",
    "stat README.md",
    "file src/app.py",
    "jq . data.json",
    "sha256sum README.md",
    "cat src/*.py",
    "ls; git status && git log -1",
    "wc -l src/*",
]

MODES = [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 1\n")
    (ws / "README.md").write_text("# project\nx y\n")
    (ws / "x").write_text("a b\nc d\n")
    (ws / "data.json").write_text('{"a": 1}\n')
    (ws / "secret.txt").write_text("top secret\n")
    (ws / ".env").write_text("KEY=1\n")
    (ws / "link-to-secret").symlink_to(ws / "secret.txt")
    (tmp_path / "outside.txt").write_text("outside\n")
    (ws / "link-outside").symlink_to(tmp_path / "outside.txt")
    (ws / "other").mkdir()
    (ws / "other" / "app.py").symlink_to(tmp_path / "outside.txt")
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text("PRIVATE\n")
    return ws


def gate_for(
    workspace: Path, mode: PermissionMode, rules: tuple[tuple[str, str], ...]
) -> PermissionGate:
    gate = PermissionGate(workspace=workspace, mode=mode, home=workspace.parent / "home")
    for action, text in rules:
        gate.rules.add(text, action)
    return gate


def test_the_table_covers_every_attack_family() -> None:
    assert len(ATTACKS) >= 150
    assert {expected for _, _, expected in ATTACKS} == {ASKS, REFUSED}
    commands = " ".join(c for c, _, _ in ATTACKS)
    for needle in (
        "<<EOF",
        "${X:-",
        "$((",
        "[[",
        "test -v",
        "printf -v",
        "env -S",
        "hash -p",
        "getline",
        "--use-compress-program",
        "rg --pre",
        "git grep -O",
        "GIT_",
        "xxd -r",
        "tree -o",
        "info -o",
        "strace -o",
        "git log --output",
        "core.fsmonitor",
        "~root",
        "--no-index",
        "< secret.txt",
        "cat /etc/*",
    ):
        assert needle in commands, needle


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(("command", "rules", "expected"), ATTACKS, ids=[c for c, _, _ in ATTACKS])
def test_attack_never_runs_unasked(
    workspace: Path,
    mode: PermissionMode,
    command: str,
    rules: tuple[tuple[str, str], ...],
    expected: str,
) -> None:
    decision = gate_for(workspace, mode, rules).decide("bash", {"command": command})
    if expected == REFUSED:
        assert decision.action is GateAction.REFUSE, decision.reason
    elif mode is PermissionMode.PLAN:
        assert decision.action in (GateAction.ASK, GateAction.REFUSE), decision.reason
    else:
        assert decision.action is GateAction.ASK, decision.reason
    assert ":*" not in decision.suggested_rule or decision.suggested_rule.startswith(
        ("bash(npm ", "bash(make ", "bash(cargo ")
    )
    assert "git:*" not in decision.suggested_rule and "git *" not in decision.suggested_rule


@pytest.mark.parametrize(("command", "rules", "expected"), ATTACKS, ids=[c for c, _, _ in ATTACKS])
def test_attack_is_denied_in_print_mode(
    workspace: Path, command: str, rules: tuple[tuple[str, str], ...], expected: str
) -> None:
    gate = gate_for(workspace, PermissionMode.DEFAULT, rules)
    configure_non_interactive(gate)
    outcome = asyncio.run(asyncio.wait_for(gate.check("bash", {"command": command}), 5))
    assert not outcome.allowed
    assert outcome.message


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("command", PROOF)
def test_attack_really_runs_code_when_not_stopped(workspace: Path, command: str) -> None:
    program = command.split()[0]
    if program in ("env", "awk", "find", "sed") and shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    assert any(row[0] == command for row in ATTACKS)
    planted = workspace / "ls"  # what a malicious repository ships for `PATH=.`
    planted.write_text("#!/bin/sh\n: > pwned\n")
    planted.chmod(0o755)
    subprocess.run(
        ["bash", "-c", command],
        cwd=workspace,
        capture_output=True,
        timeout=10,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(workspace.parent / "home")},
    )
    assert (workspace / "pwned").exists(), f"{command!r} did not execute code: not a real attack"


@pytest.mark.parametrize("mode", [*MODES, PermissionMode.BYPASS], ids=lambda m: m.value)
@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_run_unasked(
    workspace: Path, mode: PermissionMode, command: str
) -> None:
    gate = PermissionGate(
        workspace=workspace, mode=mode, home=workspace.parent / "home", bypass_allowed=True
    )
    decision = gate.decide("bash", {"command": command})
    assert decision.action is GateAction.RUN, decision.reason


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_run_in_print_mode_and_under_unrelated_deny_rules(
    workspace: Path, command: str
) -> None:
    gate = gate_for(workspace, PermissionMode.DEFAULT, (("deny", "read(/etc/**)"),))
    configure_non_interactive(gate)
    outcome = asyncio.run(asyncio.wait_for(gate.check("bash", {"command": command}), 5))
    assert outcome.allowed, outcome.message


def test_git_history_without_contents_runs_under_a_deny_rule(workspace: Path) -> None:
    gate = gate_for(workspace, PermissionMode.DEFAULT, (DENY_ENV,))
    for command in ("git log --oneline -5", "git status", "git branch -a", "ls -la"):
        assert gate.decide("bash", {"command": command}).action is GateAction.RUN, command


def test_broad_rule_still_runs_understood_commands(workspace: Path) -> None:
    gate = gate_for(workspace, PermissionMode.DEFAULT, (GIT_STAR, ("allow", "bash(make test:*)")))
    for command in ("git commit -m 'fix: parser'", "git push origin main", "make test -j4"):
        assert gate.decide("bash", {"command": command}).action is GateAction.RUN, command


def test_exact_rule_allows_only_that_exact_text(workspace: Path) -> None:
    gate = gate_for(workspace, PermissionMode.DEFAULT, (("allow", "bash(git log $REF)"),))
    assert gate.decide("bash", {"command": "git log $REF"}).action is GateAction.RUN
    assert gate.decide("bash", {"command": "git log $OTHER"}).action is GateAction.ASK


def test_a_glob_that_expands_to_an_option_is_not_read_only(workspace: Path) -> None:
    (workspace / "--pre=touch").write_text("")
    gate = gate_for(workspace, PermissionMode.DEFAULT, ())
    for command in ("rg foo *", "cat *", "grep -n x *"):
        assert gate.decide("bash", {"command": command}).action is GateAction.ASK, command
    assert gate.decide("bash", {"command": "cat src/*"}).action is GateAction.RUN


_BASES = [
    "ls -la",
    "cat x",
    "grep -n a x",
    "head -n 1 x",
    "wc -l x",
    "echo hi",
    "sed -n 1p x",
    "awk '{print}' x",
    "find . -name x",
    "cat <<'EOF'\nhi\nEOF",
    "ls && cat x",
    "cat x | wc -l",
    'echo "a b"',
    "tr a b < x",
]
_TRICKS = [*"#\\'\"`$(){};&|<>\n~*=![],:-%", "\\\n", "<<", "EOF", "$'", '$"', "\t"]
_PAYLOADS = ["$(touch pwned)", "`touch pwned`", "touch pwned", ">pwned"]


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    command = draw(st.sampled_from(_BASES))
    for text in [
        *draw(st.lists(st.sampled_from(_TRICKS), max_size=3)),
        draw(st.sampled_from(_PAYLOADS)),
    ]:
        at = draw(st.integers(0, len(command)))
        command = command[:at] + text + command[at:]
    return command


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=_mutated())
def test_what_is_judged_read_only_creates_nothing_when_bash_runs_it(
    tmp_path: Path, command: str
) -> None:
    ws = Path(tempfile.mkdtemp(dir=tmp_path))
    (ws / "x").write_text("x\n")
    if not ShellClassifier(ws, home=tmp_path / "home").classify(command).read_only:
        return
    try:
        subprocess.run(
            ["bash", "-c", command],
            cwd=ws,
            capture_output=True,
            timeout=5,
            check=False,
            stdin=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pass
    assert sorted(p.name for p in ws.iterdir()) == ["x"], command


@pytest.mark.parametrize("entry", [".", "", "bin", "{ws}/node_modules/.bin"])
def test_a_program_the_workspace_provides_through_path_is_not_trusted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    planted = workspace / "node_modules" / ".bin" / "ls"
    planted.parent.mkdir(parents=True)
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{entry.format(ws=workspace)}:/usr/bin:/bin")
    gate = gate_for(workspace, PermissionMode.DEFAULT, ())
    assert gate.decide("bash", {"command": "ls"}).action is GateAction.ASK
    monkeypatch.setenv("PATH", f"/usr/bin:/bin:{workspace}/node_modules/.bin")
    assert gate.decide("bash", {"command": "ls"}).action is GateAction.RUN
