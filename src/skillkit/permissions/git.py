"""How risky a ``git`` command is: read-only queries, ordinary changes, and the ones that
lose work or rewrite shared history (force pushes, hard resets, cleans, branch deletes).
Internal to the classifier."""

from __future__ import annotations

import re
from typing import NamedTuple

from skillkit.permissions.commands import JudgeContext, has_short, split_args
from skillkit.permissions.readonly import ReadOnlyUse
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


_LOG_FLAGS = _w(
    "--oneline -p -u --patch -s --no-patch --stat --shortstat --numstat --name-only "
    "--name-status --graph --no-decorate --all --reverse --first-parent --merges "
    "--no-merges --follow --abbrev-commit --no-abbrev-commit --relative-date -i "
    "--regexp-ignore-case --cached --staged --minimal --patience --histogram -w -b "
    "--ignore-all-space --ignore-space-change --ignore-blank-lines --no-color --full-history "
    "--left-right --cherry-pick --cherry-mark --topo-order --date-order --author-date-order "
    "--summary --raw -z --exit-code --quiet --check --no-prefix --no-renames -M -R --boundary "
    "--no-walk --source --use-mailmap --show-signature --no-ext-diff --no-textconv "
    "--full-index --binary --compact-summary --no-merges --remove-empty --simplify-by-decoration "
    "--ancestry-path --show-pulls --parents --children --count --objects --all-match "
    "--invert-grep --basic-regexp --extended-regexp --fixed-strings --perl-regexp -E -F "
    "--name-only --numbered -n -e -c -h --no-stat --single-worktree --pickaxe-all "
    "--pickaxe-regex --ignore-cr-at-eol --function-context -W --text -a "
    " --mailmap --no-mailmap --no-standard-notes "
    ""
)
_LOG_VALUED = _w(
    "-n --max-count --skip --since --after --until --before --author --committer --grep "
    "--diff-filter -S -G --word-diff-regex --src-prefix --dst-prefix --line-prefix -L "
    "--diff-algorithm --inter-hunk-context "
    "--stat-width --stat-name-width --stat-count --dirstat-by-file --anchored --expand-tabs "
    "--ws-error-highlight --color-moved --color-moved-ws --since-as-filter --group -l"
)
# long options whose value is optional and, when given, attached with "="
_OPTIONAL = _w(
    "--stat --decorate --abbrev --color --relative --word-diff --submodule --dirstat "
    "--find-renames --find-copies --break-rewrites --notes --color-moved --color-moved-ws "
    "--branches --tags --remotes --porcelain --untracked-files --ignored --ignore-submodules "
    "--dirty --short --abbrev-ref --color-words --column --show-notes --expand-tabs "
    "--path-format --format --pretty --date --diff-merges --cc --function-context -U "
    "--unified -l --glob --exclude --min-parents --max-parents --encoding "
    "--disambiguate --since-as-filter --more"
)
_STATUS_FLAGS = _w(
    "-s --short -b --branch --long -v --verbose -z --column --no-column --show-stash -u "
    "--ahead-behind --no-ahead-behind --renames --no-renames"
)
_STATUS_VALUED = _w("--porcelain --untracked-files -u --ignored --ignore-submodules --find-renames")
_BRANCH_LISTING = _w(
    "-a --all -r --remotes -v -vv --verbose --list -l --show-current --contains "
    "--no-contains --merged --no-merged --color --no-color --column --no-column -i "
    "--ignore-case --points-at --sort --format --abbrev --no-abbrev"
)
_BRANCH_VALUED = _w("--contains --no-contains --merged --no-merged --points-at --sort --format")

_CONTENT_OPTIONS = _w(
    "--patch --patch-with-stat --patch-with-raw --unified --word-diff --color-words "
    "--function-context --full-diff --cc --combined-all-paths --diff-merges --remerge-diff "
    "--binary --text"
)
# subcommand -> (flags, options taking a value, reads file contents)
_READ_ONLY: dict[str, tuple[frozenset[str], frozenset[str], bool]] = {
    "status": (_STATUS_FLAGS, _STATUS_VALUED, False),
    "log": (_LOG_FLAGS, _LOG_VALUED, True),
    "show": (_LOG_FLAGS, _LOG_VALUED, True),
    "diff": (_LOG_FLAGS, _LOG_VALUED, True),
    "whatchanged": (_LOG_FLAGS, _LOG_VALUED, True),
    "shortlog": (_LOG_FLAGS | _w("-s -n -e --summary --numbered --email"), _LOG_VALUED, False),
    "rev-list": (_LOG_FLAGS, _LOG_VALUED, False),
    "diff-tree": (_LOG_FLAGS | _w("-r -t --root"), _LOG_VALUED, True),
    "diff-files": (_LOG_FLAGS, _LOG_VALUED, True),
    "diff-index": (_LOG_FLAGS, _LOG_VALUED, True),
    "blame": (
        _w(
            "-w -M -C -e -s -l -t -f -n -p -b -c --porcelain --line-porcelain --show-email "
            "--show-name --show-number --root --incremental --abbrev --no-progress "
            "--color-lines --color-by-age"
        ),
        _w("-L --since"),
        True,
    ),
    "grep": (
        _w(
            "-n -i -w -v -l -L -c -h -H -E -F -G -P -I -r -o -q -z --cached --untracked "
            "--line-number --ignore-case --word-regexp --invert-match --files-with-matches "
            "--name-only --files-without-match --count --no-color --full-name "
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --heading --break "
            "--and --or --not "
            "--show-function --function-context -W --recursive --all-match --quiet --column "
            "--only-matching --text -a --null --no-recursive --exclude-standard"
        ),
        _w(
            "-e -A -B -C -m --max-depth --color --context --after-context --before-context "
            "--max-count --threads"
        ),
        True,
    ),
    "ls-files": (
        _w(
            "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others "
            "--ignored --stage --unmerged --killed --exclude-standard --directory "
            "--no-empty-directory --full-name --error-unmatch --eol --deduplicate --sparse "
            "--recurse-submodules"
        ),
        _w("-x --exclude --abbrev --format --with-tree"),
        False,
    ),
    "ls-tree": (
        _w("-r -d -t -l -z --name-only --name-status --full-name --full-tree --long --object-only"),
        _w("--abbrev --format"),
        False,
    ),
    "rev-parse": (
        _w(
            "--show-toplevel --git-dir --absolute-git-dir --git-common-dir "
            "--is-inside-work-tree --is-inside-git-dir --is-bare-repository "
            "--is-shallow-repository --show-prefix --show-cdup --verify -q --quiet --short "
            "--symbolic --symbolic-full-name --all --branches --tags --remotes --revs-only "
            "--no-revs --flags --no-flags --show-superproject-working-tree --show-ref-format "
            "--show-object-format --local-env-vars"
        ),
        _w(
            "--abbrev-ref --short --default --since --after --until --before --glob "
            "--exclude --disambiguate --resolve-git-dir --git-path --path-format"
        ),
        False,
    ),
    "describe": (
        _w(
            "--tags --all --always --long --exact-match --contains --first-parent --dirty "
            "--broken --debug"
        ),
        _w("--abbrev --match --exclude --candidates --dirty"),
        False,
    ),
    "cat-file": (_w("-t -s -p -e --mailmap --no-mailmap --allow-unknown-type"), frozenset(), True),
    "merge-base": (
        _w("--all --octopus --independent --is-ancestor --fork-point"),
        frozenset(),
        False,
    ),
    "name-rev": (
        _w("--tags --all --name-only --no-undefined --always"),
        _w("--refs --exclude"),
        False,
    ),
    "show-ref": (
        _w(
            "--head --tags --heads --branches --verify -d --dereference -s --hash -q --quiet "
            "--exists"
        ),
        _w("--abbrev --hash"),
        False,
    ),
    "for-each-ref": (
        _w("--shell --perl --python --tcl --ignore-case --omit-empty"),
        _w(
            "--count --sort --format --points-at --merged --no-merged --contains "
            "--no-contains --exclude"
        ),
        False,
    ),
    "count-objects": (_w("-v -H --verbose --human-readable"), frozenset(), False),
    "check-ignore": (
        _w("-q -v -n -z --quiet --verbose --non-matching --no-index"),
        frozenset(),
        False,
    ),
    "check-attr": (_w("-a --all --cached -z"), frozenset(), False),
    "version": (_w("--build-options"), frozenset(), False),
    "cherry": (_w("-v"), _w("--abbrev"), False),
    "show-branch": (
        _w(
            "-a -r --all --remotes --current --topo-order --date-order --sparse --more "
            "--list --independent --merge-base --no-name --sha1-name --topics"
        ),
        _w("--more --color"),
        False,
    ),
}


def git_read_only_use(args: list[Word]) -> tuple[ReadOnlyUse, list[Word]] | str:
    """How ``git args...`` reads, and the ``-C`` directories it changes into; or why
    it is not known to be read-only. Accepted: the global options ``-C``, ``--no-pager``,
    ``--no-optional-locks``, ``--literal-pathspecs``, ``--no-replace-objects``; then a
    query subcommand from an allowlist with allowlisted options, or a listing form of
    ``branch``, ``tag``, ``remote``, ``stash``, ``worktree``, ``reflog``, ``config``."""
    use = ReadOnlyUse()
    chdirs: list[Word] = []
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        word = args[i]
        if word.dynamic:
            return f"argument {word.raw!r} is known only when it runs"
        if word.text == "-C":
            if i + 1 >= len(args) or args[i + 1].dynamic:
                return "git -C needs a static directory"
            chdirs.append(args[i + 1])
            i += 2
            continue
        if word.text in (
            "--no-pager",
            "--no-optional-locks",
            "--literal-pathspecs",
            "--no-replace-objects",
            "-P",
            "--no-advice",
        ):
            i += 1
            continue
        return f"git option {word.text} is not known to be read-only"
    if i >= len(args):
        return "git without a subcommand"
    sub, rest = args[i].text, args[i + 1 :]
    if args[i].dynamic:
        return "the git subcommand is known only when it runs"
    listing = _listing(sub, rest)
    if listing is not None:
        return (use, chdirs) if listing == "" else listing
    spec = _READ_ONLY.get(sub)
    if spec is None:
        return f"git {sub} is not known to be read-only"
    flags, valued, reads_content = spec
    operands = _options(sub, rest, flags, valued)
    if isinstance(operands, str):
        return operands
    for word in operands:
        use.paths.append(word)
        _, colon, path = word.text.partition(":")
        if colon and path:
            use.paths.append(Word(path, path))
    if reads_content and (sub not in ("log", "whatchanged") or _shows_content(rest)):
        use.cwd = use.cwd_recursive = True
    return use, chdirs


def _shows_content(rest: list[Word]) -> bool:
    """Whether ``git log`` options print file contents (patches, pickaxe, line logs)."""
    for word in rest:
        text = word.text
        if text == "--":
            return False
        name = text.partition("=")[0]
        if name in _CONTENT_OPTIONS or re.fullmatch(r"-[pu]|-[SGLUW].*|-\w*p\w*", text):
            return True
    return False


def _options(
    sub: str, rest: list[Word], flags: frozenset[str], valued: frozenset[str]
) -> list[Word] | str:
    operands: list[Word] = []
    i = 0
    done = False
    while i < len(rest):
        word = rest[i]
        text = word.text
        i += 1
        if word.dynamic:
            return f"argument {word.raw!r} is known only when it runs"
        if done or not text.startswith("-") or text == "-":
            if word.glob:
                return f"argument {word.raw!r} is an unquoted glob"
            operands.append(word)
            continue
        if text == "--":
            done = True
            continue
        name, eq, _ = text.partition("=")
        if text in flags or name in _OPTIONAL or (eq and name in valued):
            continue
        if name in valued and not eq:
            if i >= len(rest) or rest[i].dynamic:
                return f"git {sub} {name} needs a static value"
            i += 1
            continue
        if re.fullmatch(r"-\d+", text) and sub in ("log", "show", "whatchanged", "shortlog"):
            continue
        if re.fullmatch(r"-[nUl]\d+|-[SG].+|-[MC]\d*%?|-u(no|normal|all)?", text):
            continue
        return f"git {sub} option {text} is not known to be read-only"
    return operands


def _listing(sub: str, rest: list[Word]) -> str | None:
    """'' when ``git sub rest`` is a read-only listing; a reason when ``sub`` is a
    listing command used otherwise; None for other subcommands."""
    if any(w.dynamic or w.glob for w in rest):
        if sub in ("branch", "tag", "remote", "stash", "worktree", "reflog", "config"):
            return "an argument is known only when it runs"
        return None
    texts = [w.text for w in rest]
    options = [t for t in texts if t.startswith("-")]
    positional = [t for t in texts if not t.startswith("-")]
    if sub == "branch":
        return "" if _branch_lists(rest) else "git branch changes branches"
    if sub == "tag":
        if not texts or (
            ("-l" in options or "--list" in options)
            and all(
                o in ("-l", "--list", "-n") or re.fullmatch(r"-n\d+|--sort=.*", o) for o in options
            )
        ):
            return ""
        return "git tag changes tags"
    if sub == "remote":
        if not positional and all(o in ("-v", "--verbose") for o in options):
            return ""
        if positional[:1] == ["get-url"] and all(o in ("--all", "--push") for o in options):
            return ""
        return "git remote changes remotes"
    if sub == "stash":
        if positional[:1] == ["list"] and not options:
            return ""
        return "git stash changes the stash"
    if sub == "worktree":
        if positional == ["list"] and all(
            o in ("--porcelain", "-v", "--verbose", "-z") for o in options
        ):
            return ""
        return "git worktree changes worktrees"
    if sub == "config":
        getting = {"--get", "--get-all", "--get-regexp", "--list", "-l"}
        allowed = getting | {
            "--show-origin",
            "--show-scope",
            "--local",
            "--null",
            "-z",
            "--name-only",
        }
        if all(o in allowed for o in options) and (
            (getting & set(options) and len(positional) <= 2)
            or (not options and len(positional) == 1)
        ):
            return ""
        return "git config changes configuration"
    return None


# options that make `git branch` list (with a name, it is then a pattern); --sort,
# --format and the colour options do not: `git branch --sort x NEW` creates NEW
_BRANCH_LIST_MODE = _w(
    "--list -l -v -vv --verbose --contains --no-contains --merged --no-merged --points-at "
    "--show-current"
)
# options whose value git takes from the next word
_BRANCH_NEXT_VALUE = _w("--sort --format --points-at")


def _branch_lists(rest: list[Word]) -> bool:
    """Whether ``git branch REST`` only lists branches (creates, moves or deletes none).
    Options and operands are read as git reads them: a valued option takes the next
    word, and a name creates a branch unless an option puts git in list mode."""
    listing = False
    names = 0
    i = 0
    while i < len(rest):
        text = rest[i].text
        i += 1
        if text == "--":
            names += len(rest) - i
            break
        if not text.startswith("-") or text == "-":
            names += 1
            continue
        name, eq, _ = text.partition("=")
        if name not in _BRANCH_LISTING:
            return False
        if name in _BRANCH_LIST_MODE:
            listing = True
        if name in _BRANCH_NEXT_VALUE and not eq:
            i += 1
    return listing or names == 0


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
    if _branch_lists(rest):
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
