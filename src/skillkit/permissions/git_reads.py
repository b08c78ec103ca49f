"""The ``git`` commands that only read: the query subcommands with the options each may
be given, and the listing forms of ``branch``, ``tag``, ``remote``, ``stash``,
``worktree``, ``reflog`` and ``config``. Internal to the classifier."""

from __future__ import annotations

import re

from skillkit.permissions.readonly_spec import ReadOnlyUse
from skillkit.permissions.readonly_spec import words as _w
from skillkit.permissions.shell import Word

__all__ = ["branch_lists", "git_read_only_use"]

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
        return "" if branch_lists(rest) else "git branch changes branches"
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


def branch_lists(rest: list[Word]) -> bool:
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
