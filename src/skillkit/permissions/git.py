"""How risky a ``git`` command is: read-only queries, ordinary changes, and the ones that
lose work or rewrite shared history (force pushes, hard resets, cleans, branch deletes).
Internal to the classifier; the read-only queries are in
`skillkit.permissions.git_reads`."""

from __future__ import annotations

from typing import NamedTuple

from skillkit.permissions.git_reads import branch_lists, git_read_only_use
from skillkit.permissions.judging import JudgeContext, has_short, split_args
from skillkit.permissions.shell import Word

__all__ = ["git_read_only_use", "judge_git"]

_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
# global options that can make git run a program or read another repository's config
_CODE_GLOBAL = frozenset({"--config-env", "--exec-path", "-p", "--paginate", "--super-prefix"})
# per-subcommand options that run a program or write where they should not
_CODE_ANY = frozenset(
    {
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--config",
        "--template",
        "--ext-diff",
        "--output",
        "--open-files-in-pager",
        "--extcmd",
        "--tool",
        "--textconv",
        "--filters",
        "--sendmail-cmd",
        "--smtp-server",
        "--to-cmd",
        "--cc-cmd",
        "--header-cmd",
    }
)
_CODE_OPTIONS: dict[str, frozenset[str]] = {
    "grep": frozenset({"-O"}),
    "clone": frozenset({"-u", "-c"}),
    "ls-remote": frozenset({"-u"}),
    "fetch": frozenset(),
    "rebase": frozenset({"-x"}),
    "difftool": frozenset({"-x", "-t"}),
    "mergetool": frozenset({"-t"}),
}


class _Args(NamedTuple):
    options: list[str]
    positional: list[Word]
    texts: list[str]


def _w(text: str) -> frozenset[str]:
    return frozenset(text.split())


def judge_git(args: list[Word], ctx: JudgeContext) -> None:
    """Record what ``git args...`` does: code-running options are dangerous, everything
    the read-only allowlist does not accept changes something."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        name = text.partition("=")[0]
        if text == "-c" or name in _CODE_GLOBAL or _abbreviates(name, _CODE_GLOBAL):
            ctx.danger(
                "git option runs programs",
                f"'{ctx.text}': git {name} can make git run any program",
            )
        if name in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args):
            path = ctx.path(args[i + 1]) if text == name else None
            if not ctx.inside(path):
                ctx.danger(
                    "git repository outside the workspace",
                    f"'{ctx.text}': a repository outside the workspace may run its own "
                    "configured programs",
                )
        i += 2 if text in _GLOBAL_WITH_VALUE else 1
    if i >= len(args):
        return
    sub, rest = args[i].text, args[i + 1 :]
    for word in rest:
        name = word.text.partition("=")[0]
        code = _CODE_OPTIONS.get(sub, frozenset()) | _CODE_ANY
        long = name.startswith("--") and (name in code or _abbreviates(name, code))
        short = (
            name.startswith("-")
            and not name.startswith("--")
            and any("-" + ch in code for ch in name[1:])
        )
        if long or short:
            ctx.danger("git option runs programs", f"'{ctx.text}': {name} runs a program")
    options, positional, _ = split_args(rest)
    texts = [a.text for a in rest]
    if sub in ("submodule",) and positional and positional[0].text == "foreach":
        ctx.danger("git option runs programs", f"'{ctx.text}' runs a shell command")
    if sub == "bisect" and positional and positional[0].text == "run":
        ctx.danger("git option runs programs", f"'{ctx.text}' runs a command at each step")
    if sub in ("send-email", "imap-send", "instaweb", "daemon", "credential", "web--browse"):
        ctx.danger(
            "git command runs programs or reveals credentials",
            f"'{ctx.text}': git {sub} runs configured programs, serves the repository or "
            "shows stored credentials",
        )
    if sub.startswith("credential-"):
        ctx.danger("reads stored credentials", f"'{ctx.text}' reads stored credentials")
    _git_writes(sub, rest, ctx)
    handler = _SUBCOMMANDS.get(sub)
    if handler is not None:
        handler(_Args(options, positional, texts), ctx)
        return
    ctx.normal("changes the repository", f"'{ctx.text}' may change the repository")


# subcommand -> options whose value is a file or folder git writes
_WRITE_OPTIONS: dict[str, frozenset[str]] = {
    "format-patch": _w("-o --output-directory"),
    "archive": _w("-o --output"),
    "checkout-index": _w("--prefix"),
    "bugreport": _w("-o --output-directory"),
    "diagnose": _w("-o --output-directory"),
}
# subcommand -> which positional operand (after the action word, if any) is written
_WRITE_OPERANDS: dict[str, tuple[str, int]] = {
    "clone": ("", 1),
    "init": ("", 0),
    "worktree": ("add", 0),
    "bundle": ("create", 0),
}


def _git_writes(sub: str, rest: list[Word], ctx: JudgeContext) -> None:
    """Record the files and folders a git subcommand writes where it is told to (an
    outside one is a dangerous finding)."""
    writes = _WRITE_OPTIONS.get(sub, frozenset())
    targets: list[Word] = []
    operands: list[Word] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        text = word.text
        i += 1
        if text == "--":
            operands.extend(rest[i:])
            break
        if not text.startswith("-") or text == "-":
            operands.append(word)
            continue
        name, eq, value = text.partition("=")
        option = name if name in writes else ""
        if not option and name.startswith("--"):
            option = next((o for o in writes if len(name) > 3 and o.startswith(name)), "")
        if not option and not name.startswith("--") and len(name) > 2:
            short = "-" + name[1]
            if short in writes:
                targets.append(Word(name[2:], name[2:]))
            continue
        if not option:
            continue
        if eq:
            targets.append(Word(value, value))
        elif i < len(rest):
            targets.append(rest[i])
            i += 1
    action, index = _WRITE_OPERANDS.get(sub, ("-", -1))
    if index >= 0:
        if action:
            operands = operands[1:] if operands and operands[0].text == action else []
        targets.extend(operands[index : index + 1])
    if targets:
        ctx.write(targets)


def _abbreviates(name: str, options: frozenset[str]) -> bool:
    """git accepts unique prefixes of long options: ``--outp`` is ``--output``."""
    return len(name) >= 3 and name.startswith("--") and any(o.startswith(name) for o in options)


def _push(a: _Args, ctx: JudgeContext) -> None:
    force = (
        has_short(a.options, "f")
        or any(o.startswith(("--force", "--mirror")) for o in a.options)
        or any(p.text.startswith("+") for p in a.positional[1:])
    )
    if force:
        ctx.danger("force push", f"'{ctx.text}' overwrites remote history")
    elif (
        "--delete" in a.options
        or has_short(a.options, "d")
        or any(p.text.startswith(":") for p in a.positional[1:])
    ):
        ctx.danger("deletes a remote branch")
    elif "--prune" in a.options:
        ctx.danger("deletes remote branches")
    else:
        ctx.normal("pushes to a remote")


def _reset(a: _Args, ctx: JudgeContext) -> None:
    if "--hard" in a.options or "--merge" in a.options or "--keep" in a.options:
        ctx.danger("discards uncommitted changes")
    else:
        ctx.normal("changes the index")


def _clean(a: _Args, ctx: JudgeContext) -> None:
    if has_short(a.options, "n") or "--dry-run" in a.options:
        return
    if has_short(a.options, "f") or "--force" in a.options:
        ctx.danger("deletes untracked files")
    else:
        ctx.normal("changes the working tree")


def _checkout(a: _Args, ctx: JudgeContext) -> None:
    if (
        "--" in a.texts
        or any(p.text in (".", ":/") for p in a.positional)
        or has_short(a.options, "f")
        or "--force" in a.options
    ):
        ctx.danger("discards uncommitted changes")
    else:
        ctx.normal("switches branches")


def _switch(a: _Args, ctx: JudgeContext) -> None:
    if "--discard-changes" in a.options or "--force" in a.options or has_short(a.options, "f"):
        ctx.danger("discards uncommitted changes")
    else:
        ctx.normal("switches branches")


def _restore(a: _Args, ctx: JudgeContext) -> None:
    staged_only = ("--staged" in a.options or has_short(a.options, "S")) and not (
        "--worktree" in a.options or has_short(a.options, "W")
    )
    if staged_only:
        ctx.normal("changes the index")
    else:
        ctx.danger("discards uncommitted changes")


def _branch(a: _Args, ctx: JudgeContext) -> None:
    if "-D" in a.options or (
        ("-d" in a.options or "--delete" in a.options)
        and ("-f" in a.options or "--force" in a.options)
    ):
        ctx.danger("force deletes a branch")
        return
    rest = [Word(t, t) for t in a.texts]
    if branch_lists(rest):
        return
    ctx.normal("changes branches")


def _tag(a: _Args, ctx: JudgeContext) -> None:
    if (not a.positional and not a.options) or "-l" in a.options or "--list" in a.options:
        return
    ctx.normal("changes tags")


def _remote(a: _Args, ctx: JudgeContext) -> None:
    if not a.positional or a.positional[0].text in ("show", "get-url"):
        return
    ctx.normal("changes remotes")


def _config(a: _Args, ctx: JudgeContext) -> None:
    reading = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin"}
    if reading & set(a.options) or (len(a.positional) == 1 and a.positional[0].text != "unset"):
        return
    if "--global" in a.options or "--system" in a.options:
        ctx.danger(
            "write outside the workspace",
            f"'{ctx.text}' changes configuration outside the workspace",
        )
    else:
        # core.fsmonitor, core.pager, alias.*, diff drivers...: configuration runs programs
        ctx.danger(
            "changes git configuration",
            f"'{ctx.text}' changes git configuration, which can make git run programs",
        )


def _stash(a: _Args, ctx: JudgeContext) -> None:
    action = a.positional[0].text if a.positional else "push"
    if action in ("list", "show"):
        return
    if action in ("drop", "clear"):
        ctx.danger("drops stashed changes")
    else:
        ctx.normal("changes the stash")


def _reflog(a: _Args, ctx: JudgeContext) -> None:
    action = a.positional[0].text if a.positional else "show"
    if action in ("expire", "delete"):
        ctx.danger("history rewrite", f"'{ctx.text}' deletes reflog entries")


def _rewrite(a: _Args, ctx: JudgeContext) -> None:
    ctx.danger("history rewrite")


def _worktree(a: _Args, ctx: JudgeContext) -> None:
    action = a.positional[0].text if a.positional else ""
    if action == "list":
        return
    if action == "remove" and ("--force" in a.options or has_short(a.options, "f")):
        ctx.danger("discards uncommitted changes")
    else:
        ctx.normal("changes worktrees")


def _submodule(a: _Args, ctx: JudgeContext) -> None:
    if a.positional and a.positional[0].text in ("status", "summary"):
        return
    ctx.normal("changes submodules")


_SUBCOMMANDS = {
    "push": _push,
    "reset": _reset,
    "clean": _clean,
    "checkout": _checkout,
    "switch": _switch,
    "restore": _restore,
    "branch": _branch,
    "tag": _tag,
    "remote": _remote,
    "config": _config,
    "stash": _stash,
    "reflog": _reflog,
    "filter-branch": _rewrite,
    "filter-repo": _rewrite,
    "worktree": _worktree,
    "submodule": _submodule,
}
