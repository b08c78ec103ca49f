"""Shell command lines as the classifier sees them, parsed with the tree-sitter bash grammar.

`parse_script` turns a command line into a `Script`: its simple commands in the order
they appear (words after quote removal, leading assignments, redirections), with the
command and process substitutions hidden anywhere in a word — inside ``"..."``,
``${X:-...}``, ``$((...))`` or a here-document body — parsed as nested scripts.

The parser never guesses. Anything it does not model exactly is recorded in
`Script.problems` (syntax errors, node types it does not know, function definitions,
arithmetic commands, ``[[ ... ]]`` tests, input too long, nested too deeply or slower to
parse than `PARSE_TIMEOUT`), and a
word whose value depends on an expansion is marked ``dynamic``. The classifier treats
both as "not understood". `parse_script` never raises for any text.
"""

from __future__ import annotations

import re
import threading
import time

import tree_sitter_bash
from tree_sitter import Language, Parser

from skillkit.permissions.shell_syntax import (
    Command,
    Redirect,
    Script,
    Word,
    all_problems,
    iter_commands,
)
from skillkit.permissions.shell_tree import MAX_DEPTH, ScriptBuilder

__all__ = [
    "MAX_DEPTH",
    "MAX_SOURCE",
    "PARSE_TIMEOUT",
    "Command",
    "Redirect",
    "Script",
    "Word",
    "all_problems",
    "iter_commands",
    "parse_script",
]

MAX_SOURCE = 64 * 1024
"""Longer command lines are not parsed (bounded time); they are a problem, not an error."""
PARSE_TIMEOUT = 0.05
"""Seconds the grammar may take for one command line; a slower parse is a problem (the
line is refused, not interrupted: `MAX_SOURCE` bounds the time a parse can take)."""

_LANGUAGE = Language(tree_sitter_bash.language())
_ASCII_MASK = bytes(range(128)) + b"x" * 128
_BLANKS_BASH_DOES_NOT_SPLIT = re.compile(r"[^\S \t\n]|[\x00-\x08\x0e-\x1f\x7f]")
_local = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = Parser(_LANGUAGE)
    return parser


def parse_script(source: str) -> Script:
    """Parse ``source``. Never raises: what cannot be parsed is listed in ``problems``."""
    script = Script()
    if not isinstance(source, str):
        script.problems.append("not a string")
        return script
    if len(source) > MAX_SOURCE:
        script.problems.append(f"longer than {MAX_SOURCE} characters")
        return script
    if "\x00" in source:
        script.problems.append("contains a NUL character")
        return script
    if "\\ " in source or "\\\t" in source:
        # the grammar drops an escaped blank (`ls \\ #x` becomes `ls` and a comment);
        # to bash it starts a word, and `#` inside a word is no comment
        script.problems.append("contains an escaped blank")
        return script
    if _BLANKS_BASH_DOES_NOT_SPLIT.search(source):
        # the grammar treats \r, \f, \v and Unicode spaces as blanks, bash does not:
        # `ls\r#$(cmd)` would be a comment to one and a substitution to the other
        script.problems.append("contains a control or non-ASCII space character")
        return script
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError:
        script.problems.append("not valid text (lone surrogates)")
        return script
    started = time.perf_counter()
    try:
        # The grammar's scanner crashes the interpreter on some non-ASCII input, so it
        # parses a copy where every non-ASCII byte is an `x` (a word character to bash
        # too); texts are cut from the real bytes at the same offsets. The callback API
        # that could cancel a parse crashed as well: time is bounded by MAX_SOURCE, and
        # a parse slower than PARSE_TIMEOUT is refused afterwards.
        tree = _parser().parse(data.translate(_ASCII_MASK))
    except Exception as exc:  # the binding raises only on misuse; fail closed anyway
        script.problems.append(f"cannot parse: {exc}")
        return script
    if time.perf_counter() - started > PARSE_TIMEOUT:
        script.problems.append("parse timed out")
        return script
    root = tree.root_node
    if root.has_error:
        script.problems.append("syntax error")
    try:
        ScriptBuilder(data, script).statements(root, 0)
    except RecursionError:
        script.problems.append("nested too deeply")
    return script
