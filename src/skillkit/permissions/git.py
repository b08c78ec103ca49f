"""How risky a ``git`` command is: read-only queries, ordinary changes, and the ones that
lose work or rewrite shared history (force pushes, hard resets, cleans, branch deletes).
Internal to the classifier."""

from __future__ import annotations

from typing import NamedTuple

from skillkit.permissions.commands import JudgeContext, has_short, split_args
from skillkit.permissions.shell import Word

_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}
)


class _Args(NamedTuple):
    options: list[str]
    positional: list[Word]
    texts: list[str]


_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "annotate",
        "describe",
        "shortlog",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "ls-remote",
        "cat-file",
        "rev-list",
        "grep",
        "whatchanged",
        "help",
        "version",
        "var",
        "check-ignore",
        "check-attr",
        "count-objects",
        "merge-base",
        "name-rev",
        "for-each-ref",
        "show-ref",
        "show-branch",
        "cherry",
        "range-diff",
        "diff-tree",
        "diff-files",
        "diff-index",
        "verify-commit",
        "verify-tag",
        "fsck",
    }
)
_BRANCH_LISTING = frozenset(
    {
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "--list",
        "-l",
        "--show-current",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
        "--points-at",
    }
)


def judge_git(args: list[Word], ctx: JudgeContext) -> None:
    """Record what ``git args...`` does."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text == "-c" or text.startswith("--config-env"):
            ctx.normal("sets git configuration", f"'{ctx.text}' overrides git configuration")
        i += 2 if text in _GLOBAL_WITH_VALUE else 1
    if i >= len(args):
        return
    sub, rest = args[i].text, args[i + 1 :]
    options, positional, _ = split_args(rest)
    texts = [a.text for a in rest]
    if sub in _READ_ONLY:
        if sub == "diff" and any(o.startswith("--output") for o in options):
            ctx.normal("writes files")
        return
    handler = _SUBCOMMANDS.get(sub)
    if handler is not None:
        handler(_Args(options, positional, texts), ctx)
        return
    ctx.normal("changes the repository", f"'{ctx.text}' changes the repository")


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
    listing = all(o in _BRANCH_LISTING or o.startswith(("--sort", "--format")) for o in a.options)
    if listing and (not a.positional or "--list" in a.options or "-l" in a.options):
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
        ctx.normal("changes git configuration")


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
