"""What a command line's parts read, write and set, recorded into its `ShellVerdict`:
reads and writes inside or outside the workspace, writes to files that run code later,
variables that make programs run other programs, the paths of allowlisted readers, and
the git repository a git command uses. `skillkit.permissions.shell_walk` decides what
each command does; this records it."""

from __future__ import annotations

import os
import re

from skillkit.permissions.readonly import ReadOnlyUse
from skillkit.permissions.shell import Word
from skillkit.permissions.shell_paths import ShellPaths, kernel_path, realpath
from skillkit.permissions.shell_verdict import RiskLevel, ShellVerdict
from skillkit.protected import PROTECTED_NAMES, protected_reason

__all__ = ["DANGEROUS_ENV", "HARMLESS", "Cwds", "Findings"]

# environment variables that make programs run other programs, load code or read
# configuration from elsewhere
DANGEROUS_ENV = re.compile(
    r"(GIT_|LD_|DYLD_|BASH_|LESS|PYTHON|PERL|RUBY|NODE_|NPM_CONFIG_|JAVA_|_JAVA_|SSH_|"
    r"SYSTEMD_|XDG_|RIPGREP_|GREP_|TAR_|SUDO_|PKG_CONFIG|DOCKER_|CARGO_|RUSTC|GOFLAGS)"
    r"|(ENV|PATH|CDPATH|HOME|PAGER|MANPAGER|MANOPT|EDITOR|VISUAL|BROWSER|SHELL|SHELLOPTS|"
    r"BASHOPTS|PS4|PROMPT_COMMAND|IFS|TMPDIR|CC|CXX|MAKEFLAGS|CLASSPATH|GLOBIGNORE|"
    r"HISTFILE|INPUTRC|TERMINFO|LOCPATH|GCONV_PATH|OPENSSL_CONF|CURL_HOME|WGETRC|ZDOTDIR)$"
)
# every name `protected_reason` looks for occurs in a protected path's text
_PROTECTED_NEEDLES = (*PROTECTED_NAMES, ".git", "config", "hooks", "info")
HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})

Cwds = tuple[str, ...] | None
"""The possible working directories of a command; None when they cannot be known."""


class Findings:
    """Records the findings of one command line into its verdict."""

    def __init__(self, classifier: ShellPaths, verdict: ShellVerdict) -> None:
        self.c = classifier
        self.v = verdict
        self._reals: dict[str, str] = {}

    def real(self, path: str) -> str:
        """``os.path.realpath``, once per path and command line."""
        found = self._reals.get(path)
        if found is None:
            found = self._reals[path] = realpath(path)
        return found

    def inside(self, path: str) -> bool:
        return self.c.inside(path, self.real(path))

    def normal(self, hint: str, reason: str) -> None:
        self.v.raise_to(RiskLevel.NORMAL, hint, reason)

    def danger(self, hint: str, reason: str) -> None:
        self.v.raise_to(RiskLevel.DANGEROUS, hint, reason)

    def unknown(self, reason: str) -> None:
        self.v.understood = False
        self.normal("not understood", reason)

    def assignment(self, text: str, where: str) -> None:
        self.v.understood = False
        name = text.split("=", 1)[0].rstrip("+")
        if "[" in name:
            self.danger("evaluates code in a subscript", f"'{where}' assigns to an array subscript")
        elif DANGEROUS_ENV.match(name):
            self.danger(
                "environment that runs programs",
                f"'{where}' sets {name}, which can make programs run other programs",
            )
        else:
            self.normal("sets variables", f"'{where}' sets {name}")

    def read(self, paths: list[str] | None, what: str) -> bool:
        """Record reads; returns True when all are known and inside the workspace."""
        if paths is None:
            self.v.reads.append(None)
            self.normal("unknown path", f"{what} reads a path known only when it runs")
            return False
        ok = True
        for path in paths:
            self._record(self.v.reads, path)
            if path in HARMLESS:
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
            if path in HARMLESS or path.startswith("/dev/fd/"):
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
        elif not quiet and paths and any(p not in HARMLESS for p in paths):
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
                other = [p for p in paths if not self.c.own_git_dir(realpath(p))]
                if other:
                    self.danger(
                        "another repository's configuration",
                        f"'{text}': git uses the repository {other[0]}, whose configuration "
                        "can make git run programs",
                    )
                    return False
            elif option == "-C":
                dirs = [kernel_path(p) for p in paths]
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
