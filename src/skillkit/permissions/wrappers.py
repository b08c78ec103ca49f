"""Programs that run another program: ``env``, ``timeout``, ``nice``, ``time``...

`unwrap` reads a wrapper's own options exactly (each wrapper has a table of its flags,
valued options, options that change the folder, write a file or act on another process)
and returns the command it runs. An option not in the table is reported, so the wrapper
is never taken for harmless when it may do more than run its command. Internal to
`skillkit.permissions.classifier`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillkit.permissions.shell import Word

__all__ = ["WRAPPER_SPECS", "Wrapped", "unwrap"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


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
