"""What known shell commands change or run: the tables and per-command risk rules.

Each rule looks at one command's arguments and reports findings through a
`JudgeContext` (reads, writes, ``normal``/``danger`` findings). Which commands may run
unasked is not decided here but by the allowlist in `skillkit.permissions.readonly`.
Internal to `skillkit.permissions.classifier`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from skillkit.permissions.readonly import AWK_UNSAFE, sed_script_ok
from skillkit.permissions.shell import Word
from skillkit.protected import PROTECTED_NAMES, protected_reason


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FORK_BOMB = re.compile(r"([\w:.]+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&")

HARMLESS_TARGETS = _words("/dev/null /dev/stdout /dev/stderr /dev/stdin /dev/tty /dev/zero")

KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac"}
)
LOOP_HEADERS = _words("for select case")

DOWNLOADERS = _words("curl wget fetch aria2c http https xh lwp-download")
SHELLS = _words("sh bash zsh dash ksh mksh fish csh tcsh ash")
_SCRIPT_RUNNERS = _words(
    "perl ruby node nodejs php pwsh powershell deno bun lua Rscript osascript source . "
    "python python2 python3 pypy pypy3"
)
INTERPRETERS = SHELLS | _SCRIPT_RUNNERS
PRIVILEGE = _words("sudo doas su pkexec run0")
PRIVILEGE_OPTS_WITH_VALUE = _words("-u -g -C -D -h -p -r -t -U --user --group --chdir -c")
WRAPPERS = _words(
    "env nice nohup time timeout command builtin exec stdbuf ionice caffeinate unbuffer "
    "taskset chrt watch xvfb-run strace ltrace setsid flock"
)
DELETERS = _words("rm shred unlink rmdir srm")

DISK_TOOLS = _words(
    "dd fdisk sfdisk cfdisk gdisk sgdisk parted gparted wipefs mkswap swapon swapoff mount "
    "umount losetup cryptsetup hdparm blkdiscard badblocks diskutil format mke2fs e2fsck "
    "fsck tune2fs resize2fs lvremove vgremove pvremove lvcreate zpool zfs mdadm debugfs "
    "newfs fdformat"
)
POWER = _words("shutdown reboot halt poweroff telinit")
ACCOUNT_TOOLS = _words(
    "chown chgrp setcap setfacl usermod useradd userdel groupadd groupdel groupmod passwd "
    "chpasswd visudo adduser deluser addgroup delgroup gpasswd newgrp chattr setenforce "
    "chsh vipw"
)


class JudgeContext(Protocol):
    """What a command rule may use (implemented by the classifier)."""

    text: str

    def path(self, word: Word) -> str | None: ...
    def inside(self, path: str | None) -> bool: ...
    def read(self, words: list[Word]) -> None: ...
    def write(self, words: list[Word], *, deleting: bool = False) -> bool: ...
    def danger(self, hint: str, reason: str | None = None) -> None: ...
    def normal(self, hint: str, reason: str | None = None) -> None: ...
    def run(self, words: list[Word]) -> None: ...


Rule = Callable[[list[Word], JudgeContext], None]


# --------------------------------------------------------------------------- argument helpers


def split_args(
    args: list[Word], with_value: frozenset[str] = frozenset()
) -> tuple[list[str], list[Word], dict[str, str]]:
    """(option texts, positional words, option values) — ``--`` ends options."""
    options: list[str] = []
    positional: list[Word] = []
    values: dict[str, str] = {}
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            positional.extend(args[i + 1 :])
            break
        if text.startswith("-") and text != "-":
            options.append(text)
            name, eq, value = text.partition("=")
            if eq:
                values[name] = value
            elif text in with_value and i + 1 < len(args):
                values[text] = args[i + 1].text
                i += 1
        else:
            positional.append(args[i])
        i += 1
    return options, positional, values


def has_short(options: list[str], letters: str) -> bool:
    """Whether any bundled short option (``-rf``) contains one of ``letters``."""
    return any(
        o.startswith("-") and not o.startswith("--") and any(ch in o[1:] for ch in letters)
        for o in options
    )


def is_interpreter(name: str) -> bool:
    return (
        name in INTERPRETERS
        or re.fullmatch(r"python\d(\.\d+)?|pypy\d?|perl\d?|ruby\d?", name) is not None
    )


def reads_code_from_stdin(name: str, args: list[Word]) -> bool:
    """Whether an interpreter run this way takes its program from standard input."""
    options, positional, _ = split_args(args)
    if name in (".", "source"):
        return any(p.text in ("/dev/stdin", "-") for p in positional)
    if any(o in ("-c", "-e", "-m", "--command", "--eval", "-E") for o in options):
        return False
    if name in SHELLS and has_short([o for o in options if not o.startswith("--")], "c"):
        return False
    return not positional or positional[0].text in ("-", "/dev/stdin") or "-s" in options


def inline_script(name: str, args: list[Word]) -> str | None:
    """The program text of ``bash -c '...'``, ``su -c '...'`` or ``eval ...``."""
    if name == "eval":
        return " ".join(w.text for w in args) if args else None
    skip = False
    for i, word in enumerate(args):
        text = word.text
        if skip:
            skip = False
            continue
        if text in ("-o", "-O", "+o", "+O", "--rcfile", "--init-file"):
            skip = True  # an option with a value: `bash -o posix -c '...'`
            continue
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            rest = [w for w in args[i + 1 :] if not w.text.startswith("-")]
            return rest[0].text if rest else None
        if not text.startswith(("-", "+")):
            return None
    return None


@dataclass(frozen=True)
class _WrapperSpec:
    """The options of a program that runs another: ``flags`` take no value, ``valued``
    take one, ``chdir`` changes the directory the command runs in, ``writes`` names a
    file the wrapper itself writes, ``process`` makes it act on another process instead
    of running a command; ``operands`` is how many positional words come before the
    command (``timeout DURATION``, ``taskset MASK``)."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    chdir: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    process: frozenset[str] = frozenset()
    operands: int = 0
    numeric: bool = False  # `nice -10`

    @property
    def long_names(self) -> tuple[str, ...]:
        every = self.flags | self.valued | self.chdir | self.writes | self.process
        return tuple(sorted(o for o in every if o.startswith("--")))


def _spec(
    flags: str = "",
    valued: str = "",
    chdir: str = "",
    writes: str = "",
    process: str = "",
    operands: int = 0,
    numeric: bool = False,
) -> _WrapperSpec:
    return _WrapperSpec(
        _words(flags),
        _words(valued),
        _words(chdir),
        _words(writes),
        _words(process),
        operands,
        numeric,
    )


WRAPPER_SPECS: dict[str, _WrapperSpec] = {
    "env": _spec(
        "-i --ignore-environment -0 --null -v --debug --default-signal --ignore-signal "
        "--block-signal --list-signal-handling",
        valued="-u --unset -S --split-string",
        chdir="-C --chdir",
    ),
    "nice": _spec(valued="-n --adjustment", numeric=True),
    "nohup": _spec(),
    # /usr/bin/time (under a wrapper `time` is the program, not the shell keyword)
    "time": _spec(
        "-p --portability -v --verbose -q --quiet -a --append -V --version",
        valued="-f --format",
        writes="-o --output",
    ),
    "timeout": _spec(
        "--foreground --preserve-status -v --verbose",
        valued="-s --signal -k --kill-after",
        operands=1,
    ),
    "command": _spec("-p"),
    "builtin": _spec(),
    "exec": _spec("-c -l", valued="-a"),
    "stdbuf": _spec(valued="-i -o -e --input --output --error"),
    "ionice": _spec(
        "-t --ignore",
        valued="-c --class -n --classdata",
        process="-p --pid -P --pgid -u --uid",
    ),
    "chrt": _spec(
        "-b -d -f -i -o -r -R -a -m -v --batch --deadline --fifo --idle --other --rr "
        "--reset-on-fork --all-tasks --max --verbose",
        valued="-T -P -D --sched-runtime --sched-period --sched-deadline",
        process="-p --pid",
        operands=1,
    ),
    "taskset": _spec("-a --all-tasks -c --cpu-list", process="-p --pid", operands=1),
    "caffeinate": _spec("-d -i -m -s -u", valued="-t -w"),
    "unbuffer": _spec("-p"),
    "xvfb-run": _spec("-a --auto-servernum", valued="-n --server-num -s --server-args"),
    "watch": _spec(
        "-b --beep -c --color -C --no-color -e --errexit -g --chgexit -p --precise -r "
        "--no-rerun -t --no-title -w --no-wrap -x --exec",
        valued="-d --differences -n --interval -q --equexit",
    ),
    "setsid": _spec("-c --ctty -f --fork -w --wait"),
    # flock LOCKFILE COMMAND...; `flock -c 'shell line'` is refused as unknown
    "flock": _spec(
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F "
        "--no-fork --verbose",
        valued="-w --wait --timeout -E --conflict-exit-code",
        operands=1,
    ),
    "strace": _spec(valued="-e -o -p -s -u"),
    "ltrace": _spec(valued="-e -o -p -s -u"),
}


@dataclass
class Wrapped:
    """What a wrapper (``env``, ``timeout``, ``time``...) does with its arguments:
    ``inner`` is the command it runs ([] if none); ``unknown`` names an option it was
    given that is not known (it may then do more than run ``inner``); ``chdir`` the
    directory ``inner`` runs in (``env -C``); ``writes`` the files the wrapper itself
    writes (``time -o``); ``process`` an option that makes it act on another process."""

    inner: list[Word] = field(default_factory=list)
    unknown: str = ""
    chdir: Word | None = None
    writes: list[Word] = field(default_factory=list)
    process: str = ""


def _long_option(name: str, spec: _WrapperSpec) -> str:
    """GNU tools accept an unambiguous prefix of a long option: the option meant, or ""."""
    names = spec.long_names
    if name in names:
        return name
    found = [o for o in names if o.startswith(name)]
    return found[0] if len(found) == 1 and len(name) > 2 else ""


def unwrap(name: str, args: list[Word]) -> Wrapped:
    """The command a wrapper (``env``, ``timeout``, ``nice``...) runs and what else it
    does. Options end at the first operand (these programs stop option parsing there)."""
    spec = WRAPPER_SPECS.get(name, _WrapperSpec())
    out = Wrapped()
    if name == "command" and any(a.text in ("-v", "-V") for a in args):
        return out

    def take(option: str, value: Word | None) -> None:
        if option in spec.chdir:
            out.chdir = value
        elif option in spec.writes and value is not None:
            out.writes.append(value)
        elif option in spec.process:
            out.process = option

    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-" or word.dynamic:
            break
        i += 1
        if text.startswith("--"):
            given, eq, value = text.partition("=")
            option = _long_option(given, spec)
            if not option:
                out.unknown = out.unknown or given
                continue
            takes_value = (
                option in spec.valued
                or option in spec.chdir
                or option in spec.writes
                or (option in spec.process and name != "taskset")
            )
            if eq:
                take(option, Word(value, value))
            elif takes_value and i < len(args):
                take(option, args[i])
                i += 1
            else:
                take(option, None)
            continue
        if spec.numeric and re.fullmatch(r"-\d+", text):
            continue
        letters = text[1:]
        for index, letter in enumerate(letters):
            option = "-" + letter
            takes_value = option in spec.valued or option in spec.chdir or option in spec.writes
            if option in spec.process:
                take(option, None)
                takes_value = name != "taskset"
            elif not takes_value and option not in spec.flags:
                out.unknown = out.unknown or option
                continue
            if takes_value:
                rest = letters[index + 1 :]
                if rest:
                    take(option, Word(rest, rest))
                elif i < len(args):
                    take(option, args[i])
                    i += 1
                break
    while name == "env" and i < len(args) and re.fullmatch(r"[A-Za-z_]\w*=.*", args[i].text):
        i += 1
    i += spec.operands
    out.inner = list(args[i:]) if i < len(args) else []
    return out


def xargs_command(args: list[Word]) -> list[Word]:
    with_value = {
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--replace",
    }
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in with_value else 1
    return args[i:]


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


_CURL_WRITES = _words(
    "-o --output --output-dir -c --cookie-jar -D --dump-header --trace --trace-ascii "
    "--stderr --libcurl --etag-save --hsts --alt-svc"
)
_CURL_UPLOADS = _words(
    "-d --data --data-binary --data-ascii --data-urlencode --json -F --form -T "
    "--upload-file -H --header -b --cookie --etag-compare --form-string"
)
_CURL_CODE = _words("-K --config --engine")
_CURL_READS = _words("--variable --netrc-file")
_CURL_VALUED = (
    _CURL_WRITES
    | _CURL_UPLOADS
    | _CURL_CODE
    | _CURL_READS
    | _words(
        "-X --request -u --user -A --user-agent -e --referer -w --write-out --url -x --proxy "
        "-m --max-time --connect-timeout -r --range -E --cert --key --cacert --capath -U "
        "--proxy-user --retry -Y -y -z --time-cond --resolve --connect-to --interface"
    )
)


def _curl(args: list[Word], ctx: JudgeContext) -> None:
    options, positional, values = _curl_options(args)
    ctx.normal("network access")
    code = next((o for o in options if o in _CURL_CODE), "")
    if code:
        ctx.danger("option runs programs", f"'{ctx.text}': curl {code} reads options or loads code")
    urls = [w.text for w in positional] + [v for o, v in values if o == "--url"]
    if any(re.match(r"\s*file:", u, re.I) for u in urls):
        ctx.danger("reads local files", f"'{ctx.text}' reads local files through a file: URL")
    for option, value in values:
        if option in _CURL_WRITES and value != "-":
            if option == "--stderr" and value in HARMLESS_TARGETS:
                continue
            ctx.write([Word(value, value)])
        elif option in _CURL_UPLOADS:
            source = value[1:] if value.startswith(("@", "<")) else ""
            if option in ("-T", "--upload-file"):
                source = value
            elif option in ("-F", "--form") and re.search(r"=[@<]", value):
                source = re.split(r"=[@<]", value, maxsplit=1)[1].split(";", 1)[0]
            if source and source != "-":
                word = Word(source, source)
                ctx.read([word])
                if not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' sends {source}, which lies outside the workspace",
                    )
        elif option in _CURL_READS:
            # --variable NAME@FILE reads a file (and --expand-... sends it); --netrc-file
            source = value.split("@", 1)[1] if option == "--variable" and "@" in value else ""
            source = value if option == "--netrc-file" else source
            if source and source != "-":
                word = Word(source, source)
                ctx.read([word])
                if option == "--variable" and not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' reads {source}, which lies outside the workspace",
                    )
        elif option in ("-w", "--write-out") and "%output{" in value:
            ctx.danger("write outside the workspace", f"'{ctx.text}': --write-out writes a file")


def _curl_options(args: list[Word]) -> tuple[list[str], list[Word], list[tuple[str, str]]]:
    """curl's options (short ones may be bundled, ``-ofile``), operands and values."""
    options: list[str] = []
    positional: list[Word] = []
    values: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if text == "--":
            positional.extend(args[i:])
            break
        if not text.startswith("-") or text == "-":
            positional.append(args[i - 1])
            continue
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            options.append(name)
            if name in _CURL_VALUED:
                if not eq and i < len(args):
                    value = args[i].text
                    i += 1
                values.append((name, value))
            continue
        for index, letter in enumerate(text[1:]):
            option = "-" + letter
            options.append(option)
            if option in _CURL_VALUED:
                value = text[index + 2 :]
                if not value and i < len(args):
                    value = args[i].text
                    i += 1
                values.append((option, value))
                break
    return options, positional, values


def _wget(args: list[Word], ctx: JudgeContext) -> None:
    _, positional, values = split_args(
        args,
        frozenset(
            {
                "-O",
                "--output-document",
                "-P",
                "--directory-prefix",
                "-o",
                "--output-file",
                "-a",
                "--append-output",
                "-e",
                "--execute",
                "--config",
                "-i",
                "--input-file",
                "--post-file",
                "--body-file",
                "--load-cookies",
                "--save-cookies",
            }
        ),
    )
    ctx.normal("network access")
    code = next((k for k in ("-e", "--execute", "--config") if k in values), "")
    if code:
        ctx.danger("option runs programs", f"'{ctx.text}': wget {code} runs wgetrc commands")
    flags = [a.text.partition("=")[0] for a in args if a.text.startswith("-")]
    creates = {"-r", "--recursive", "-m", "--mirror", "-x", "--force-directories", "-p"}
    bundled = any(
        f.startswith("-") and not f.startswith("--") and set(f[1:]) & set("rmxp")
        for f in flags
        if f not in values
    )
    if creates & set(flags) or bundled:
        ctx.danger(
            "write outside the workspace",
            f"'{ctx.text}' writes files and folders the server names (.git and .skillkit included)",
        )
    if any(re.match(r"\s*file:", p.text, re.I) for p in positional):
        ctx.danger("reads local files", f"'{ctx.text}' reads local files through a file: URL")
    for key in ("--post-file", "--body-file", "-i", "--input-file", "--load-cookies"):
        source = values.get(key)
        if source is not None and source != "-":
            word = Word(source, source)
            ctx.read([word])
            if key in ("--post-file", "--body-file") and not ctx.inside(ctx.path(word)):
                ctx.danger(
                    "sends a file outside the workspace",
                    f"'{ctx.text}' sends {source}, which lies outside the workspace",
                )
    targets = [values.get(k) for k in ("-O", "--output-document", "-P", "--directory-prefix")]
    chosen = [t for t in targets if t is not None and t != "-"]
    if not any(t is not None for t in targets[:2]):
        chosen.append(".")
    chosen += [
        v
        for k in ("-o", "--output-file", "-a", "--append-output", "--save-cookies")
        if (v := values.get(k)) is not None
    ]
    ctx.write([Word(t, t) for t in chosen])


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


_CONTAINER_HOST_ACCESS = re.compile(
    r"^--(privileged|cap-add|device|security-opt|userns|pid|ipc|uts|net|network|"
    r"cgroupns|volumes-from)(=|$)"
)
_CONTAINER_HOST_VALUES = _words("--pid --ipc --uts --net --network --userns --cgroupns")


def _container(args: list[Word], ctx: JudgeContext) -> None:
    texts = [a.text for a in args]
    for index, text in enumerate(texts):
        following = texts[index + 1] if index + 1 < len(texts) else ""
        name, eq, value = text.partition("=")
        if name in _CONTAINER_HOST_VALUES:
            if (value if eq else following) == "host":
                ctx.danger("privilege change", f"'{ctx.text}' shares the host's {name[2:]}")
                return
        elif _CONTAINER_HOST_ACCESS.match(text) and name not in ("--volumes-from",):
            ctx.danger("privilege change", f"'{ctx.text}' gives a container host access")
            return
        if name in ("-o", "--output") and (value if eq else following):
            # docker save/export/build -o: a file or folder on the host
            ctx.write([Word(value if eq else following, value if eq else following)])
        elif name in ("--env-file", "--label-file", "--secret", "--ssh"):
            spec = value if eq else following
            found = re.search(r"(?:^|,)(?:src|source)=([^,]+)", spec)
            local = found.group(1) if found else ("" if "=" in spec else spec)
            word = Word(local, local)
            if local and local != "default":
                ctx.read([word])
                if not ctx.inside(ctx.path(word)):
                    ctx.danger(
                        "sends a file outside the workspace",
                        f"'{ctx.text}' gives a container {local}, outside the workspace",
                    )
                    return
        source = ""
        if name in ("-v", "--volume"):
            spec = value if eq else following
            source = spec.split(":", 1)[0] if ":" in spec else ""
        elif text.startswith("-v") and len(text) > 2 and ":" in text:
            source = text[2:].split(":", 1)[0]
        elif name == "--mount":
            for field_text in (value if eq else following).split(","):
                key, _, val = field_text.partition("=")
                if key in ("src", "source"):
                    source = val
        if source and source.startswith(("/", "~", ".")):
            word = Word(source, source)
            if source.startswith("~"):
                ctx.danger("privilege change", f"'{ctx.text}' mounts {source} into a container")
                return
            path = ctx.path(word)
            if not ctx.inside(path) or (path is not None and _protected_mount(path)):
                ctx.danger(
                    "privilege change",
                    f"'{ctx.text}' mounts {source}, outside the workspace or a protected "
                    "folder, into a container",
                )
                return
    sub = next((t for t in texts if not t.startswith("-")), "")
    if sub in ("ps", "images", "inspect", "logs", "version", "info", "stats", "top", "port"):
        return
    after = args[texts.index(sub) + 1 :] if sub else []
    operands = [a for a in after if not a.text.startswith("-")]
    if sub == "cp" and len(operands) == 2 and ":" not in operands[1].text.split("/", 1)[0]:
        ctx.write(operands[1:])  # docker cp CONTAINER:SRC HOST_DEST
    if sub in ("build", "buildx") and operands:
        context = operands[-1]
        if not re.match(r"^[a-z]+://|^-$", context.text) and not ctx.inside(ctx.path(context)):
            ctx.danger(
                "sends a file outside the workspace",
                f"'{ctx.text}' sends {context.text} to the container engine as build context",
            )
            return
    if sub == "compose":
        _compose(args[texts.index(sub) + 1 :], ctx)
        return
    ctx.normal("may change state")


def _compose(args: list[Word], ctx: JudgeContext) -> None:
    sub = next((a.text for a in args if not a.text.startswith("-")), "")
    if sub in ("ps", "ls", "logs", "config", "version", "images", "top", "port"):
        return
    ctx.danger(
        "runs containers a file describes",
        f"'{ctx.text}': the compose file may mount any host folder or run anything",
    )


def _protected_mount(path: str) -> bool:
    """Whether a bind mount of ``path`` gives a container a path that makes code run
    later: the path itself is protected (`skillkit.protected`) or holds one directly
    (a folder with ``.git`` or ``.skillkit``, such as the workspace)."""
    if protected_reason(path) is not None:
        return True
    return any(os.path.lexists(os.path.join(path, name)) for name in (".git", *PROTECTED_NAMES))


# ssh configuration keys that run a local program, load code, or write local files
_SSH_CODE_KEYS = _words(
    (
        "ProxyCommand LocalCommand PermitLocalCommand KnownHostsCommand PKCS11Provider "
        "SecurityKeyProvider Include Match ControlPath ControlMaster UserKnownHostsFile "
        "GlobalKnownHostsFile IdentityAgent XAuthLocation ProxyUseFdpass SendEnv SetEnv "
        "ForwardAgent ForwardX11 ForwardX11Trusted"
    ).casefold()
)
# options whose value is a configuration file, log file, library or program
_SSH_CODE_OPTIONS = _words("-F -E -I -S -D")
_SSH_VALUED = _words("-b -c -e -i -J -l -L -m -O -p -Q -R -w -W -B -o -F -E -I -S -D -P")


def _ssh(args: list[Word], ctx: JudgeContext) -> None:
    ctx.normal("network access")
    found = _ssh_code_option(args, ctx.text.split()[0] if ctx.text else "ssh")
    if found:
        ctx.danger("option runs programs", f"'{ctx.text}': {found} runs a program or writes a file")


def _scp(args: list[Word], ctx: JudgeContext) -> None:
    found = _ssh_code_option(args, "scp")
    if found:
        ctx.danger("option runs programs", f"'{ctx.text}': {found} runs a program or writes a file")
    _copy_like(args, ctx)


def _ssh_code_option(args: list[Word], program: str) -> str:
    """The option of an ssh/scp/sftp command that runs a local program, loads code or
    writes a local file (``-o ProxyCommand=...``, ``-F config``, ``scp -S prog``); ""."""
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if text == "--" or not text.startswith("-") or text == "-":
            if program == "ssh":
                break  # the host: what follows is the remote command
            continue
        for index, letter in enumerate(text[1:]):
            option = "-" + letter
            if option not in _SSH_VALUED:
                continue
            value = text[index + 2 :]
            if not value and i < len(args):
                value = args[i].text
                i += 1
            if option == "-o":
                key = re.split(r"[\s=]", value.strip(), maxsplit=1)[0].casefold()
                if key in _SSH_CODE_KEYS:
                    return f"-o {key}"
            elif option in _SSH_CODE_OPTIONS and not (option == "-D" and program == "ssh"):
                return option
            break
    return ""


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
    "docker": _container,
    "podman": _container,
    "docker-compose": _compose,
    "podman-compose": _compose,
    "ssh": _ssh,
    "sftp": _ssh,
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
    "curl": _curl,
    "wget": _wget,
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
