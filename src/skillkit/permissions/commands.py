"""What known shell commands change or run: the tables and per-command risk rules.

Each rule looks at one command's arguments and reports findings through a
`JudgeContext` (reads, writes, ``normal``/``danger`` findings). Which commands may run
unasked is not decided here but by the allowlist in `skillkit.permissions.readonly`.
The rules for programs that reach other hosts or containers are in
`skillkit.permissions.network`, how wrappers run their command in
`skillkit.permissions.wrappers`, the families of programs in
`skillkit.permissions.programs`. Internal to `skillkit.permissions.classifier`.
"""

from __future__ import annotations

import os
import re

from skillkit.permissions import network
from skillkit.permissions.judging import (
    HARMLESS_TARGETS,
    JudgeContext,
    Rule,
    has_short,
    split_args,
)
from skillkit.permissions.judging import words as _words
from skillkit.permissions.programs import (
    ACCOUNT_TOOLS,
    DELETERS,
    DISK_TOOLS,
    DOWNLOADERS,
    FORK_BOMB,
    INTERPRETERS,
    KEYWORDS,
    LOOP_HEADERS,
    POWER,
    PRIVILEGE,
    PRIVILEGE_OPTS_WITH_VALUE,
    SHELLS,
    WRAPPERS,
    inline_script,
    is_interpreter,
    reads_code_from_stdin,
    xargs_command,
)
from skillkit.permissions.readonly import AWK_UNSAFE, sed_script_ok
from skillkit.permissions.shell import Word

__all__ = [
    "ACCOUNT_TOOLS",
    "DELETERS",
    "DISK_TOOLS",
    "DOWNLOADERS",
    "FORK_BOMB",
    "HARMLESS_TARGETS",
    "INTERPRETERS",
    "KEYWORDS",
    "LOOP_HEADERS",
    "POWER",
    "PRIVILEGE",
    "PRIVILEGE_OPTS_WITH_VALUE",
    "SHELLS",
    "WRAPPERS",
    "JudgeContext",
    "Rule",
    "has_short",
    "inline_script",
    "is_interpreter",
    "judge",
    "reads_code_from_stdin",
    "split_args",
    "xargs_command",
]


# --------------------------------------------------------------------------- rules


def _rm(args: list[Word], ctx: JudgeContext) -> None:
    options, targets, _ = split_args(args)
    if has_short(options, "rR") or "--recursive" in options:
        ctx.write(targets, deleting=True)
        ctx.danger("recursive delete")
        return
    if not ctx.write(targets, deleting=True):
        ctx.normal("deletes files")


def _delete_plain(args: list[Word], ctx: JudgeContext) -> None:
    _, targets, _ = split_args(args)
    if not ctx.write(targets, deleting=True):
        ctx.normal("deletes files")


def _find(args: list[Word], ctx: JudgeContext) -> None:
    texts = [a.text for a in args]
    roots = []
    for a in args:
        if a.text.startswith(("-", "(", "!")):
            break
        roots.append(a)
    ctx.read(roots)
    if "-delete" in texts:
        ctx.write(roots or [Word(".", ".")], deleting=True)
        ctx.danger("recursive delete")
    for i, text in enumerate(texts):
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[Word] = []
            for a in args[i + 1 :]:
                if a.text in (";", "+"):
                    break
                inner.append(a)
            _exec_each(inner, ctx)
        elif (
            text in ("-fprint", "-fprint0", "-fprintf", "-fls")
            and i + 1 < len(args)
            and not ctx.write([args[i + 1]])
        ):
            ctx.normal("writes files")


def _fd(args: list[Word], ctx: JudgeContext) -> None:
    for i, a in enumerate(args):
        if a.text in ("-x", "--exec", "-X", "--exec-batch"):
            _exec_each(args[i + 1 :], ctx)
            return
    _, positional, _ = split_args(
        args, frozenset({"-e", "-t", "-E", "-d", "--type", "--extension"})
    )
    ctx.read(positional[1:])


def _exec_each(inner: list[Word], ctx: JudgeContext) -> None:
    if inner and os.path.basename(inner[0].text) in DELETERS:
        ctx.danger("bulk delete", f"'{ctx.text}' deletes every file it finds")
    ctx.run(inner)
    ctx.normal("runs commands", f"'{ctx.text}' runs a command on each file")


def _copy_like(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = split_args(
        args, frozenset({"-t", "--target-directory", "-m", "--mode", "-o", "-g", "-S", "-e"})
    )
    target = values.get("-t") or values.get("--target-directory")
    if target is not None:
        dest = [Word(target, target)]
        sources = positional
    else:
        dest, sources = positional[-1:], positional[:-1]
    ctx.read(sources)
    remote = [d for d in dest if re.match(r"^[^/.~$][^/]*:", d.text)]
    if remote:
        ctx.danger("write outside the workspace", f"'{ctx.text}' copies to another host")
        return
    if any(o.startswith("--delete") for o in options):
        ctx.write(dest, deleting=True)
        ctx.danger("recursive delete", f"'{ctx.text}' deletes files missing from the source")
        return
    if not ctx.write(dest):
        ctx.normal("writes files")


def _mv(args: list[Word], ctx: JudgeContext) -> None:
    _, positional, values = split_args(args, frozenset({"-t", "--target-directory", "-S"}))
    target = values.get("-t") or values.get("--target-directory")
    words = positional + ([Word(target, target)] if target else [])
    if not ctx.write(words):
        ctx.normal("moves files")


def _write_all(with_value: frozenset[str]) -> Rule:
    def rule(args: list[Word], ctx: JudgeContext) -> None:
        _, positional, _ = split_args(args, with_value)
        if not ctx.write(positional):
            ctx.normal("writes files")

    return rule


def _chmod(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, _ = split_args(args, frozenset({"--reference"}))
    if positional and not any(o.startswith("--reference") for o in options):
        mode, targets = positional[0].text, positional[1:]
    else:
        mode, targets = "", positional
    if "s" in mode or re.fullmatch(r"[4267][0-7]{3}", mode):
        ctx.danger("privilege change", f"'{ctx.text}' sets a setuid/setgid bit")
    if not ctx.write(targets):
        ctx.normal("changes file permissions")


def _sed(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = split_args(
        args, frozenset({"-e", "-f", "--expression", "--file", "-l"})
    )
    in_place = any(
        o.startswith("--in-place") or (o.startswith("-i") and not o.startswith("--"))
        for o in options
    ) or (has_short([o for o in options if not o.startswith("-i")], "i"))
    scripted = "-e" in values or "--expression" in values
    files = positional if (scripted or "-f" in values or "--file" in values) else positional[1:]
    script_texts = (
        [values[k] for k in ("-e", "--expression") if k in values]
        if scripted
        else [p.text for p in positional[:1]]
    )
    if "-f" in values or "--file" in values or any(not sed_script_ok(t) for t in script_texts):
        ctx.danger(
            "sed script runs commands or writes files",
            f"'{ctx.text}': the sed script is not known to be harmless (w, e, r...)",
        )
    if in_place:
        if not ctx.write(files):
            ctx.normal("edits files in place")
        return
    ctx.read(files)


def _awk(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = split_args(args, frozenset({"-F", "-v", "-f"}))
    script = "" if "-f" in values else (positional[0].text if positional else "")
    if (
        "-f" in values
        or AWK_UNSAFE.search(script)
        or any(o[:2] not in ("-F", "-v") for o in options)
    ):
        ctx.danger(
            "awk program runs commands or writes files",
            f"'{ctx.text}': the awk program may run commands or write files",
        )
    ctx.read(positional[0 if "-f" in values else 1 :])


def _sort(args: list[Word], ctx: JudgeContext) -> None:
    _, positional, values = split_args(args, frozenset({"-o", "--output", "-k", "-t", "-S", "-T"}))
    output = values.get("-o") or values.get("--output")
    if output is not None and not ctx.write([Word(output, output)]):
        ctx.normal("writes files")
    ctx.read(positional)


def _uniq(args: list[Word], ctx: JudgeContext) -> None:
    _, positional, _ = split_args(args, frozenset({"-f", "-s", "-w"}))
    ctx.read(positional[:1])
    if len(positional) > 1 and not ctx.write(positional[1:2]):
        ctx.normal("writes files")


_TAR_VALUED_LETTERS = "bCfFgHIKLNTVX"


def _tar_options(args: list[Word]) -> tuple[str, list[str], dict[str, str]]:
    """tar's short letters (bundled ``-xzf``, or the old-style first word ``xzf``), long
    options, and the values of ``-f``/``--file`` and ``-C``/``--directory`` — a bundled
    letter takes the rest of its bundle (``-fa.tar``) or the next word as GNU tar does."""
    letters: list[str] = []
    options: list[str] = []
    values: dict[str, str] = {}
    i = 0
    pending: list[str] = []
    if args and not args[0].text.startswith("-"):
        letters.extend(args[0].text)
        pending = [ch for ch in args[0].text if ch in _TAR_VALUED_LETTERS]
        i = 1
    while i < len(args):
        text = args[i].text
        i += 1
        if pending:
            values.setdefault("-" + pending.pop(0), text)
            continue
        if text == "--":
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            options.append(name)
            if name in ("--file", "--directory"):
                if not eq and i < len(args):
                    value = args[i].text
                    i += 1
                values.setdefault("-f" if name == "--file" else "-C", value)
            continue
        if not text.startswith("-") or text == "-":
            continue
        for index, letter in enumerate(text[1:]):
            letters.append(letter)
            if letter in _TAR_VALUED_LETTERS:
                value = text[index + 2 :]
                if not value and i < len(args):
                    value = args[i].text
                    i += 1
                values.setdefault("-" + letter, value)
                break
    return "".join(letters), options, values


def _tar(args: list[Word], ctx: JudgeContext) -> None:
    flags, options, values = _tar_options(args)
    archive = values.get("-f")
    if (
        archive
        and re.match(r"^[^/]*:", archive)
        and not any(o.startswith("--force-l") for o in options)
    ):
        ctx.danger(
            "option runs programs", f"'{ctx.text}': the archive {archive} is on another host"
        )
    if "x" in flags or "--extract" in options or "--get" in options:
        if "P" in flags or any(o.startswith("--absolute-n") for o in options):
            ctx.danger(
                "write outside the workspace",
                f"'{ctx.text}' extracts absolute paths, anywhere on the machine",
            )
        where = values.get("-C") or "."
        if not ctx.write([Word(where, where)]):
            ctx.normal("extracts files")
    elif ("c" in flags or "r" in flags or "u" in flags or "--create" in options) and (
        (archive and archive != "-" and not ctx.write([Word(archive, archive)])) or not archive
    ):
        ctx.normal("writes an archive")


def _unzip(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = split_args(args, frozenset({"-d", "-x", "-P"}))
    if "-l" in options or "-t" in options or "-v" in options:
        ctx.read(positional[:1])
        return
    where = values.get("-d", ".")
    if not ctx.write([Word(where, where)]):
        ctx.normal("extracts files")


def _crontab(args: list[Word], ctx: JudgeContext) -> None:
    options, _, _ = split_args(args)
    if has_short(options, "r"):
        ctx.danger("deletes the crontab")
    elif options != ["-l"]:
        ctx.normal("changes scheduled jobs")


def _scp(args: list[Word], ctx: JudgeContext) -> None:
    found = network.ssh_code_option(args, "scp")
    if found:
        ctx.danger("option runs programs", f"'{ctx.text}': {found} runs a program or writes a file")
    _copy_like(args, ctx)


def _package_manager(args: list[Word], ctx: JudgeContext) -> None:
    texts = [a.text for a in args]
    sub = next((t for t in texts if not t.startswith("-")), "")
    if sub in ("ls", "list", "view", "info", "show", "freeze", "outdated", "why", "search", "help"):
        return
    if "-g" in texts or "--global" in texts or "--system" in texts:
        ctx.danger("write outside the workspace", f"'{ctx.text}' installs globally")
        return
    ctx.normal("may change state")


def _terraform(args: list[Word], ctx: JudgeContext) -> None:
    sub = next((a.text for a in args if not a.text.startswith("-")), "")
    if sub == "destroy" or (sub == "apply" and "-destroy" in [a.text for a in args]):
        ctx.danger("destroys infrastructure")
    elif sub not in ("plan", "validate", "fmt", "show", "output", "version", "providers"):
        ctx.normal("may change state")


def _systemctl(args: list[Word], ctx: JudgeContext) -> None:
    sub = next((a.text for a in args if not a.text.startswith("-")), "")
    if sub in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"):
        ctx.danger("system power")
    elif sub not in (
        "status",
        "list-units",
        "list-unit-files",
        "is-active",
        "is-enabled",
        "show",
        "cat",
    ):
        ctx.normal("changes system services")


def _init(args: list[Word], ctx: JudgeContext) -> None:
    if args and args[0].text in ("0", "6"):
        ctx.danger("system power")
    else:
        ctx.normal("may change state")


def _danger(hint: str) -> Rule:
    def rule(args: list[Word], ctx: JudgeContext) -> None:
        ctx.danger(hint)

    return rule


RULES: dict[str, Rule] = {
    "rm": _rm,
    "srm": _rm,
    "unlink": _delete_plain,
    "rmdir": _delete_plain,
    "shred": _danger("secure delete"),
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    "cp": _copy_like,
    "install": _copy_like,
    "ln": _copy_like,
    "rsync": _copy_like,
    "scp": _scp,
    "mv": _mv,
    "touch": _write_all(frozenset({"-d", "-r", "-t", "--date", "--reference"})),
    "mkdir": _write_all(frozenset({"-m", "--mode"})),
    "tee": _write_all(frozenset()),
    "truncate": _write_all(frozenset({"-s", "--size", "-r", "--reference"})),
    "mkfifo": _write_all(frozenset({"-m"})),
    "chmod": _chmod,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "sort": _sort,
    "uniq": _uniq,
    "tar": _tar,
    "unzip": _unzip,
    "crontab": _crontab,
    "docker": network.container,
    "podman": network.container,
    "docker-compose": network.compose,
    "podman-compose": network.compose,
    "ssh": network.ssh,
    "sftp": network.ssh,
    "npm": _package_manager,
    "pnpm": _package_manager,
    "yarn": _package_manager,
    "pip": _package_manager,
    "pip3": _package_manager,
    "gem": _package_manager,
    "cargo": _package_manager,
    "terraform": _terraform,
    "tofu": _terraform,
    "systemctl": _systemctl,
    "init": _init,
    "curl": network.curl,
    "wget": network.wget,
    **{name: _danger("disk tool") for name in DISK_TOOLS},
    **{name: _danger("system power") for name in POWER},
    **{name: _danger("privilege change") for name in ACCOUNT_TOOLS},
}


# options that make a program run another program, or write a file it names
CODE_OPTIONS: dict[str, frozenset[str]] = {
    "env": _words("-S --split-string"),
    "rg": _words("--pre --pre-glob --hostname-bin"),
    "tar": _words(
        "-I -F --use-compress-program --to-command --checkpoint-action --info-script "
        "--new-volume-script --rsh-command --rmt-command"
    ),
    "sort": _words("--compress-program"),
    "xxd": _words("-r -revert"),
    "tree": _words("-o"),
    "info": _words("-o --output"),
    "strace": _words("-o --output"),
    "ltrace": _words("-o --output"),
    "printf": _words("-v"),
    "hash": _words("-p"),
    "man": _words("-P -H --pager --html"),
    "rsync": _words("-e --rsh --rsync-path"),
    "zip": _words("-T -TT --unzip-command"),
    "find": _words("-exec -execdir -ok -okdir -fprint -fprint0 -fprintf -fls"),
    "wait": _words("-p"),
    # project runners: another makefile, package or configuration is other code
    "make": _words("-f -C -E --file --makefile --directory --eval"),
    "npm": _words("-C --prefix --script-shell --userconfig --globalconfig"),
    "pnpm": _words("-C --dir --prefix --script-shell --config"),
    "yarn": _words("--cwd --prefix"),
    "cargo": _words("-Z --config --manifest-path"),
}
# builtins that evaluate an array subscript in a variable name as arithmetic, running any
# $(...) inside it, even when the name was quoted
SUBSCRIPT_BUILTINS = _words(
    "declare typeset local readonly export unset read mapfile readarray let wait printf "
    "getopts test [ [["
)
_ARITHMETIC_TESTS = _words("-eq -ne -lt -le -gt -ge")
_SINGLE_DASH_LONG = _words("find xxd")


def has_code_option(name: str, args: list[Word]) -> str:
    """The option of ``name args...`` that runs a program or writes a named file; ""."""
    options = CODE_OPTIONS.get(name)
    if not options:
        return ""
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        if name == "tar" and index == 0 and not text.startswith("-"):
            text = "-" + text  # old-style bundle: `tar xIf ...`
        if not text.startswith("-") or text == "-":
            continue
        option = text.partition("=")[0]
        if option in options:
            return option
        if name in _SINGLE_DASH_LONG:
            continue
        if option.startswith("--"):
            # GNU tools accept any unambiguous prefix of a long option
            if len(option) >= 3 and any(o.startswith(option) for o in options):
                return option
            continue
        if any("-" + letter in options for letter in option[1:]):
            return option
    return ""


def evaluates_subscript(name: str, args: list[Word]) -> bool:
    """Whether ``name args...`` would evaluate an array subscript (``a[$(cmd)]``) or an
    arithmetic operand it cannot prove to be a plain number."""
    if name not in SUBSCRIPT_BUILTINS:
        return False
    texts = [w.text for w in args]
    if name in ("test", "[", "[["):
        if "-v" in texts:
            return True
        if any(t in _ARITHMETIC_TESTS for t in texts):
            operands = [t for t in texts if t not in _ARITHMETIC_TESTS and t not in "[]]!()"]
            return not all(re.fullmatch(r"-?\d+", t) for t in operands if t not in ("]]", "]"))
        return False
    if name == "printf" and "-v" not in texts:
        return False
    if name == "wait" and "-p" not in texts:
        return False
    if name == "let":
        return True
    return any("[" in w.text or w.dynamic for w in args)


def judge(name: str, args: list[Word], ctx: JudgeContext) -> None:
    """Record what program ``name`` (not git) run with ``args`` changes or runs.
    Records nothing for a program without a rule: the caller decides what that means."""
    rule = RULES.get(name)
    if rule is None and re.fullmatch(r"mkfs(\.\w+)?|mkdosfs|mkntfs", name):
        rule = _danger("disk tool")
    if rule is not None:
        rule(args, ctx)
    option = has_code_option(name, args)
    if not option and name == "make":
        option = next((w.text for w in args if re.match(r"[A-Za-z_][\w.]*\s*[:+?!]?=", w.text)), "")
    if option:
        ctx.danger(
            "option runs programs", f"'{ctx.text}': {name} {option} runs a program or writes a file"
        )
    if evaluates_subscript(name, args):
        ctx.danger(
            "evaluates code in a subscript",
            f"'{ctx.text}': {name} evaluates array subscripts and arithmetic as code",
        )
