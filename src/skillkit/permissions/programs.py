"""Families of programs the classifier knows by name (shells and interpreters,
downloaders, privilege tools, wrappers, deleters, disk, power and account tools) and how
a command hands code to another program: an interpreter reading its program from
standard input, ``bash -c '...'``, ``eval``, ``xargs CMD``. Internal to
`skillkit.permissions.classifier`."""

from __future__ import annotations

import re

from skillkit.permissions.judging import has_short, split_args
from skillkit.permissions.judging import words as _words
from skillkit.permissions.shell import Word

__all__ = [
    "ACCOUNT_TOOLS",
    "DELETERS",
    "DISK_TOOLS",
    "DOWNLOADERS",
    "FORK_BOMB",
    "INTERPRETERS",
    "KEYWORDS",
    "LOOP_HEADERS",
    "POWER",
    "PRIVILEGE",
    "PRIVILEGE_OPTS_WITH_VALUE",
    "SHELLS",
    "WRAPPERS",
    "inline_script",
    "is_interpreter",
    "reads_code_from_stdin",
    "xargs_command",
]

FORK_BOMB = re.compile(r"([\w:.]+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&")

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


def is_interpreter(name: str) -> bool:
    """Whether ``name`` runs a program given as text or a file (a shell, python...)."""
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


def xargs_command(args: list[Word]) -> list[Word]:
    """The command ``xargs ARGS`` runs (its arguments after xargs' own options)."""
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
