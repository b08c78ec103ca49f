"""The shell-command classifier: how risky is a command line?

`ShellClassifier.classify` parses a command line (see `skillkit.permissions.shell`) and
judges every simple command in it — including those after ``&&``, ``;``, ``|``, inside
subshells, ``$(...)``, backticks, ``bash -c '...'``, ``xargs`` and ``find -exec`` — and
returns the verdict of the riskiest part:

- ``SAFE``: only reads (``ls``, ``cat``, ``git status``, ``grep``...), no file writes;
- ``NORMAL``: may change files or state inside the workspace, or is unknown;
- ``DANGEROUS``: recursive deletes, deletes or writes outside the workspace, a download
  piped into a shell, privilege changes, force pushes and other history rewrites, disk
  tools, power commands — or a line that cannot be parsed.

The verdict also lists the paths the command reads and writes (resolved against the
workspace, following ``cd``), so the gate can apply file rules such as ``read(~/.ssh/**)``
to shell commands too. Paths that depend on an expansion are reported as ``None``
(unknown); writing or deleting such a path counts as dangerous.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path

from skillkit.permissions import commands as _c
from skillkit.permissions.shell import (
    Command,
    Group,
    Script,
    ShellSyntaxError,
    Word,
    iter_commands,
    parse_script,
)

__all__ = ["RiskLevel", "ShellClassifier", "ShellVerdict", "classify_command"]


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
    simple commands found (their text), ``reads``/``writes`` the absolute paths touched
    (``None`` for a path that cannot be known before running).
    """

    level: RiskLevel = RiskLevel.SAFE
    hint: str = "read-only"
    reason: str = "only reads"
    commands: list[str] = field(default_factory=list)
    reads: list[str | None] = field(default_factory=list)
    writes: list[str | None] = field(default_factory=list)

    @property
    def dangerous(self) -> bool:
        return self.level is RiskLevel.DANGEROUS

    def raise_to(self, level: RiskLevel, hint: str, reason: str) -> None:
        """Record a finding; keeps the first finding of the highest level."""
        if level > self.level or (level == self.level and self.hint == "read-only"):
            self.level, self.hint, self.reason = level, hint, reason


class ShellClassifier:
    """Judges command lines relative to a workspace.

    ``workspace`` is where relative paths start; ``writable`` lists further directories
    where writes are not "outside the workspace" (``/dev/null`` and the standard streams
    always are fine). ``home`` expands ``~`` and ``$HOME``. Never raises for any text.
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

    def classify(self, command_line: str) -> ShellVerdict:
        verdict = ShellVerdict()
        try:
            script = parse_script(command_line)
        except ShellSyntaxError as exc:
            verdict.raise_to(RiskLevel.DANGEROUS, "unparseable command", f"cannot parse: {exc}")
            verdict.commands.append(command_line.strip())
            return verdict
        if _c.FORK_BOMB.search(command_line):
            verdict.raise_to(
                RiskLevel.DANGEROUS, "fork bomb", "defines a self-replicating function"
            )
        _Walker(self, verdict).script(script, self.workspace, depth=0)
        if not verdict.commands and not verdict.writes:
            verdict.reason = "does nothing"
        return verdict

    # ----- paths

    def resolve(self, word: Word | str, cwd: str | None) -> str | None:
        """The absolute path a word names, or None when it cannot be known in advance."""
        text = word if isinstance(word, str) else word.text
        dynamic = False if isinstance(word, str) else word.dynamic
        if text.startswith(("$HOME/", "${HOME}/")) or text in ("$HOME", "${HOME}"):
            text = self.home + text[text.index("}") + 1 if text.startswith("${") else 5 :]
        elif dynamic:
            return None
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        elif text.startswith("~"):
            return None  # another user's home
        if "$" in text and not isinstance(word, str) and word.dynamic:
            return None
        if not os.path.isabs(text):
            if cwd is None:
                return None
            text = os.path.join(cwd, text)
        return os.path.normpath(text)

    def inside(self, path: str | None) -> bool:
        """Whether ``path`` is inside the workspace or a writable directory."""
        if path is None:
            return False
        if path in _c.HARMLESS_TARGETS or path.startswith("/dev/fd/"):
            return True
        return any(_under(path, root) for root in (self.workspace, *self.writable))


def classify_command(command_line: str, workspace: str | os.PathLike[str] = ".") -> ShellVerdict:
    """Classify ``command_line`` relative to ``workspace`` (a shortcut for one-off use)."""
    return ShellClassifier(workspace).classify(command_line)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# --------------------------------------------------------------------------- the walk


class _Walker:
    def __init__(self, classifier: ShellClassifier, verdict: ShellVerdict) -> None:
        self.c = classifier
        self.v = verdict

    def script(self, script: Script, cwd: str | None, depth: int) -> str | None:
        """Judge a script; returns the working directory after it (``cd`` is followed)."""
        if depth > 8:
            self.v.raise_to(RiskLevel.DANGEROUS, "unparseable command", "nested too deeply")
            return cwd
        for pipeline in script.pipelines:
            downloader = ""
            for stage in pipeline.stages:
                if isinstance(stage, Group):
                    self.group(stage, cwd, depth)
                    source = _first_downloader(stage.body)
                    downloader = downloader or source
                    continue
                cwd = self.command(stage, cwd, depth, piped_from=downloader)
                downloader = downloader or _downloader_name(stage)
        return cwd

    def group(self, group: Group, cwd: str | None, depth: int) -> None:
        for r in group.redirects:
            self.redirect_target(r.target, r.writes, cwd, f"{r.op}{r.target.raw}")
        self.script(group.body, cwd, depth + 1)
        if group.function_name is not None:
            self.v.raise_to(
                RiskLevel.NORMAL, "defines a function", f"defines {group.function_name}"
            )

    def redirect_target(self, target: Word, writes: bool, cwd: str | None, text: str) -> None:
        for sub in target.substitutions:
            self.script(sub, cwd, 1)
        if not writes:
            return
        path = self.c.resolve(target, cwd)
        if path in _c.HARMLESS_TARGETS or (path or "").startswith("/dev/fd/"):
            return
        self.v.writes.append(path)
        if path is None:
            self.v.raise_to(
                RiskLevel.DANGEROUS,
                "write to a computed path",
                f"'{text}' writes a path known only when it runs",
            )
        elif self.c.inside(path):
            self.v.raise_to(RiskLevel.NORMAL, "writes files", f"'{text}' writes a file")
        else:
            self.v.raise_to(
                RiskLevel.DANGEROUS,
                "write outside the workspace",
                f"'{text}' writes outside the workspace",
            )

    def command(
        self, cmd: Command, cwd: str | None, depth: int, piped_from: str = ""
    ) -> str | None:
        text = cmd.text
        self.v.commands.append(text)
        for word in (*cmd.assignments, *cmd.words):
            for sub in word.substitutions:
                self.script(sub, cwd, depth + 1)
        for r in cmd.redirects:
            self.redirect_target(r.target, r.writes, cwd, f"{r.op}{r.target.raw}")
        words = list(cmd.words)
        while words and words[0].text in _c.KEYWORDS and not words[0].quoted:
            words = words[1:]
        if not words:
            return cwd
        if words[0].text in _c.LOOP_HEADERS and not words[0].quoted:
            return cwd
        return self.argv(words, cwd, depth, text, piped_from)

    def argv(
        self, words: list[Word], cwd: str | None, depth: int, text: str, piped_from: str = ""
    ) -> str | None:
        v = self.v
        head = words[0]
        name = os.path.basename(head.text)
        args = words[1:]
        if head.dynamic:
            if any(_first_downloader(s) for s in head.substitutions):
                v.raise_to(
                    RiskLevel.DANGEROUS, "runs downloaded code", f"'{text}' runs what it downloads"
                )
            v.raise_to(
                RiskLevel.NORMAL, "runs a computed command", f"'{text}' runs a computed command"
            )
            return cwd
        if piped_from and _c.is_interpreter(name) and _c.reads_code_from_stdin(name, args):
            v.raise_to(
                RiskLevel.DANGEROUS,
                "download piped to a shell",
                f"pipes the output of {piped_from} into {name}",
            )
        if _c.is_interpreter(name) and _reads_downloaded_code(args):
            v.raise_to(
                RiskLevel.DANGEROUS, "download piped to a shell", f"'{text}' runs downloaded code"
            )
        # wrappers: judge the command they run
        if name in _c.PRIVILEGE:
            # judge the inner command first: its finding is the more specific one
            inner = _skip_options(args, _c.PRIVILEGE_OPTS_WITH_VALUE)
            after = self.argv(inner, cwd, depth, text, piped_from) if inner else cwd
            v.raise_to(
                RiskLevel.DANGEROUS, "privilege escalation", f"'{text}' runs as another user"
            )
            return after
        if name in _c.WRAPPERS:
            inner = _c.unwrap(name, args)
            return self.argv(inner, cwd, depth, text, piped_from) if inner else cwd
        if name in _c.SHELLS or name == "eval":
            script_text = _c.inline_script(name, args)
            if script_text is not None:
                try:
                    inner_script = parse_script(script_text)
                except ShellSyntaxError as exc:
                    v.raise_to(RiskLevel.DANGEROUS, "unparseable command", f"cannot parse: {exc}")
                    return cwd
                self.script(inner_script, cwd, depth + 1)
                if any(w.dynamic for w in args):
                    v.raise_to(
                        RiskLevel.NORMAL, "runs a computed command", f"'{text}' runs computed code"
                    )
                return cwd
        if name in ("xargs",):
            inner = _c.xargs_command(args)
            if inner and os.path.basename(inner[0].text) in _c.DELETERS:
                v.raise_to(
                    RiskLevel.DANGEROUS, "bulk delete", f"'{text}' deletes every file it is fed"
                )
            if inner:
                self.argv(inner, None, depth, text)
            v.raise_to(RiskLevel.NORMAL, "runs commands", f"'{text}' runs commands on its input")
            return cwd
        if name in ("cd", "pushd"):
            target = next((w for w in args if not w.text.startswith("-")), None)
            if target is None:
                return self.c.home
            return self.c.resolve(target, cwd)
        if name == "popd":
            return None
        _c.judge(name, args, _Context(self, cwd, text))
        return cwd


class _Context:
    """What a per-command rule in `commands` may use: path resolution and findings."""

    __slots__ = ("cwd", "text", "walker")

    def __init__(self, walker: _Walker, cwd: str | None, text: str) -> None:
        self.walker = walker
        self.cwd = cwd
        self.text = text

    def path(self, word: Word) -> str | None:
        return self.walker.c.resolve(word, self.cwd)

    def inside(self, path: str | None) -> bool:
        return self.walker.c.inside(path)

    def read(self, words: list[Word]) -> None:
        self.walker.v.reads.extend(self.path(w) for w in words)

    def write(self, words: list[Word], *, deleting: bool = False) -> bool:
        """Record writes to ``words``; returns True if any is outside the workspace."""
        paths = [self.path(w) for w in words]
        self.walker.v.writes.extend(paths)
        verb = "deletes" if deleting else "writes"
        if any(p is not None and not self.inside(p) for p in paths):
            hint = "delete outside the workspace" if deleting else "write outside the workspace"
            self.danger(hint, f"'{self.text}' {verb} outside the workspace")
            return True
        if None in paths:
            hint = "delete of a computed path" if deleting else "write to a computed path"
            self.danger(hint, f"'{self.text}' {verb} a path known only when it runs")
            return True
        return False

    def danger(self, hint: str, reason: str | None = None) -> None:
        self.walker.v.raise_to(RiskLevel.DANGEROUS, hint, reason or f"'{self.text}': {hint}")

    def normal(self, hint: str, reason: str | None = None) -> None:
        self.walker.v.raise_to(RiskLevel.NORMAL, hint, reason or f"'{self.text}': {hint}")

    def run(self, words: list[Word]) -> None:
        """Judge a command another command runs (``find -exec``...)."""
        if words:
            self.walker.argv(words, None, 1, self.text)


def _downloader_name(cmd: Command) -> str:
    words = [w for w in cmd.words if not (w.text in _c.KEYWORDS and not w.quoted)]
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


def _reads_downloaded_code(args: list[Word]) -> bool:
    return any(_first_downloader(sub) for w in args for sub in w.substitutions)


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
