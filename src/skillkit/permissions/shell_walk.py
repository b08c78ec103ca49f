"""The walk over a parsed command line: lists, pipelines and substitutions, each simple
command's redirections and assignments, then the command itself — run by path or found
on ``PATH``, wrapped (``env``, ``timeout``, ``sudo``), a shell given a script, ``xargs``,
``cd`` — down to the allowlist of read-only programs and the per-program rules of
`skillkit.permissions.commands` and `skillkit.permissions.git`."""

from __future__ import annotations

import os
import re

from skillkit.permissions import commands as _c
from skillkit.permissions.git import git_read_only_use, judge_git
from skillkit.permissions.readonly import (
    PROGRAMS,
    ReadOnlyUse,
    awk_use,
    find_use,
    read_only_use,
    sed_use,
)
from skillkit.permissions.shell import Command, Script, Word, iter_commands, parse_script
from skillkit.permissions.shell_findings import DANGEROUS_ENV, HARMLESS, Cwds, Findings
from skillkit.permissions.shell_paths import kernel_path
from skillkit.permissions.wrappers import unwrap

__all__ = ["Walker"]

# run by bash itself whatever PATH holds
_SHELL_BUILTINS = frozenset(
    [
        "cd",
        "pushd",
        "popd",
        "command",
        "builtin",
        "exec",
        "eval",
        "echo",
        "printf",
        "pwd",
        "true",
        "false",
        "test",
        "[",
        "type",
        "hash",
        "read",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "unset",
        "set",
        "shift",
        "source",
        ".",
        "time",
        "for",
        "case",
        "select",
        "let",
        "wait",
        "getopts",
        "alias",
        "unalias",
        "jobs",
        "fg",
        "bg",
        "kill",
        "trap",
        "umask",
        "ulimit",
    ]
)
_DECLARATIONS = frozenset({"export", "declare", "typeset", "local", "readonly", "unset"})
_MAX_CWDS = 8


class Walker(Findings):
    """Walks a parsed command line: its structure, each command, and the commands that
    commands run (wrappers, privilege tools, shells, ``xargs``, ``find -exec``)."""

    def script(self, script: Script, cwds: Cwds, depth: int) -> Cwds:
        """Judge a script; returns the possible working directories after it."""
        for problem in script.problems:
            self.v.understood = False
            if problem in ("syntax error", "nested too deeply") or problem.startswith(
                ("longer than", "contains a", "cannot parse", "not a", "parse timed")
            ):
                self.danger("unparseable command", f"cannot parse: {problem}")
            else:
                self.normal("not understood", f"not understood: {problem}")
        if depth > 16:
            self.danger("unparseable command", "cannot parse: nested too deeply")
            return cwds
        downloader = ""
        for cmd in script.commands:
            if not cmd.piped:
                downloader = ""
            cwds = self.command(cmd, cwds, depth, downloader)
            downloader = downloader or _downloader_name(cmd)
        return cwds

    def command(self, cmd: Command, cwds: Cwds, depth: int, piped_from: str) -> Cwds:
        text = cmd.text
        self.v.commands.append(text)
        for word in (*cmd.assignments, *cmd.words, *(r.target for r in cmd.redirects)):
            for sub in word.substitutions:
                self.script(sub, cwds, depth + 1)
        for assignment in cmd.assignments:
            self.assignment(assignment.text, text)
        for redirect in cmd.redirects:
            target = redirect.target
            if redirect.inline:
                if target.dynamic:
                    self.unknown(f"'{text}': the here-document expands values when it runs")
                continue
            if redirect.op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
                continue
            if target.dynamic:
                self.v.understood = False
            paths = self.c.resolve(target, cwds)
            shown = f"{redirect.op}{target.raw}"
            if redirect.writes:
                self.write(paths, f"'{shown}'")
            if redirect.reads:
                self.read(paths, f"'{shown}'")
        if not cmd.words:
            return cwds
        if any(w.dynamic for w in cmd.words):
            self.unknown(f"'{text}' uses a value known only when it runs")
        return self.argv(cmd.words, cwds, depth, text, piped_from)

    def argv(
        self,
        words: list[Word],
        cwds: Cwds,
        depth: int,
        text: str,
        piped_from: str = "",
        appended: bool = False,
    ) -> Cwds:
        """Judge one command given as words. ``appended``: further arguments are added
        when it runs (``xargs CMD``, ``find -exec CMD {} +``)."""
        head = words[0]
        args = words[1:]
        self.form(words, appended)
        if head.dynamic:
            if any(_first_downloader(s) for s in head.substitutions):
                self.danger("runs downloaded code", f"'{text}' runs what it downloads")
            self.unknown(f"'{text}' runs a computed command")
            return cwds
        name, path_trusted = self.program(head, args, cwds, text, appended)
        if piped_from and _c.is_interpreter(name) and _c.reads_code_from_stdin(name, args):
            self.danger(
                "download piped to a shell", f"pipes the output of {piped_from} into {name}"
            )
        if _c.is_interpreter(name) and any(
            _first_downloader(sub) for w in args for sub in w.substitutions
        ):
            self.danger("download piped to a shell", f"'{text}' runs downloaded code")
        handled, after = self.runs_commands(name, args, cwds, depth, text, piped_from, appended)
        if handled:
            return after
        return self.program_use(name, head, args, cwds, text, path_trusted)

    def program(
        self, head: Word, args: list[Word], cwds: Cwds, text: str, appended: bool
    ) -> tuple[str, bool]:
        """Judge where the program ``head`` comes from; its name without the folder and
        whether it is trusted (named by path, or found on ``PATH`` outside the
        workspace)."""
        if head.glob:
            # bash expands the program's name against the folder: `r? x` may run `rm x`
            self.unknown(f"'{text}': the program's name is a pattern")
            for path in self.c.resolve(head, cwds) or []:
                self.form([Word(os.path.basename(path), path), *args], appended)
        name = os.path.basename(head.text)
        by_path = "/" in head.text
        path_trusted = by_path or self.c.program_is_trusted(name)
        if by_path:
            if not os.path.isabs(head.text) or self.inside(head.text):
                # `./env cat x` runs the workspace's own `env`, not the wrapper
                self.normal(
                    "runs a program the workspace provides",
                    f"'{text}': {head.text} is a program in the workspace",
                )
        elif name not in _SHELL_BUILTINS and not path_trusted:
            self.normal(
                "runs a program the workspace provides",
                f"'{text}': PATH lets the workspace provide {name}",
            )
        return name, path_trusted

    def runs_commands(
        self,
        name: str,
        args: list[Word],
        cwds: Cwds,
        depth: int,
        text: str,
        piped_from: str,
        appended: bool,
    ) -> tuple[bool, Cwds]:
        """Judge a program that runs other commands or changes the shell's state
        (privilege tools, wrappers, shells, ``xargs``, ``cd``, declarations); True with
        the working directories after it when that judged it whole."""
        if name in _c.PRIVILEGE:
            script_text = _c.inline_script("su", args) if name in ("su", "run0") else None
            if script_text is not None:
                self.v.understood = False
                self.script(parse_script(script_text), cwds, depth + 1)
            inner = _skip_options(args, _c.PRIVILEGE_OPTS_WITH_VALUE)
            after = self.argv(inner, cwds, depth, text, piped_from, appended) if inner else cwds
            self.danger("privilege escalation", f"'{text}' runs as another user")
            return True, after
        if name in _c.WRAPPERS:
            return True, self.wrapper(name, args, cwds, depth, text, piped_from, appended)
        if name in _c.SHELLS or name == "eval":
            script_text = _c.inline_script(name, args)
            if script_text is not None:
                self.v.understood = False
                self.script(parse_script(script_text), cwds, depth + 1)
                self.normal("runs a shell", f"'{text}' runs a shell")
                return True, cwds
        if name == "xargs":
            self.xargs(args, cwds, depth, text)
            return True, cwds
        if name in ("cd", "pushd", "popd"):
            return True, self.change_directory(name, args, cwds, text)
        if name in _DECLARATIONS:
            for word in args:
                variable = word.text.split("=", 1)[0]
                if not word.text.startswith("-") and DANGEROUS_ENV.match(variable):
                    self.danger(
                        "environment that runs programs",
                        f"'{text}' sets {variable}, which can make programs run other programs",
                    )
        return name in ("for", "case", "select"), cwds

    def xargs(self, args: list[Word], cwds: Cwds, depth: int, text: str) -> None:
        """Judge ``xargs ARGS``: the files it reads its input from and the command it runs."""
        for index, word in enumerate(args):
            option, eq, value = word.text.partition("=")
            if option in ("-a", "--arg-file") and (eq or index + 1 < len(args)):
                source = Word(value, value) if eq else args[index + 1]
                self.read(self.c.resolve(source, cwds), f"'{text}'")
        inner = _c.xargs_command(args)
        if inner and os.path.basename(inner[0].text) in _c.DELETERS:
            self.danger("bulk delete", f"'{text}' deletes every file it is fed")
        if inner:
            self.argv(inner, None, depth, text, appended=True)
        self.normal("runs commands", f"'{text}' runs commands on its input")

    def program_use(
        self, name: str, head: Word, args: list[Word], cwds: Cwds, text: str, path_trusted: bool
    ) -> Cwds:
        """Judge a program that runs no other command: read-only by the allowlist, or
        what its own rules in `commands`/`git` find."""
        use: ReadOnlyUse | str
        chdirs: list[Word] = []
        if "/" in head.text:
            use = f"{head.text} is run by path"
        elif not path_trusted:
            use = f"PATH lets the workspace provide {name} (a relative or workspace entry)"
        elif name == "git":
            found = git_read_only_use(args)
            use, chdirs = found if not isinstance(found, str) else (found, [])
        elif name == "find":
            use = find_use(args)
        elif name == "sed":
            use = sed_use(args)
        elif name in ("awk", "gawk", "mawk", "nawk"):
            use = awk_use(args)
        else:
            use = read_only_use(name, args)
        own_repository = name != "git" or self.git_repository(args, cwds, text)
        if not isinstance(use, str):
            if self.reads_only(use, chdirs, cwds, text) and own_repository:
                return cwds
            use = ""
        context = _Context(self, cwds, text)
        if name == "git":
            judge_git(args, context)
        else:
            _c.judge(name, args, context)
        if use:
            self.candidates(name, args, cwds)
            hint = "may change files or state" if name not in PROGRAMS else "not read-only"
            self.normal(hint, f"'{text}': {use}")
        return cwds

    def wrapper(
        self,
        name: str,
        args: list[Word],
        cwds: Cwds,
        depth: int,
        text: str,
        piped_from: str,
        appended: bool,
    ) -> Cwds:
        option = _c.has_code_option(name, args)
        if option:
            self.danger("option runs programs", f"'{text}': {name} {option} runs a program")
        if name == "env":
            for word in args:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=.*", word.text):
                    self.assignment(word.text, text)
                elif not word.text.startswith("-"):
                    break
                elif word.text not in ("-0", "--null"):
                    self.v.understood = False
                    self.normal("changes the environment", f"'{text}' changes the environment")
        if name == "nohup":
            self.normal("writes files", f"'{text}' may write nohup.out")
        if name in ("strace", "ltrace", "watch"):
            self.normal("runs commands", f"'{text}' runs a command")
        if (
            name == "command"
            and args
            and args[0].text in ("-v", "-V")
            and all(not w.dynamic and not w.glob for w in args)
        ):
            return cwds
        wrapped = unwrap(name, args)
        if wrapped.unknown:
            self.normal(
                "may change files or state",
                f"'{text}': {name} option {wrapped.unknown} is not known to be harmless",
            )
        if wrapped.process:
            self.normal(
                "acts on another process",
                f"'{text}': {name} {wrapped.process} changes another process",
            )
            return cwds
        if wrapped.writes:
            context = _Context(self, cwds, text)
            if not context.write(wrapped.writes):
                self.normal("writes files", f"'{text}': {name} writes a file it names")
        inner_cwds = cwds
        if wrapped.chdir is not None:
            paths = self.c.resolve(wrapped.chdir, cwds)
            if paths is None:
                self.v.understood = False
                inner_cwds = None
            else:
                self.read(paths, f"'{text}'")
                inner_cwds = tuple(kernel_path(p) for p in paths)
        if wrapped.inner:
            after = self.argv(wrapped.inner, inner_cwds, depth, text, piped_from, appended)
            return cwds if wrapped.chdir is not None else after
        if name == "env":
            self.normal(
                "shows the environment",
                f"'{text}' prints the environment, which may hold keys and tokens",
            )
        elif name not in ("command", "time", "builtin", "exec"):
            self.normal("may change files or state", f"'{text}' is not known to be read-only")
        return cwds

    def change_directory(self, name: str, args: list[Word], cwds: Cwds, text: str) -> Cwds:
        if name == "popd":
            return None
        targets = [w for w in args if not (w.text.startswith("-") and w.text != "-")]
        if len(targets) > 1 or any(w.text not in ("-L", "-P") for w in args if w not in targets):
            self.normal("not understood", f"'{text}' is not a plain directory change")
            return None
        target = targets[0] if targets else Word(self.c.home, self.c.home)
        if target.text == "-" or target.dynamic:
            self.v.understood = self.v.understood and not target.dynamic
            return None
        if (
            os.environ.get("CDPATH")
            and not os.path.isabs(target.text)
            and not target.text.startswith((".", "~"))
        ):
            return None  # CDPATH may send it anywhere
        paths = self.c.resolve(target, cwds)
        if paths is None:
            return None
        physical = any(w.text == "-P" for w in args if w not in targets)
        landed: list[str] = []
        for path in paths:
            # `cd -P` enters the resolved folder; plain `cd` the lexical one, but bash
            # falls back to the resolved one when the lexical one does not exist. They
            # differ only where a `..` follows a symbolic link.
            kernel = kernel_path(path)
            if physical:
                landed.append(kernel)
            else:
                landed.append(path)
                if kernel != os.path.normpath(path):
                    landed.append(kernel)
        landed = [os.path.normpath(p) for p in landed]
        if not all(self.inside(p) for p in landed):
            self.normal(
                "leaves the workspace", f"'{text}' changes to a directory outside the workspace"
            )
        merged = tuple(dict.fromkeys((*(cwds or ()), *landed)))
        if cwds is None or len(merged) > _MAX_CWDS:
            return None
        # the change may fail or be conditional: both directories stay possible
        return merged


class _Context:
    """What a per-command rule in `commands`/`git` may use: paths and findings."""

    __slots__ = ("cwds", "text", "walker")

    def __init__(self, walker: Walker, cwds: Cwds, text: str) -> None:
        self.walker = walker
        self.cwds = cwds
        self.text = text

    def path(self, word: Word) -> str | None:
        paths = self.walker.c.resolve(word, self.cwds)
        return kernel_path(paths[0]) if paths and len(paths) == 1 else None

    def inside(self, path: str | None) -> bool:
        return path is not None and (path in HARMLESS or self.walker.inside(path))

    def read(self, words: list[Word]) -> None:
        for word in words:
            paths = self.walker.c.resolve(word, self.cwds)
            if paths is None:
                self.walker.v.reads.append(None)
            else:
                for path in paths:
                    self.walker._record(self.walker.v.reads, path)

    def write(self, words: list[Word], *, deleting: bool = False) -> bool:
        """Record writes to ``words``; returns True if any is outside the workspace or
        unknown (a dangerous finding is recorded then)."""
        outside = False
        for word in words:
            paths = self.walker.c.resolve(word, self.cwds)
            outside = (
                self.walker.write(paths, f"'{self.text}'", deleting=deleting, quiet=True) or outside
            )
        return outside

    def danger(self, hint: str, reason: str | None = None) -> None:
        self.walker.danger(hint, reason or f"'{self.text}': {hint}")

    def normal(self, hint: str, reason: str | None = None) -> None:
        self.walker.normal(hint, reason or f"'{self.text}': {hint}")

    def run(self, words: list[Word]) -> None:
        """Judge a command another command runs (``find -exec``, ``fd -x``...), with
        arguments it adds when it runs."""
        if words:
            self.walker.argv(words, None, 1, self.text, appended=True)


def _downloader_name(cmd: Command) -> str:
    words = list(cmd.words)
    while words and os.path.basename(words[0].text) in _c.PRIVILEGE | _c.WRAPPERS:
        words = words[1:]
        while words and words[0].text.startswith("-"):
            words = words[1:]
    if words and os.path.basename(words[0].text) in _c.DOWNLOADERS:
        return os.path.basename(words[0].text)
    return ""


def _first_downloader(script: Script) -> str:
    for cmd in iter_commands(script):
        name = _downloader_name(cmd)
        if name:
            return name
    return ""


def _skip_options(args: list[Word], with_value: frozenset[str]) -> list[Word]:
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            return args[i + 1 :]
        if not text.startswith("-") or text == "-":
            break
        i += 2 if text in with_value else 1
    while i < len(args) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", args[i].text):
        i += 1
    return args[i:]
