"""The walk over the tree-sitter bash syntax tree that fills a `Script`.

`skillkit.permissions.shell.parse_script` hands it the tree of a command line; it records
every simple command, its words after quote removal, its redirections and nested
substitutions, and lists as a problem any construct it does not model exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from skillkit.permissions.shell_syntax import Command, Redirect, Script, Word

__all__ = ["MAX_DEPTH", "ScriptBuilder"]

MAX_DEPTH = 48
"""Deeper nesting of statements and substitutions is a problem."""

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


class ScriptBuilder:
    """Fills ``script`` from the syntax tree of ``data`` (the command line's bytes)."""

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
                builder = ScriptBuilder(self.data, sub)
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
