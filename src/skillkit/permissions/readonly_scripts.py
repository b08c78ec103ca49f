"""The read-only programs whose arguments are a small language of their own: ``find``
expressions, ``sed`` scripts and ``awk`` programs. Each is accepted only in the forms
that print or select, never those that write files or run commands. Nothing here runs
a program or touches the file system. Internal to `skillkit.permissions.classifier`."""

from __future__ import annotations

import re

from skillkit.permissions.readonly_spec import ReadOnlyUse
from skillkit.permissions.readonly_spec import words as _w
from skillkit.permissions.shell import Word

__all__ = ["AWK_UNSAFE", "awk_use", "find_use", "sed_script_ok", "sed_use"]


_FIND_GLOBAL = _w("-P")
_FIND_ZERO = _w(
    "-print -print0 -prune -empty -readable -writable -executable -true -false -not ! -a -o "
    "-and -or ( ) , -depth -d -nowarn -warn -xdev -mount -daystart -quit -ls -noleaf -nouser "
    "-nogroup -ignore_readdir_race -noignore_readdir_race"
)
_FIND_ONE = _w(
    "-name -iname -path -ipath -wholename -iwholename -type -xtype -maxdepth -mindepth -mtime "
    "-mmin -atime -amin -ctime -cmin -size -perm -user -group -uid -gid -links -regex -iregex "
    "-regextype -printf -inum -used -fstype -lname -ilname"
)
_FIND_PATH = _w("-newer -anewer -cnewer -samefile")


def find_use(args: list[Word]) -> ReadOnlyUse | str:
    """``find`` with an allowlisted expression: names and tests only; no ``-exec``,
    ``-delete``, ``-fprint``... and no symlink following (``-L``, ``-H``, ``-follow``)."""
    use = ReadOnlyUse()
    i = 0
    while i < len(args) and args[i].text in _FIND_GLOBAL and not args[i].dynamic:
        i += 1
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")")):
        if args[i].dynamic:
            return f"argument {args[i].raw!r} is known only when it runs"
        use.paths.append(args[i])
        i += 1
    if not use.paths:
        use.cwd = True
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if word.dynamic or word.glob:
            return f"find expression word {word.raw!r} is not static"
        if text in _FIND_ZERO:
            continue
        if text in _FIND_ONE or text in _FIND_PATH or re.fullmatch(r"-newer[aBcmt][aBcmt]", text):
            if i >= len(args) or args[i].dynamic or args[i].glob:
                return f"find {text} needs a static value"
            if text in _FIND_PATH:
                use.paths.append(args[i])
            i += 1
            continue
        return f"find {text} is not known to be read-only"
    return use


_SED_SIMPLE = frozenset("pdDnNgGhHxlPz=}")


def _sed_regex_end(script: str, start: int, delim: str) -> int:
    """Where the regular expression starting at ``start`` ends (its closing ``delim``);
    -1 when it does not end on this line."""
    n = len(script)
    j = start
    while j < n:
        if script[j] == "\\":
            j += 2
            continue
        if script[j] == delim:
            return j
        if script[j] == "\n":
            return -1
        j += 1
    return -1


def _sed_address(script: str, j: int) -> int:
    """Where the address (a line number, ``$`` or ``/regex/``) at ``j`` ends; ``j`` when
    there is none, -1 when it is malformed."""
    n = len(script)
    if j < n and script[j].isdigit():
        while j < n and (script[j].isdigit() or script[j] == "~"):
            j += 1
        return j
    if j < n and script[j] == "$":
        return j + 1
    if j < n and script[j] == "/":
        end = _sed_regex_end(script, j + 1, "/")
        if end < 0:
            return -1
        j = end + 1
        while j < n and script[j] in "IM":
            j += 1
        return j
    return j


def _sed_range(script: str, i: int) -> int:
    """Where the addresses at ``i`` (one, or a range ``A,B``, ``A,+N``, ``A,~N``) and the
    blanks and ``!`` after them end; -1 when they are malformed."""
    n = len(script)
    j = _sed_address(script, i)
    if j < 0:
        return -1
    if j < n and script[j] == ",":
        if j + 1 < n and script[j + 1] in "+~":
            j += 2
            while j < n and script[j].isdigit():
                j += 1
        else:
            j = _sed_address(script, j + 1)
            if j < 0:
                return -1
    while j < n and script[j] in " \t!":
        j += 1
    return j


def _sed_command_end(script: str, j: int) -> int:
    """Where the command at ``j`` ends when it only prints, deletes, holds, quits or
    substitutes; -1 when it is anything else."""
    n = len(script)
    if j >= n:
        return -1
    cmd = script[j]
    j += 1
    if cmd in _SED_SIMPLE or cmd == "{":
        return j
    if cmd in "qQ":
        while j < n and script[j].isdigit():
            j += 1
        return j
    if cmd in "sy":
        if j >= n or script[j] in "\\\n":
            return -1
        delim = script[j]
        first = _sed_regex_end(script, j + 1, delim)
        if first < 0:
            return -1
        second = _sed_regex_end(script, first + 1, delim)
        if second < 0:
            return -1
        j = second + 1
        if cmd == "s":
            while j < n and (script[j] in "gpiImM" or script[j].isdigit()):
                j += 1
        if j < n and script[j] not in " \t\n;}":
            return -1
        return j
    return -1


def sed_script_ok(script: str) -> bool:
    """Accept only scripts made of addresses and the commands that print, delete, hold
    or substitute (without the ``e`` and ``w`` flags). Anything else is refused."""
    n = len(script)
    i = 0
    while i < n:
        ch = script[i]
        if ch in " \t\n;":
            i += 1
            continue
        if ch == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        j = _sed_range(script, i)
        if j < 0:
            return False
        i = _sed_command_end(script, j)
        if i < 0:
            return False
    return True


def sed_use(args: list[Word]) -> ReadOnlyUse | str:
    """``sed`` printing only: ``-n``/``-E``/``-e``, no ``-i``, no script file, and every
    script accepted by a small grammar (no ``w``, ``e``, ``r`` commands or flags)."""
    use = ReadOnlyUse()
    scripts: list[str] = []
    operands: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.dynamic:
            return f"argument {word.raw!r} is known only when it runs"
        text = word.text
        if text in ("-n", "-E", "-r", "-s", "-u", "-z", "--quiet", "--silent", "--posix"):
            continue
        if text in ("--regexp-extended", "--separate", "--unbuffered", "--null-data"):
            continue
        if text in ("-e", "--expression"):
            if i >= len(args) or args[i].dynamic:
                return "sed -e needs a static script"
            scripts.append(args[i].text)
            i += 1
            continue
        if text.startswith("--expression="):
            scripts.append(text.partition("=")[2])
            continue
        if text.startswith("-") and text != "-":
            if re.fullmatch(r"-[nErsuz]+", text):
                continue
            return f"sed option {text} is not known to be read-only"
        operands.append(word)
    if not scripts:
        if not operands:
            return "sed needs a script"
        scripts.append(operands[0].text)
        operands = operands[1:]
    for script in scripts:
        if not sed_script_ok(script):
            return "the sed script may write files or run commands"
    use.paths.extend(w for w in operands if w.text != "-")
    return use


AWK_UNSAFE = re.compile(r"system|getline|ARGV|ARGC|ENVIRON|PROCINFO|[|>@`]")


def awk_use(args: list[Word]) -> ReadOnlyUse | str:
    """``awk`` with an inline program that cannot run commands, write files or choose
    other input files (no ``system``, ``getline``, ``|``, ``>``, ``ARGV``, ``@``...)."""
    use = ReadOnlyUse()
    program: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.dynamic:
            return f"argument {word.raw!r} is known only when it runs"
        text = word.text
        if program is None and text in ("-F", "-v"):
            if i >= len(args) or args[i].dynamic:
                return f"awk {text} needs a static value"
            i += 1
            continue
        if program is None and re.fullmatch(r"-[Fv].+", text):
            continue
        if program is None and text == "--":
            continue
        if program is None:
            if text.startswith("-"):
                return f"awk option {text} is not known to be read-only"
            program = text
            continue
        if re.fullmatch(r"[A-Za-z_]\w*=.*", text) or text == "-":
            continue
        use.paths.append(word)
    if program is None:
        return "awk needs a program"
    if AWK_UNSAFE.search(program):
        return "the awk program may run commands, write files or read other files"
    return use
