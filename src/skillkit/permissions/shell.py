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
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = [
    "MAX_DEPTH",
    "MAX_SOURCE",
    "PARSE_TIMEOUT",
    "Command",
    "Redirect",
    "Script",
    "Word",
    "iter_commands",
    "parse_script",
]

MAX_SOURCE = 64 * 1024
"""Longer command lines are not parsed (bounded time); they are a problem, not an error."""
PARSE_TIMEOUT = 0.05
"""Seconds the grammar may take for one command line; a slower parse is a problem (the
line is refused, not interrupted: `MAX_SOURCE` bounds the time a parse can take)."""
MAX_DEPTH = 48
"""Deeper nesting of statements and substitutions is a problem."""

_LANGUAGE = Language(tree_sitter_bash.language())
_ASCII_MASK = bytes(range(128)) + b"x" * 128
_BLANKS_BASH_DOES_NOT_SPLIT = re.compile(r"[^\S \t\n]|[\x00-\x08\x0e-\x1f\x7f]")
_local = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = Parser(_LANGUAGE)
    return parser


@dataclass(frozen=True)
class Word:
    """One shell word.

    ``text`` is its value after quote removal when ``dynamic`` is false (otherwise the
    source text, for display only). ``dynamic``: the value depends on an expansion or
    substitution (``$X``, ``${...}``, ``$(...)``, backticks, ``$((...))``, ``<(...)``,
    ``$'...'``, brace expansion). ``glob``: holds an unquoted ``*``, ``?`` or ``[``
    (pathname expansion). ``tilde``: starts with an unquoted ``~``. ``substitutions``
    are the scripts of the command and process substitutions anywhere inside it.
    """

    text: str
    raw: str
    dynamic: bool = False
    quoted: bool = False
    glob: bool = False
    tilde: bool = False
    substitutions: tuple[Script, ...] = ()


@dataclass(frozen=True)
class Redirect:
    """A redirection: ``op`` is ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<``, ``<>``,
    ``>&``, ``<&``, ``<<``, ``<<-`` or ``<<<``; ``fd`` the explicit descriptor, if any.
    For here-documents ``target`` is the body (``dynamic`` when it expands anything)."""

    op: str
    target: Word
    fd: int | None = None

    @property
    def writes(self) -> bool:
        """Whether the redirection opens a file for writing (not a descriptor copy)."""
        if self.op in (">&", "<&"):
            return not self.target.text.isdigit() and self.target.text != "-"
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>")

    @property
    def reads(self) -> bool:
        """Whether the redirection opens a file for reading."""
        return self.op in ("<", "<>")

    @property
    def inline(self) -> bool:
        """A here-document or here-string: input given in the command line itself."""
        return self.op in ("<<", "<<-", "<<<")


@dataclass
class Command:
    """A simple command: leading assignments, its words and its redirections.

    ``text`` is the command as written (whitespace squashed). ``piped`` is true when its
    standard input comes from the previous stage of a pipeline. A command with no words
    is a bare assignment or a redirection of a group (``{ ...; } > f``).
    """

    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    text: str = ""
    piped: bool = False

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass
class Script:
    """The simple commands of a command line in source order (substitutions hang off
    their words) and what the parser could not model (``problems``; empty when it
    understood every construct)."""

    commands: list[Command] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


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
        _Builder(data, script).statements(root, 0)
    except RecursionError:
        script.problems.append("nested too deeply")
    return script


def iter_commands(script: Script) -> Iterator[Command]:
    """Every simple command of ``script``, depth first, including those inside command
    and process substitutions (after the command that holds them)."""
    for command in script.commands:
        yield command
        for word in (
            *command.assignments,
            *command.words,
            *(r.target for r in command.redirects),
        ):
            for sub in word.substitutions:
                yield from iter_commands(sub)


def all_problems(script: Script) -> list[str]:
    """The problems of ``script`` and of every nested substitution."""
    found = list(script.problems)
    for command in script.commands:
        for word in (*command.assignments, *command.words, *(r.target for r in command.redirects)):
            for sub in word.substitutions:
                found.extend(all_problems(sub))
    return found


# --------------------------------------------------------------------------- tree walk

_STRUCTURE = frozenset(
    {
        "program",
        "list",
        "subshell",
        "do_group",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "case_item",
    }
)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_REDIRECT_OPS = ("&>>", "<<<", "<<-", ">>", ">|", "&>", "<>", ">&", "<&", "<<", "<", ">")
_DQ_ESCAPES = frozenset('$`"\\\n')


class _Builder:
    def __init__(self, data: bytes, script: Script) -> None:
        self.data = data
        self.script = script

    def src(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def problem(self, text: str) -> None:
        if text not in self.script.problems:
            self.script.problems.append(text)

    # ----- statements

    def statements(self, node: Node, depth: int, piped: bool = False) -> None:
        if depth > MAX_DEPTH:
            self.problem("nested too deeply")
            return
        kind = node.type
        if kind == "comment":
            if not _starts_a_word(self.data, node.start_byte):
                self.problem("a comment bash would not see")
            return
        if not node.is_named:
            return
        if node.is_missing or kind == "ERROR":
            self.problem("syntax error")
            return
        if kind == "command":
            self.command(node, depth, piped)
        elif kind == "pipeline":
            first = True
            for child in node.named_children:
                self.statements(child, depth + 1, piped=not first or piped)
                first = False
        elif kind in _STRUCTURE:
            for child in node.named_children:
                self.statements(child, depth + 1, piped)
        elif kind == "compound_statement":
            for child in node.named_children:
                if child.type in _EXPRESSIONS:
                    self.problem("arithmetic command")
                    self.collect(child, depth)
                else:
                    self.statements(child, depth + 1, piped)
        elif kind == "redirected_statement":
            self.redirected(node, depth, piped)
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = [self.assignment(c, depth) for c in _assignments(node)]
            self.add(Command(assignments=assignments, text=_squash(self.src(node))))
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, depth, piped)
        elif kind == "test_command":
            self.test(node, depth)
        elif kind in ("for_statement", "case_statement"):
            self.loop_header(node, depth)
        elif kind == "function_definition":
            self.problem("defines a function")
            for child in node.named_children:
                if child.type != "word":
                    self.statements(child, depth + 1)
        elif kind == "c_style_for_statement":
            self.problem("arithmetic loop")
            self.collect(node, depth)
        else:
            self.problem(f"unsupported construct: {kind}")
            self.collect(node, depth)

    def add(self, command: Command) -> Command:
        self.script.commands.append(command)
        return command

    def command(
        self, node: Node, depth: int, piped: bool, extra: list[Redirect] | None = None
    ) -> Command:
        cmd = Command(text=_squash(self.src(node)), piped=piped)
        if any(not child.is_named for child in node.children):
            # e.g. `echo a ==<newline>cmd`: the grammar reads `==` as an operator that
            # joins the next line into this command; bash runs that line on its own
            self.problem("an operator inside a command")
        previous = None
        for child in node.children:
            if previous is not None:
                gap = self.data[previous.end_byte : child.start_byte].replace(b"\\\n", b"")
                if gap.strip(b" \t"):
                    # `ls<newline>\\<newline>cmd`: one command to the grammar, two to bash
                    self.problem("a command spanning lines")
            previous = child
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                cmd.assignments.append(self.assignment(child, depth))
            elif kind == "command_name":
                inner = child.named_children
                if len(inner) == 1:
                    cmd.words.append(self.word(inner[0], depth))
                else:
                    cmd.words.append(self.word(child, depth))
            elif kind.endswith("_redirect"):
                cmd.redirects.extend(self.redirect(child, depth, follow=False))
            elif kind == "comment":
                continue
            else:
                cmd.words.append(self.word(child, depth))
        if extra:
            cmd.redirects.extend(extra)
        return self.add(cmd)

    def redirected(self, node: Node, depth: int, piped: bool) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        for child in node.named_children:
            if child.type.endswith("_redirect"):
                redirects.extend(self.redirect(child, depth))
        if body is not None and body.type == "command":
            text = _squash(self.src(node).split("\n", 1)[0])
            cmd = self.command(body, depth, piped, extra=redirects)
            cmd.text = text
        else:
            if body is not None:
                self.statements(body, depth + 1, piped)
            self.add(Command(redirects=redirects, text=_squash(self.src(node).split("\n", 1)[0])))
        # a here-document's line may go on with a pipeline or list: `cat <<EOF | grep x`
        for child in node.named_children:
            if child.type == "heredoc_redirect":
                for part in child.named_children:
                    if part.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                        if part.type.endswith("_redirect"):
                            continue
                        self.statements(part, depth + 1, piped=part.type == "pipeline")

    def declaration(self, node: Node, depth: int, piped: bool) -> None:
        words: list[Word] = []
        keyword = node.children[0] if node.children else None
        if keyword is not None and not keyword.is_named:
            words.append(Word(self.src(keyword), self.src(keyword)))
        for child in node.named_children:
            if child.type == "variable_assignment":
                words.append(self.assignment(child, depth))
            elif child.type == "variable_name":
                text = self.src(child)
                words.append(Word(text, text))
            else:
                words.append(self.word(child, depth))
        self.add(Command(words=words, text=_squash(self.src(node)), piped=piped))

    def test(self, node: Node, depth: int) -> None:
        """``[ ... ]`` / ``[[ ... ]]``: the leaves become the words of a command named by
        the bracket; the expression grammar is not modelled (a problem)."""
        opener = node.children[0] if node.children else None
        name = self.src(opener) if opener is not None and not opener.is_named else "[["
        words = [Word(name, name)]
        for leaf in _leaves(node):
            if leaf.type in _WORD_TYPES or leaf.type == "test_operator":
                words.append(self.word(leaf, depth))
        self.problem("test expression")
        self.add(Command(words=words, text=_squash(self.src(node))))

    def loop_header(self, node: Node, depth: int) -> None:
        """``for x in WORDS`` / ``case WORD in PATTERNS``: the words become a command named
        by the keyword, the loop variable its assignment; the bodies are walked as
        statements."""
        keyword = self.src(node.children[0]) if node.children else node.type
        words = [Word(keyword, keyword)]
        assignments: list[Word] = []
        for child in node.named_children:
            if child.type in ("do_group", "case_item", "compound_statement"):
                if child.type == "case_item":
                    for part in child.named_children:
                        if part.type in _WORD_TYPES:
                            words.append(self.word(part, depth))
                        else:
                            self.statements(part, depth + 1)
                else:
                    self.statements(child, depth + 1)
            elif child.type == "variable_name":
                # `for PATH in .` assigns like `PATH=.` does
                name = self.src(child)
                assignments.append(Word(name + "=", name + "="))
            elif child.type in _WORD_TYPES:
                words.append(self.word(child, depth))
            else:
                self.statements(child, depth + 1)
        self.add(Command(words=words, assignments=assignments, text=keyword))

    def assignment(self, node: Node, depth: int) -> Word:
        raw = self.src(node)
        if not re.match(r"[A-Za-z_][A-Za-z0-9_]*(\[|\+?=)", raw):
            # `1=x` is a command to bash (its name is no identifier), an assignment here
            self.problem("an assignment bash would run as a command")
        value = node.child_by_field_name("value")
        if value is None:
            return Word(raw, raw)
        if value.type == "array":
            return Word(raw, raw, dynamic=True, substitutions=self.nested(value, depth))
        inner = self.word(value, depth)
        name = raw[: value.start_byte - node.start_byte]
        return Word(
            name + inner.text,
            raw,
            dynamic=inner.dynamic,
            quoted=inner.quoted,
            substitutions=inner.substitutions,
        )

    def redirect(self, node: Node, depth: int, follow: bool = True) -> list[Redirect]:
        kind = node.type
        extra: list[Redirect] = []
        fd: int | None = None
        op = ""
        target: Word | None = None
        for child in node.children:
            if not child.is_named:
                text = self.src(child)
                if not op and text in _REDIRECT_OPS:
                    op = text
                continue
            if child.type == "file_descriptor":
                digits = self.src(child)
                fd = int(digits) if digits.isdigit() and len(digits) < 6 else None
            elif child.type == "heredoc_start":
                continue
            elif child.type == "heredoc_body":
                start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
                quoted = start is not None and any(q in self.src(start) for q in "'\"\\")
                target = self.heredoc(child, depth, quoted)
            elif child.type == "heredoc_end":
                continue
            elif kind == "heredoc_redirect":
                # `cat <<EOF >out`: later redirections on the line nest in this node;
                # statements after it (`| grep x`, `&& cmd`) are walked by the caller
                if child.type.endswith("_redirect"):
                    extra.extend(self.redirect(child, depth))
            elif target is None:
                target = self.word(child, depth)
            else:
                self.problem("redirection with several targets")
                target = Word(self.src(node), self.src(node), dynamic=True)
        if kind == "heredoc_redirect":
            op = "<<-" if "<<-" in self.src(node)[:3] else "<<"
            if not self.heredoc_ends_as_bash_reads_it(node):
                self.problem("here-document not understood")
                target = Word(self.src(node), self.src(node), dynamic=True)
            if target is None:
                target = Word("", "")
        elif kind == "herestring_redirect":
            op = "<<<"
        if not op or target is None:
            self.problem("unsupported redirection")
            return extra
        return [Redirect(op, target, fd), *extra]

    def heredoc_ends_as_bash_reads_it(self, node: Node) -> bool:
        """Whether the here-document has a plain delimiter word and the grammar ended its
        body on a line holding exactly that word (what bash does)."""
        start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
        end = next((c for c in node.named_children if c.type == "heredoc_end"), None)
        if start is None or end is None:
            return False
        delimiter = re.sub(r"['\"\\\\]", "", self.src(start))
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", delimiter):
            return False
        line_start = self.data.rfind(b"\n", 0, end.start_byte) + 1
        line_end = self.data.find(b"\n", end.end_byte)
        line = self.data[line_start : len(self.data) if line_end < 0 else line_end]
        return line.decode("utf-8", "replace").lstrip("\t") == delimiter

    def heredoc(self, node: Node, depth: int, quoted: bool) -> Word:
        """A here-document body; dynamic when it expands anything (an unquoted delimiter
        and a ``$`` or backtick anywhere in the body, even one the grammar left as text)."""
        raw = self.src(node)
        dynamic = any(c.type != "heredoc_content" for c in node.named_children) or (
            not quoted and ("$" in raw or "`" in raw)
        )
        return Word(raw, raw, dynamic=dynamic, substitutions=self.nested(node, depth))

    # ----- words

    def word(self, node: Node, depth: int) -> Word:
        raw = self.src(node)
        kind = node.type
        if kind == "word":
            return _plain_word(raw)
        if kind in ("number", "test_operator"):
            return Word(raw, raw)
        if kind == "raw_string":
            return Word(raw[1:-1], raw, quoted=True)
        if kind == "string":
            if all(c.type == "string_content" for c in node.named_children):
                return Word(_unescape_double(raw[1:-1]), raw, quoted=True)
            return Word(raw, raw, dynamic=True, quoted=True, substitutions=self.nested(node, depth))
        if kind == "concatenation":
            parts = [self.word(c, depth) for c in node.named_children]
            # text between named children (e.g. a lone `$`) is not modelled
            covered = sum(len(p.raw.encode()) for p in parts)
            dynamic = any(p.dynamic for p in parts) or covered != len(raw.encode())
            if any("{" in p.raw and not p.quoted for p in parts) and _brace_expansion(raw):
                dynamic = True
            return Word(
                "".join(p.text for p in parts),
                raw,
                dynamic=dynamic,
                quoted=any(p.quoted for p in parts),
                glob=any(p.glob for p in parts),
                tilde=bool(parts) and parts[0].tilde,
                substitutions=tuple(s for p in parts for s in p.substitutions),
            )
        if kind in _WORD_TYPES or kind in _EXPRESSIONS:
            return Word(raw, raw, dynamic=True, substitutions=self.nested(node, depth))
        self.problem(f"unsupported word: {kind}")
        return Word(raw, raw, dynamic=True, substitutions=self.nested(node, depth))

    def nested(self, node: Node, depth: int) -> tuple[Script, ...]:
        """The scripts of every command/process substitution anywhere below ``node``."""
        found: list[Script] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in _SUBSTITUTIONS:
                sub = Script()
                builder = _Builder(self.data, sub)
                if depth + 1 > MAX_DEPTH:
                    sub.problems.append("nested too deeply")
                else:
                    for child in current.named_children:
                        builder.statements(child, depth + 1)
                found.append(sub)
                continue
            stack.extend(reversed(current.named_children))
        return tuple(found)

    def collect(self, node: Node, depth: int) -> None:
        """Keep the substitutions of a construct that is not modelled, so the commands
        inside are still judged."""
        subs = self.nested(node, depth)
        if subs:
            raw = self.src(node)
            self.add(
                Command(
                    words=[Word(raw, raw, dynamic=True, substitutions=subs)],
                    text=_squash(raw),
                )
            )


_WORD_TYPES = frozenset(
    {
        "word",
        "number",
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "array",
    }
)
_EXPRESSIONS = frozenset(
    {
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "parenthesized_expression",
        "postfix_expression",
        "variable_name",
        "subscript",
    }
)


def _starts_a_word(data: bytes, at: int) -> bool:
    """Whether a ``#`` at byte ``at`` begins a word for bash (so starts a comment): it
    follows the start, an unescaped blank or an unescaped operator character."""
    if at == 0:
        return True
    if data[at - 1 : at] not in (b" ", b"\t", b"\n", b";", b"&", b"|", b"(", b")", b"<", b">"):
        return False
    backslashes = 0
    index = at - 2
    while index >= 0 and data[index : index + 1] == b"\\":
        backslashes += 1
        index -= 1
    return backslashes % 2 == 0


def _leaves(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _WORD_TYPES or current.type == "test_operator":
            yield current
            continue
        stack.extend(reversed(current.named_children))


def _assignments(node: Node) -> list[Node]:
    if node.type == "variable_assignment":
        return [node]
    return [c for c in node.named_children if c.type == "variable_assignment"]


def _plain_word(raw: str) -> Word:
    """An unquoted word: backslash escapes removed; globs, ``~`` and braces noted."""
    out: list[str] = []
    glob = dynamic = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            if i + 1 < len(raw) and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if ch in "*?[":
            glob = True
        elif ch in "$`{}":
            # a `$` or backtick the grammar left in a word, or a brace expansion
            dynamic = dynamic or ch in "$`" or _brace_expansion(raw)
        out.append(ch)
        i += 1
    return Word("".join(out), raw, dynamic=dynamic, glob=glob, tilde=raw.startswith("~"))


def _brace_expansion(raw: str) -> bool:
    start = raw.find("{")
    return start >= 0 and "}" in raw[start:] and ("," in raw[start:] or ".." in raw[start:])


def _unescape_double(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in _DQ_ESCAPES:
            if body[i + 1] != "\n":
                out.append(body[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _squash(text: str) -> str:
    return " ".join(text.split())
