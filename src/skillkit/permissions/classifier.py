"""The shell-command classifier: which command lines may run unasked, and how risky the
others are.

A command line is **read-only** (`RiskLevel.SAFE`, runs unasked) only when the classifier
understands all of it: the tree-sitter bash grammar parsed it without error or unknown
construct; every word is static (no ``$X``, ``${...}``, ``$(...)``, backticks,
``$((...))``, ``<(...)``, brace expansion, expanding here-document); there are no
variable assignments; every simple command — in lists, pipelines, subshells, groups and
``if``/``while`` bodies alike — is a program on the read-only allowlist
(`skillkit.permissions.readonly`, `skillkit.permissions.git`) used with allowlisted
options; output redirections are absent; and every path it reads (operands, ``<``
redirections, globs expanded against the file system, ``~``) lies inside the workspace
or an additional directory, also after resolving symlinks.

Everything else is at least `RiskLevel.NORMAL` (asks). `RiskLevel.DANGEROUS` marks what a
broad allow rule must never cover: recursive or outside deletes, writes outside the
workspace, force pushes and history rewrites, privilege and disk tools, downloads run
as code, options that make a program run another program (``rg --pre``, ``git -c``,
``env -S``, ``tar -I``...), environment variables that do (``GIT_*``, ``LD_*``,
``PAGER``...), array subscripts evaluated as code, and lines that cannot be parsed.

The verdict lists the paths read and written (``None`` for one that cannot be known
before running) and the directories read recursively, so the gate can apply file deny
rules to shell commands.
"""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path

from skillkit.permissions import commands as _c
from skillkit.permissions import globbing
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
from skillkit.permissions.wrappers import unwrap
from skillkit.protected import PROTECTED_NAMES, is_bare_repository, protected_reason

__all__ = ["RiskLevel", "ShellClassifier", "ShellVerdict"]


class RiskLevel(IntEnum):
    """Ordered risk: a compound command takes the highest level of its parts."""

    SAFE = 0
    NORMAL = 1
    DANGEROUS = 2


@dataclass
class ShellVerdict:
    """The judgement of one command line.

    ``hint`` is a short label of the riskiest finding ("recursive delete", "read-only"...),
    ``reason`` a sentence naming the command part it came from. ``commands`` are the
    simple commands found (their text); ``reads``/``writes`` the absolute paths touched
    (``None`` for a path that cannot be known before running); ``recursive_reads`` the
    directories whose whole content is read. ``forms`` are the simple commands as they
    run — quotes removed, each wrapper (``env``, ``timeout``, ``sudo``...) also unwrapped,
    the program also without its folder — and ``open_forms`` those run with further
    arguments known only when they run (``xargs rm``); rules match both. ``understood``
    is true when every word is static, nothing is assigned and the parser modelled
    every construct — the only command lines a broad allow rule may cover.
    """

    level: RiskLevel = RiskLevel.SAFE
    hint: str = "read-only"
    reason: str = "only reads"
    commands: list[str] = field(default_factory=list)
    reads: list[str | None] = field(default_factory=list)
    writes: list[str | None] = field(default_factory=list)
    recursive_reads: list[str] = field(default_factory=list)
    understood: bool = True
    forms: list[str] = field(default_factory=list)
    open_forms: list[str] = field(default_factory=list)

    @property
    def dangerous(self) -> bool:
        return self.level is RiskLevel.DANGEROUS

    @property
    def read_only(self) -> bool:
        return self.level is RiskLevel.SAFE

    @property
    def unresolved(self) -> bool:
        """Whether some path read or written cannot be known before running."""
        return None in self.reads or None in self.writes

    def raise_to(self, level: RiskLevel, hint: str, reason: str) -> None:
        """Record a finding; keeps the first finding of the highest level."""
        if level > self.level or (level == self.level and self.hint == "read-only"):
            self.level, self.hint, self.reason = level, hint, reason


# environment variables that make programs run other programs, load code or read
# configuration from elsewhere
_DANGEROUS_ENV = re.compile(
    r"(GIT_|LD_|DYLD_|BASH_|LESS|PYTHON|PERL|RUBY|NODE_|NPM_CONFIG_|JAVA_|_JAVA_|SSH_|"
    r"SYSTEMD_|XDG_|RIPGREP_|GREP_|TAR_|SUDO_|PKG_CONFIG|DOCKER_|CARGO_|RUSTC|GOFLAGS)"
    r"|(ENV|PATH|CDPATH|HOME|PAGER|MANPAGER|MANOPT|EDITOR|VISUAL|BROWSER|SHELL|SHELLOPTS|"
    r"BASHOPTS|PS4|PROMPT_COMMAND|IFS|TMPDIR|CC|CXX|MAKEFLAGS|CLASSPATH|GLOBIGNORE|"
    r"HISTFILE|INPUTRC|TERMINFO|LOCPATH|GCONV_PATH|OPENSSL_CONF|CURL_HOME|WGETRC|ZDOTDIR)$"
)
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
# every name `protected_reason` looks for occurs in a protected path's text
_PROTECTED_NEEDLES = (*PROTECTED_NAMES, ".git", "config", "hooks", "info")
_DECLARATIONS = frozenset({"export", "declare", "typeset", "local", "readonly", "unset"})
_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
_MAX_GLOB = 256
_MAX_GLOB_LEVELS = 2
_MAX_CWDS = 8


class ShellClassifier:
    """Judges command lines relative to a workspace.

    ``workspace`` is where relative paths start; ``writable`` lists further directories
    that count as workspace (the gate's additional directories). ``home`` expands ``~``.
    `classify` never raises for any text.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        writable: tuple[str | os.PathLike[str], ...] = (),
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.workspace = os.path.abspath(os.fspath(workspace))
        self.home = os.path.abspath(os.fspath(home)) if home is not None else str(Path.home())
        self.writable = tuple(os.path.abspath(os.fspath(p)) for p in writable)
        self.roots = (self.workspace, *self.writable)
        self._real_roots = tuple(_realpath(r) for r in self.roots)
        self._path_seen: tuple[str | None, bool, bool] = (None, True, True)

    def classify(self, command_line: str) -> ShellVerdict:
        """Judge ``command_line``. Never raises: an internal failure is a dangerous,
        not-understood verdict."""
        verdict = ShellVerdict()
        try:
            script = parse_script(command_line)
            if _c.FORK_BOMB.search(command_line):
                verdict.raise_to(
                    RiskLevel.DANGEROUS, "fork bomb", "defines a self-replicating function"
                )
            _Walker(self, verdict).script(script, (self.workspace,), depth=0)
        except Exception as exc:  # fail closed on anything unforeseen
            verdict.understood = False
            verdict.raise_to(
                RiskLevel.DANGEROUS, "unparseable command", f"cannot judge: {type(exc).__name__}"
            )
        if not verdict.commands and verdict.read_only:
            verdict.reason = "does nothing"
        return verdict

    # ----- paths

    def resolve(self, word: Word, cwds: tuple[str, ...] | None) -> list[str] | None:
        """Every absolute path ``word`` may name (globs expanded as bash expands them),
        or None when that cannot be known before running. Paths are joined, not
        normalised: ``..`` after a symbolic link is left for the kernel's resolution."""
        if word.dynamic:
            return None
        text = word.text
        if word.tilde:
            expanded = self.tilde(word)
            if expanded is None:
                return None
            text = expanded
        if "\x00" in text:
            return None
        if word.glob and (word.quoted or "\\" in word.raw):
            return None  # quoted wildcards are literal to bash; the text no longer says which
        if os.path.isabs(text):
            bases = [text]
        elif cwds is None:
            return None
        else:
            bases = [os.path.join(cwd, text) for cwd in cwds]
        out: list[str] = []
        for cwd, base in zip(cwds or ("",), bases, strict=False):
            if word.glob:
                matches = _expand(base)
                if matches is None:
                    return None
                if not os.path.isabs(text) and any(
                    os.path.relpath(m, cwd).startswith("-") for m in matches
                ):
                    return None  # a file named like an option would become one
                out.extend(matches or [base])
            else:
                out.append(base)
        return out

    def tilde(self, word: Word) -> str | None:
        """The text of a word starting with ``~`` after bash's tilde expansion: ``~`` is
        the home folder, ``~user`` that user's (from the password database), unchanged
        when any character of the prefix up to the first ``/`` is quoted or the user is
        unknown; None for ``~+``, ``~-`` and ``~N`` (the shell's state decides)."""
        text = word.text
        if any(ch in word.raw.split("/", 1)[0] for ch in "'\"\\$`"):
            return text
        user, slash, rest = text[1:].partition("/")
        if not user:
            return self.home + slash + rest
        if user[0] in "+-" or user.isdigit():
            return None
        try:
            folder = pwd.getpwnam(user).pw_dir
        except (KeyError, ValueError, OSError):
            return text
        return folder.rstrip("/") + "/" + rest if slash else folder

    def program_is_trusted(self, name: str) -> bool:
        """Whether the program ``name`` resolves to through ``PATH`` lies outside the
        workspace: no relative or empty ``PATH`` entry (those follow ``cd``), and the
        first directory holding ``name`` is not in the workspace."""
        value = os.environ.get("PATH", "")
        if value != self._path_seen[0]:
            entries = value.split(os.pathsep)
            relative = any(not e or not os.path.isabs(e) for e in entries)
            self._path_seen = (value, relative, any(self.inside(e) for e in entries))
        _, relative, reaches_workspace = self._path_seen
        if relative:
            return False
        if not reaches_workspace:
            return True
        for entry in value.split(os.pathsep):
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return not self.inside(candidate)
        return True

    def own_git_dir(self, real: str) -> bool:
        """Whether ``real`` (resolved) is the ``.git`` folder of a workspace root."""
        return any(real == os.path.join(root, ".git") for root in self._real_roots)

    def other_repository(self, folder: str) -> str:
        """The repository git would find from ``folder`` when it is not the workspace's
        own top-level one (a nested ``.git`` or a bare repository inside the workspace or
        an additional directory); "" otherwise. Judged on the resolved path, as git
        itself walks it."""
        if os.path.normpath(folder) in self.roots:
            return ""  # a workspace root: git finds the workspace's own repository
        current = _realpath(folder)
        root = next((r for r in self._real_roots if _under(current, r)), None)
        if root is None:
            return ""
        while current != root and _under(current, root):
            if self.own_git_dir(current):
                return ""
            if os.path.lexists(os.path.join(current, ".git")) or is_bare_repository(current):
                return current
            current = os.path.dirname(current)
        return ""

    def inside(self, path: str, real: str | None = None) -> bool:
        """Whether ``path`` (and what it resolves to, ``real`` when already known) lies
        in the workspace or an additional directory."""
        normal = os.path.normpath(path)
        if not any(_under(normal, root) for root in self.roots):
            return False
        real = _realpath(path) if real is None else real
        return any(_under(real, root) for root in self._real_roots)


def _kernel_path(path: str) -> str:
    """``path`` as the kernel finds it: normalised as written, unless a ``..`` follows a
    symbolic link, where the physical (resolved) path is the one the kernel opens."""
    normal = os.path.normpath(path)
    if ".." not in path.split("/"):
        return normal  # no `..` to fold: the lexical path is the kernel's (links aside)
    real = _realpath(path)
    return normal if _realpath(normal) == real else real


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _expand(pattern: str) -> list[str] | None:
    """Expand a glob as bash does (see `skillkit.permissions.globbing`); None when
    that is not certain or it matches too much."""
    return globbing.expand(pattern, limit=_MAX_GLOB, max_levels=_MAX_GLOB_LEVELS)


# --------------------------------------------------------------------------- the walk

Cwds = tuple[str, ...] | None


class _Walker:
    def __init__(self, classifier: ShellClassifier, verdict: ShellVerdict) -> None:
        self.c = classifier
        self.v = verdict
        self._reals: dict[str, str] = {}

    def real(self, path: str) -> str:
        """``os.path.realpath``, once per path and command line."""
        found = self._reals.get(path)
        if found is None:
            found = self._reals[path] = _realpath(path)
        return found

    def inside(self, path: str) -> bool:
        return self.c.inside(path, self.real(path))

    # ----- findings

    def normal(self, hint: str, reason: str) -> None:
        self.v.raise_to(RiskLevel.NORMAL, hint, reason)

    def danger(self, hint: str, reason: str) -> None:
        self.v.raise_to(RiskLevel.DANGEROUS, hint, reason)

    def unknown(self, reason: str) -> None:
        self.v.understood = False
        self.normal("not understood", reason)

    # ----- structure

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

    def assignment(self, text: str, where: str) -> None:
        self.v.understood = False
        name = text.split("=", 1)[0].rstrip("+")
        if "[" in name:
            self.danger("evaluates code in a subscript", f"'{where}' assigns to an array subscript")
        elif _DANGEROUS_ENV.match(name):
            self.danger(
                "environment that runs programs",
                f"'{where}' sets {name}, which can make programs run other programs",
            )
        else:
            self.normal("sets variables", f"'{where}' sets {name}")

    # ----- paths

    def read(self, paths: list[str] | None, what: str) -> bool:
        """Record reads; returns True when all are known and inside the workspace."""
        if paths is None:
            self.v.reads.append(None)
            self.normal("unknown path", f"{what} reads a path known only when it runs")
            return False
        ok = True
        for path in paths:
            self._record(self.v.reads, path)
            if path in _HARMLESS:
                continue
            if not self.inside(path):
                ok = False
                self.normal("reads outside the workspace", f"{what} reads {path}")
        return ok

    def write(
        self, paths: list[str] | None, what: str, *, deleting: bool = False, quiet: bool = False
    ) -> bool:
        """Record writes; returns True if any is outside the workspace or unknown (a
        dangerous finding). Inside the workspace it records "writes files" unless
        ``quiet`` (the caller names the finding itself)."""
        verb = "deletes" if deleting else "writes"
        if paths is None:
            self.v.writes.append(None)
            hint = "delete of a computed path" if deleting else "write to a computed path"
            self.danger(hint, f"{what} {verb} a path known only when it runs")
            return True
        outside = False
        protected = ""
        for path in paths:
            if path in _HARMLESS or path.startswith("/dev/fd/"):
                continue
            self._record(self.v.writes, path)
            if not self.inside(path):
                outside = True
            protected = protected or self.protected(path)
        if protected:
            self.danger("writes a file that runs code later", f"{what} {verb} {protected}")
            return True
        if outside:
            hint = "delete outside the workspace" if deleting else "write outside the workspace"
            self.danger(hint, f"{what} {verb} outside the workspace")
        elif not quiet and paths and any(p not in _HARMLESS for p in paths):
            self.normal("deletes files" if deleting else "writes files", f"{what} {verb} a file")
        return outside

    def protected(self, path: str) -> str:
        """Why writing ``path`` makes code run later (`skillkit.protected`), judged on
        the path as written and as resolved; "" when it does not."""
        for candidate in dict.fromkeys((os.path.normpath(path), self.real(path))):
            folded = candidate.casefold()
            if not any(name in folded for name in _PROTECTED_NEEDLES):
                continue  # no name `skillkit.protected` looks for: the common case, fast
            reason = protected_reason(candidate)
            if reason:
                return f"{candidate} ({reason})"
        return ""

    def _record(self, into: list[str | None], path: str) -> None:
        normal = os.path.normpath(path)
        into.append(normal)
        real = self.real(path)
        if real != normal:
            into.append(real)

    # ----- one command

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
        if piped_from and _c.is_interpreter(name) and _c.reads_code_from_stdin(name, args):
            self.danger(
                "download piped to a shell", f"pipes the output of {piped_from} into {name}"
            )
        if _c.is_interpreter(name) and any(
            _first_downloader(sub) for w in args for sub in w.substitutions
        ):
            self.danger("download piped to a shell", f"'{text}' runs downloaded code")
        if name in _c.PRIVILEGE:
            script_text = _c.inline_script("su", args) if name in ("su", "run0") else None
            if script_text is not None:
                self.v.understood = False
                self.script(parse_script(script_text), cwds, depth + 1)
            inner = _skip_options(args, _c.PRIVILEGE_OPTS_WITH_VALUE)
            after = self.argv(inner, cwds, depth, text, piped_from, appended) if inner else cwds
            self.danger("privilege escalation", f"'{text}' runs as another user")
            return after
        if name in _c.WRAPPERS:
            return self.wrapper(name, args, cwds, depth, text, piped_from, appended)
        if name in _c.SHELLS or name == "eval":
            script_text = _c.inline_script(name, args)
            if script_text is not None:
                self.v.understood = False
                self.script(parse_script(script_text), cwds, depth + 1)
                self.normal("runs a shell", f"'{text}' runs a shell")
                return cwds
        if name == "xargs":
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
            return cwds
        if name in ("cd", "pushd", "popd"):
            return self.change_directory(name, args, cwds, text)
        if name in _DECLARATIONS:
            for word in args:
                variable = word.text.split("=", 1)[0]
                if not word.text.startswith("-") and _DANGEROUS_ENV.match(variable):
                    self.danger(
                        "environment that runs programs",
                        f"'{text}' sets {variable}, which can make programs run other programs",
                    )
        if name in ("for", "case", "select"):
            return cwds
        use: ReadOnlyUse | str
        chdirs: list[Word] = []
        if by_path:
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

    def form(self, words: list[Word], appended: bool) -> None:
        """Record the command as it runs, for rules: quotes removed, and also with the
        program named without its folder (``/usr/bin/rm`` is ``rm``)."""
        texts = [w.text for w in words]
        if appended:
            # `find -exec cmd {} +` and `xargs -I{} cmd {}` put a path where `{}` stands:
            # from there on, the arguments are known only when it runs
            cut = next((i for i, t in enumerate(texts) if "{}" in t), len(texts))
            texts = texts[: max(cut, 1)]
        into = self.v.open_forms if appended else self.v.forms
        into.append(" ".join(texts))
        base = os.path.basename(texts[0])
        if base != texts[0] and base:
            into.append(" ".join([base, *texts[1:]]))

    def git_repository(self, args: list[Word], cwds: Cwds, text: str) -> bool:
        """Whether git run with ``args`` from ``cwds`` uses the workspace's own top-level
        repository. Another one — a bare repository or a nested ``.git`` found from
        ``-C``/``cd``, or one named by ``--git-dir`` — brings its own configuration,
        which can make git run programs: a dangerous finding."""
        dirs: list[str] = list(cwds or ())
        unknown = cwds is None
        i = 0
        while i < len(args) and args[i].text.startswith("-"):
            option, eq, value = args[i].text.partition("=")
            target: Word | None = None
            if option in ("-C", "--git-dir", "--work-tree") and not eq and i + 1 < len(args):
                target = args[i + 1]
                i += 1
            elif option in ("--git-dir", "--work-tree") and eq:
                target = Word(value, value)
            i += 1
            if target is None:
                continue
            paths = self.c.resolve(target, tuple(dirs) if dirs else cwds)
            if paths is None:
                unknown = True
                continue
            if option == "--git-dir":
                other = [p for p in paths if not self.c.own_git_dir(_realpath(p))]
                if other:
                    self.danger(
                        "another repository's configuration",
                        f"'{text}': git uses the repository {other[0]}, whose configuration "
                        "can make git run programs",
                    )
                    return False
            elif option == "-C":
                dirs = [_kernel_path(p) for p in paths]
        if unknown:
            return False
        for folder in dirs:
            found = self.c.other_repository(folder)
            if found:
                self.danger(
                    "another repository's configuration",
                    f"'{text}': git runs in the repository {found}, not the workspace's "
                    "own, and its configuration can make git run programs",
                )
                return False
        return True

    def reads_only(self, use: ReadOnlyUse, chdirs: list[Word], cwds: Cwds, text: str) -> bool:
        """Check and record an allowlisted invocation's reads; True when all are known
        and inside the workspace."""
        ok = True
        what = f"'{text}'"
        for word in chdirs:
            paths = self.c.resolve(word, cwds)
            ok = self.read(paths, what) and ok
            cwds = tuple(paths) if paths else None
        for word in use.paths:
            if word.text == "-":
                continue
            paths = self.c.resolve(word, cwds)
            ok = self.read(paths, what) and ok
            if use.files_only and any(os.path.isdir(p) for p in paths or ()):
                ok = False
                self.normal("reads a directory", f"{what} reads a directory file by file")
        for word in use.recursive:
            for path in self.c.resolve(word, cwds) or []:
                self.v.recursive_reads.append(os.path.normpath(path))
        if use.cwd:
            if cwds is None:
                self.v.reads.append(None)
                self.normal("unknown path", f"{what} reads a directory known only when it runs")
                ok = False
            else:
                ok = self.read(list(cwds), what) and ok
                if use.cwd_recursive:
                    self.v.recursive_reads.extend(cwds)
        return ok

    def candidates(self, name: str, args: list[Word], cwds: Cwds) -> None:
        """Record every argument of a command that is not allowlisted as a path it may
        read, so file deny rules apply to it (``None`` when it cannot be known)."""
        for word in args:
            text = word.text
            if word.dynamic:
                self.v.reads.append(None)
                continue
            if text.startswith("-"):
                _, eq, value = text.partition("=")
                if not eq or not value:
                    continue
                word = Word(value, value)
            elif name == "git":
                _, colon, path = text.partition(":")
                if colon and path:
                    self.candidates("", [Word(path, path)], cwds)
            paths = self.c.resolve(word, cwds)
            if paths is None:
                self.v.reads.append(None)
                continue
            for path in paths:
                self._record(self.v.reads, path)
                if os.path.isdir(path):
                    self.v.recursive_reads.append(os.path.normpath(path))

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
                inner_cwds = tuple(_kernel_path(p) for p in paths)
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
            kernel = _kernel_path(path)
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

    def __init__(self, walker: _Walker, cwds: Cwds, text: str) -> None:
        self.walker = walker
        self.cwds = cwds
        self.text = text

    def path(self, word: Word) -> str | None:
        paths = self.walker.c.resolve(word, self.cwds)
        return _kernel_path(paths[0]) if paths and len(paths) == 1 else None

    def inside(self, path: str | None) -> bool:
        return path is not None and (path in _HARMLESS or self.walker.inside(path))

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
