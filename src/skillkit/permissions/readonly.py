"""The programs a command may run unasked, and exactly how: an allowlist.

Each program has the options it may be given (flags, options with a value, options whose
value is a file it reads) and what its operands are (files it reads, a pattern then
files, free text, or nothing). `read_only_use` accepts an invocation only when every
argument is statically known and fits that description; anything else — an option not
listed, an unquoted glob outside a file position, an abbreviation of a long option —
is refused with a reason. Nothing here runs a program or touches the file system.
Internal to `skillkit.permissions.classifier`.
"""

from __future__ import annotations

import re

from skillkit.permissions.readonly_scripts import (
    AWK_UNSAFE,
    awk_use,
    find_use,
    sed_script_ok,
    sed_use,
)
from skillkit.permissions.readonly_spec import Operands, Program, ReadOnlyUse
from skillkit.permissions.readonly_spec import spec as _spec
from skillkit.permissions.readonly_spec import words as _w
from skillkit.permissions.shell import Word

__all__ = [
    "AWK_UNSAFE",
    "PROGRAMS",
    "Operands",
    "Program",
    "ReadOnlyUse",
    "awk_use",
    "find_use",
    "read_only_use",
    "sed_script_ok",
    "sed_use",
]

_GREP_FLAGS = (
    "-i -y -v -w -x -c -l -L -n -h -H -o -q -s -b -E -F -G -P -z -Z -a -I -T -U -r "
    "--ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp --count "
    "--files-with-matches --files-without-match --line-number --no-filename --with-filename "
    "--only-matching --quiet --silent --no-messages --byte-offset --extended-regexp "
    "--fixed-strings --basic-regexp --perl-regexp --null-data --null --text --line-buffered "
    "--recursive --initial-tab"
)
_GREP = _spec(
    _GREP_FLAGS,
    valued="-e -m -A -B -C --regexp --max-count --after-context --before-context --context "
    "--include --exclude --exclude-dir --label --binary-files",
    path_valued="-f --file --exclude-from",
    optional="--color --colour",
    operands="pattern",
    numeric=True,
    recursive=_w("-r --recursive"),
)
_RG = _spec(
    "-i -S -s -v -w -x -c -l -n -N -H -I -o -q -u -uu -uuu -F -P -U -a -b -0 -p -. "
    "--ignore-case --smart-case --case-sensitive --invert-match --word-regexp "
    "--line-regexp --count --count-matches --files-with-matches --files-without-match "
    "--files --line-number --no-line-number --with-filename --no-filename --only-matching "
    "--quiet --fixed-strings --pcre2 --multiline --multiline-dotall --text --byte-offset "
    "--null --pretty --heading --no-heading --hidden --no-hidden --no-ignore --no-ignore-vcs "
    "--no-ignore-dot --no-ignore-global --no-ignore-parent --no-ignore-exclude "
    "--no-messages --json --vimgrep --column --no-column --trim --stats --unrestricted "
    "--no-config --type-list --crlf --no-unicode --one-file-system --passthru --sort-files "
    "--invert-match --glob-case-insensitive --include-zero --line-buffered --block-buffered",
    valued="-e -g -t -T -m -A -B -C -M -j -r -d -E --regexp --glob --iglob --type --type-not "
    "--max-count --after-context --before-context --context --max-columns --threads "
    "--replace --max-depth --maxdepth --sort --sortr --encoding --engine --max-filesize "
    "--color --colors --type-add --path-separator --context-separator "
    "--field-match-separator --field-context-separator",
    path_valued="-f --file --ignore-file",
    operands="pattern",
    numeric=True,
    always_recursive=True,
    default_cwd=True,
)


def _jq_filter_ok(text: str) -> bool:
    """jq filters may load modules and data files (``import``/``include``) or read the
    environment, where keys and tokens live (``env``, ``$ENV``) — refused."""
    return (
        re.search(
            r"\b(import|include|input_filename|modulemeta|get_search_list|\$__loc__|"
            r"\$__prog_args)\b|\$ENV\b|(?<![.\w$])env\b",
            text,
        )
        is None
    )


# printenv NAME shows one variable; these hold no secrets
_PLAIN_VARIABLES = _w(
    "PATH HOME USER LOGNAME SHELL PWD OLDPWD LANG LANGUAGE LC_ALL LC_CTYPE TERM TMPDIR "
    "HOSTNAME VIRTUAL_ENV CONDA_DEFAULT_ENV EDITOR VISUAL PAGER TZ COLUMNS LINES SHLVL "
    "XDG_RUNTIME_DIR XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME"
)


_SUMS = _spec(
    "-b -t -z -w --binary --text --tag --zero --quiet --status --strict --warn",
    valued="-a -l --algorithm --length",
)

PROGRAMS: dict[str, Program] = {
    "ls": _spec(
        "-a -A -l -h -R -t -r -S -1 -d -F -p -i -s -n -g -o -G -c -u -U -X -v -x -m -C -Q -k "
        "-B -N --all --almost-all --human-readable --recursive --reverse --directory "
        "--classify --inode --size --numeric-uid-gid --no-group --group-directories-first "
        "--full-time --si --literal --escape --ignore-backups --author --dired",
        valued="-I -T -w --ignore --hide --tabsize --width --block-size",
        optional="--color --colour --sort --time-style --format --indicator-style --time "
        "--quoting-style --hyperlink",
        default_cwd=True,
    ),
    "cat": _spec(
        "-n -b -s -A -E -T -v -e -t -u --number --number-nonblank --squeeze-blank "
        "--show-all --show-ends --show-tabs --show-nonprinting"
    ),
    "tac": _spec("-b -r --before --regex", valued="-s --separator"),
    "head": _spec(
        "-q -v -z --quiet --silent --verbose --zero-terminated",
        valued="-n -c --lines --bytes",
        numeric=True,
    ),
    "tail": _spec(
        "-q -v -z --quiet --silent --verbose --zero-terminated",
        valued="-n -c --lines --bytes",
        numeric=True,
    ),
    "wc": _spec("-l -w -c -m -L --lines --words --bytes --chars --max-line-length"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _RG,
    "tree": _spec(
        "-a -d -f -i -x -p -s -h -u -g -D -F -q -N -v -t -c -U -r -C -n -J -X -Q --du --si "
        "--dirsfirst --filesfirst --noreport --gitignore --prune --matchdirs --ignore-case "
        "--inodes --device",
        valued="-L -P -I",
        optional="--charset --filelimit --sort --timefmt",
        default_cwd=True,
    ),
    "pwd": _spec("-L -P", operands="none"),
    "whoami": _spec(operands="none"),
    "groups": _spec(operands="text"),
    "id": _spec("-u -g -G -n -r -z -a --user --group --groups --name --real", operands="text"),
    "uname": _spec(
        "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release "
        "--kernel-version --machine --processor --hardware-platform --operating-system",
        operands="none",
    ),
    "hostname": _spec("-f -s -i -I -d -A --fqdn --short --domain", operands="none"),
    "nproc": _spec("--all", valued="--ignore", operands="none"),
    "uptime": _spec("-p -s --pretty --since", operands="none"),
    "free": _spec("-b -k -m -g -h -w -t --human --wide --total --si", operands="none"),
    "date": _spec(
        "-u -R --utc --universal --rfc-email",
        valued="-d --date",
        path_valued="-r --reference",
        optional="--iso-8601 --rfc-3339 -I",
        operands="format",
    ),
    "echo": _spec("-n -e -E", operands="text"),
    "printf": _spec(operands="text"),
    "true": _spec(operands="text"),
    "false": _spec(operands="text"),
    "seq": _spec("-w --equal-width", valued="-s -f --separator --format", operands="text"),
    "basename": _spec("-a -z --multiple --zero", valued="-s --suffix", operands="text"),
    "dirname": _spec("-z --zero", operands="text"),
    "realpath": _spec(
        "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical "
        "--physical --quiet --strip --no-symlinks --zero",
        valued="--relative-to --relative-base",
        operands="text",
    ),
    "readlink": _spec(
        "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing "
        "--canonicalize-missing --no-newline --quiet --silent --verbose --zero",
        operands="text",
    ),
    "which": _spec("-a -s", operands="text"),
    "type": _spec("-a -f -P -p -t", operands="text"),
    "stat": _spec(
        "-f -t --file-system --terse", valued="-c --format --printf", optional="--cached"
    ),
    "file": _spec(
        "-b -i -k -N -E -0 --brief --mime --mime-type --mime-encoding --keep-going "
        "--no-pad --print0 --extension --apple"
    ),
    "du": _spec(
        "-s -h -a -c -k -m -b -x -S -l --summarize --human-readable --all --total "
        "--apparent-size --si --bytes --one-file-system --separate-dirs --count-links",
        valued="-d -t -B --max-depth --threshold --exclude --block-size",
        optional="--time",
        default_cwd=True,
    ),
    "df": _spec(
        "-h -H -k -T -i -l -a -P --human-readable --si --local --all --print-type "
        "--inodes --total --portability",
        valued="-t -x -B --type --exclude-type --block-size",
        optional="--output",
    ),
    # no -r and no directories: diff follows symbolic links out of the workspace
    "diff": _spec(
        "-u -c -q -w -b -B -i -a -s -y -t -T -p -E -Z -d --brief "
        "--ignore-all-space --ignore-space-change --ignore-blank-lines "
        "--ignore-case --text --report-identical-files --side-by-side --expand-tabs "
        "--initial-tab --show-c-function --strip-trailing-cr --suppress-common-lines "
        "--minimal --speed-large-files --no-dereference --ignore-tab-expansion "
        "--ignore-trailing-space --unidirectional-new-file",
        valued="-U -C -W -x -I --label --width --exclude --ignore-matching-lines "
        "--tabsize --show-function-line",
        path_valued="-X --exclude-from --from-file --to-file",
        optional="--color --unified --context --normal",
        files_only=True,
    ),
    "cmp": _spec(
        "-b -l -s --print-bytes --verbose --silent --quiet",
        valued="-i -n --ignore-initial --bytes",
        max_operands=2,
    ),
    "comm": _spec(
        "-1 -2 -3 -z --check-order --nocheck-order --zero-terminated --total",
        valued="--output-delimiter",
        max_operands=2,
    ),
    "cut": _spec(
        "-s -z -n --complement --only-delimited --zero-terminated",
        valued="-b -c -f -d --bytes --characters --fields --delimiter --output-delimiter",
    ),
    "tr": _spec(
        "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1",
        operands="text",
    ),
    "nl": _spec(
        "-p --no-renumber",
        valued="-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter "
        "--footer-numbering --header-numbering --line-increment --join-blank-lines "
        "--number-format --number-separator --starting-line-number --number-width",
    ),
    "sort": _spec(
        "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z --reverse --numeric-sort "
        "--human-numeric-sort --unique --stable --ignore-case --version-sort "
        "--general-numeric-sort --month-sort --dictionary-order --ignore-leading-blanks "
        "--zero-terminated --check --merge --random-sort",
        valued="-k -t -S --key --field-separator --buffer-size --parallel",
    ),
    "uniq": _spec(
        "-c -d -D -u -i -z --count --repeated --unique --ignore-case --zero-terminated",
        valued="-f -s -w --skip-fields --skip-chars --check-chars",
        optional="--all-repeated --group",
        max_operands=1,
    ),
    "column": _spec("-t -x -n -e -J -L --table --fillrows", valued="-c -s -o -N -R -W"),
    "fold": _spec("-b -s --bytes --spaces", valued="-w --width"),
    "fmt": _spec("-c -s -u -p --crown-margin --split-only --uniform-spacing", valued="-w"),
    "paste": _spec("-s -z --serial --zero-terminated", valued="-d --delimiters"),
    "join": _spec(
        "-i --ignore-case --check-order --nocheck-order --header -z",
        valued="-a -e -j -o -t -v -1 -2",
        max_operands=2,
    ),
    "expand": _spec("-i --initial", valued="-t --tabs"),
    "unexpand": _spec("-a --all --first-only", valued="-t --tabs"),
    "rev": _spec(),
    "sha1sum": _SUMS,
    "sha224sum": _SUMS,
    "sha256sum": _SUMS,
    "sha384sum": _SUMS,
    "sha512sum": _SUMS,
    "md5sum": _SUMS,
    "b2sum": _SUMS,
    "cksum": _SUMS,
    "jq": _spec(
        "-r -j -c -s -n -e -S -C -M -a -R --raw-output --join-output --compact-output "
        "--slurp --null-input --exit-status --sort-keys --color-output --monochrome-output "
        "--ascii-output --raw-input --tab --seq --stream --raw-output0",
        valued="--indent",
        operands="pattern",
        pattern_ok=_jq_filter_ok,
        pattern_options=frozenset(),  # jq -e is --exit-status, not a filter
    ),
    # xxd stops reading options at its first operand: `xxd IN -c` writes a file "-c"
    "xxd": _spec(
        "-a -b -C -E -e -i -p -u -d -ps -plain -autoskip -bits -capitalize -uppercase",
        valued="-c -g -l -s -o -n -cols -groupsize -len -seek -offset -name",
        max_operands=1,
        options_first=True,
    ),
    "od": _spec(
        "-b -c -d -f -i -l -o -s -x -v --output-duplicates",
        valued="-A -j -N -t -S --address-radix --skip-bytes --read-bytes --format",
        optional="--width --strings",
    ),
    "hexdump": _spec("-b -c -C -d -o -x -v", valued="-n -s -e"),
    # strings reads further options from an `@file` operand
    "strings": _spec(
        "-a -f -w --all --print-file-name",
        valued="-n -t -e --bytes --radix",
        operand_ok=lambda text: not text.startswith("@"),
    ),
    # the environment holds API keys: only variables known to hold none
    "printenv": _spec(
        "-0 --null", operands="text", operand_ok=lambda text: text in _PLAIN_VARIABLES
    ),
}


def read_only_use(name: str, args: list[Word]) -> ReadOnlyUse | str:
    """How ``name args...`` reads, or why it is not known to be read-only."""
    spec = PROGRAMS.get(name)
    if spec is None:
        return f"{name} is not a known read-only program"
    return _check(name, spec, args)


def _check(name: str, spec: Program, args: list[Word]) -> ReadOnlyUse | str:
    use = ReadOnlyUse(files_only=spec.files_only)
    operands: list[Word] = []
    pattern_given = False
    recursive = spec.always_recursive
    i = 0
    options_done = False
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if word.dynamic:
            return f"argument {word.raw!r} is known only when it runs"
        if options_done or text == "-" or not text.startswith("-"):
            if spec.operand_ok is not None and not spec.operand_ok(text):
                return f"{name} operand {word.raw!r} is not known to be read-only"
            operands.append(word)
            options_done = options_done or spec.options_first
            continue
        if word.glob:
            return f"option {word.raw!r} holds an unquoted glob"
        if text == "--":
            options_done = True
            continue
        parsed = _options(name, spec, text, args, i)
        if isinstance(parsed, str):
            return parsed
        found, i = parsed
        for opt, given in found:
            if opt in spec.recursive:
                recursive = True
            if opt in spec.pattern_options and spec.operands == "pattern":
                pattern_given = True
                if given is not None and spec.pattern_ok and not spec.pattern_ok(given):
                    return f"{name} expression {given!r} is not known to be read-only"
            if opt == "--files" and name == "rg":
                pattern_given = True
            if opt in spec.path_valued and given is not None:
                use.paths.append(Word(given, given))
    return _operands(name, spec, use, operands, pattern_given, recursive)


def _options(
    name: str, spec: Program, text: str, args: list[Word], i: int
) -> tuple[list[tuple[str, str | None]], int] | str:
    """The options (with their values) that the argument ``text`` gives, and the index of
    the argument after them (an option's value may be the next argument ``args[i]``); or
    why they are not known to be read-only."""
    found: list[tuple[str, str | None]] = []  # (option, value)
    if text.startswith("--"):
        option, eq, value = text.partition("=")
        if eq:
            if option not in spec.valued and option not in spec.optional:
                return f"{name} option {option} is not known to be read-only"
            found.append((option, value))
        elif option in spec.flags or option in spec.optional:
            found.append((option, None))
        elif option in spec.valued:
            if i >= len(args) or args[i].dynamic or args[i].glob:
                return f"{name} option {option} needs a static value"
            found.append((option, args[i].text))
            i += 1
        else:
            return f"{name} option {option} is not known to be read-only"
    elif text in spec.flags:
        found.append((text, None))
    elif text in spec.valued:
        if i >= len(args) or args[i].dynamic or args[i].glob:
            return f"{name} option {text} needs a static value"
        found.append((text, args[i].text))
        i += 1
    elif spec.numeric and text[1:].isdigit():
        pass
    else:
        letters = text[1:]
        for index, letter in enumerate(letters):
            option = "-" + letter
            if option in spec.flags:
                found.append((option, None))
                continue
            if option in spec.valued:
                rest = letters[index + 1 :]
                if rest:
                    found.append((option, rest))
                elif i < len(args) and not args[i].dynamic and not args[i].glob:
                    found.append((option, args[i].text))
                    i += 1
                else:
                    return f"{name} option {option} needs a static value"
                break
            return f"{name} option {option} is not known to be read-only"
    return found, i


def _operands(
    name: str,
    spec: Program,
    use: ReadOnlyUse,
    operands: list[Word],
    pattern_given: bool,
    recursive: bool,
) -> ReadOnlyUse | str:
    """``use`` completed with what the operands read, or why they are not read-only."""
    if spec.operands == "pattern" and not pattern_given:
        if not operands:
            return f"{name} needs a pattern"
        pattern, operands = operands[0], operands[1:]
        if pattern.glob:
            return f"pattern {pattern.raw!r} is an unquoted glob"
        if spec.pattern_ok is not None and not spec.pattern_ok(pattern.text):
            return f"{name} expression {pattern.raw!r} is not known to be read-only"
    if name == "printenv" and not operands:
        return "printenv shows the whole environment, which may hold keys and tokens"
    if spec.operands in ("text", "none", "format"):
        if spec.operands == "none" and operands:
            return f"{name} takes no operands here"
        if spec.operands == "format" and any(not w.text.startswith("+") for w in operands):
            return f"{name} operand is not a +FORMAT"
        if any(w.glob for w in operands):
            return "an unquoted glob would be expanded into file names"
        return use
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        return f"{name} with more than {spec.max_operands} operands writes a file"
    paths = [w for w in operands if w.text != "-"]
    use.paths.extend(paths)
    if recursive:
        use.recursive.extend(paths)
    if not paths and (spec.default_cwd or recursive):
        use.cwd = True
        use.cwd_recursive = recursive
    return use
