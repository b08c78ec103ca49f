"""A small parser for POSIX shell command lines, enough to judge what they would do.

It understands quoting (``'...'``, ``"..."``, backslashes), the list and pipeline
operators (``&&``, ``||``, ``;``, ``&``, ``|``, ``|&``, newlines), subshells ``( ... )``,
brace groups ``{ ...; }``, function definitions, command substitutions ``$(...)`` and
backticks, process substitutions ``<(...)`` / ``>(...)``, redirections (``>``, ``>>``,
``2>&1``, ``&>``, ``<<EOF`` here-documents...) and comments. It does not expand anything:
a word that holds ``$VAR``, ``${...}`` or a substitution is marked ``dynamic``.

`parse_script` returns a `Script`; `iter_commands` walks every simple command in it,
including those inside groups and substitutions. Malformed input (an unclosed quote or
parenthesis) raises `ShellSyntaxError`; nothing else is raised for any input text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "Command",
    "Group",
    "Pipeline",
    "Redirect",
    "Script",
    "ShellSyntaxError",
    "Word",
    "iter_commands",
    "parse_script",
]


class ShellSyntaxError(ValueError):
    """The command line cannot be parsed (unclosed quote, parenthesis or substitution)."""


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal.

    ``raw`` is the text as written; ``dynamic`` is true when the word's value depends on
    an expansion (``$VAR``, ``${...}``, ``$(...)``, backticks, ``$((...))``, ``<(...)``);
    ``substitutions`` are the scripts of the command and process substitutions it holds.
    """

    text: str
    raw: str
    dynamic: bool = False
    quoted: bool = False
    substitutions: tuple[Script, ...] = ()


@dataclass(frozen=True)
class Redirect:
    """A redirection: ``op`` is one of ``>``, ``>>``, ``>|``, ``<``, ``<>``, ``<<``,
    ``<<<``, ``>&``, ``<&``, ``&>``, ``&>>``; ``fd`` the explicit descriptor, if any."""

    op: str
    target: Word
    fd: int | None = None

    @property
    def writes(self) -> bool:
        """Whether the redirection writes to a file (not a descriptor duplication)."""
        if self.op in (">&", "<&"):
            return not self.target.text.isdigit() and self.target.text != "-"
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>")


@dataclass
class Command:
    """A simple command: leading assignments, its words and its redirections."""

    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]

    @property
    def text(self) -> str:
        """The command as written, with whitespace between words collapsed to one space."""
        parts = [w.raw for w in self.assignments] + [w.raw for w in self.words]
        for r in self.redirects:
            fd = "" if r.fd is None else str(r.fd)
            parts.append(f"{fd}{r.op}{r.target.raw}")
        return " ".join(parts)


@dataclass
class Group:
    """A subshell ``( ... )``, a brace group ``{ ...; }`` or a function body."""

    body: Script
    redirects: list[Redirect] = field(default_factory=list)
    subshell: bool = True
    function_name: str | None = None


Stage = Command | Group


@dataclass
class Pipeline:
    """Stages joined by ``|``; ``operator`` is what follows it (``&&``, ``;``, ``&``...)."""

    stages: list[Stage] = field(default_factory=list)
    operator: str = ""


@dataclass
class Script:
    """A list of pipelines, in order."""

    pipelines: list[Pipeline] = field(default_factory=list)


def parse_script(source: str) -> Script:
    """Parse ``source`` into a `Script`. Raises `ShellSyntaxError` on malformed input."""
    try:
        return _Parser(source).parse_list(closing=None)
    except RecursionError:
        raise ShellSyntaxError("nested too deeply") from None


def iter_commands(script: Script) -> Iterator[Command]:
    """Every simple command of ``script``, depth first, including those in groups,
    function bodies and command/process substitutions."""
    for pipeline in script.pipelines:
        for stage in pipeline.stages:
            yield from _iter_stage(stage)


def _iter_stage(stage: Stage) -> Iterator[Command]:
    if isinstance(stage, Group):
        yield from iter_commands(stage.body)
        for r in stage.redirects:
            for sub in r.target.substitutions:
                yield from iter_commands(sub)
        return
    yield stage
    for word in (*stage.assignments, *stage.words, *(r.target for r in stage.redirects)):
        for sub in word.substitutions:
            yield from iter_commands(sub)


# --------------------------------------------------------------------------- lexer + parser

_META = set(" \t\n;&|()<>")
_OPERATORS = ("&&", "||", ";;", "|&", "&>>", "&>", ";", "&", "|", "(", ")", "\n")
_REDIRECT_OPS = ("<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">")


@dataclass
class _Token:
    kind: str  # "word", "op", "redirect"
    value: str = ""
    word: Word | None = None
    fd: int | None = None


class _Parser:
    """Recursive descent over characters: lexing and parsing happen together so that
    ``$(...)`` and ``( ... )`` nest naturally."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.heredocs: list[tuple[str, bool]] = []
        self.peeked: _Token | None = None

    # ----- lexing

    def _skip_blanks(self) -> None:
        src = self.src
        while self.pos < len(src):
            ch = src[self.pos]
            if ch in " \t\r":
                self.pos += 1
            elif src.startswith("\\\n", self.pos):
                self.pos += 2
            elif ch == "#":
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            else:
                return

    def peek(self) -> _Token | None:
        if self.peeked is None:
            self.peeked = self._next_token()
        return self.peeked

    def take(self) -> _Token | None:
        token = self.peek()
        self.peeked = None
        return token

    def _next_token(self) -> _Token | None:
        self._skip_blanks()
        src = self.src
        if self.pos >= len(src):
            return None
        ch = src[self.pos]
        if ch == "\n":
            self.pos += 1
            self._read_heredoc_bodies()
            return _Token("op", "\n")
        # process substitution is a word, not a redirection
        if src.startswith(("<(", ">("), self.pos):
            return _Token("word", word=self._read_word())
        # [n]redirect
        digits = self.pos
        while digits < len(src) and src[digits].isdigit():
            digits += 1
        if digits < len(src) and src[digits] in "<>" and not src.startswith(("<(", ">("), digits):
            fd = int(src[self.pos : digits]) if digits > self.pos else None
            for op in _REDIRECT_OPS:
                if src.startswith(op, digits):
                    self.pos = digits + len(op)
                    return _Token("redirect", op, fd=fd)
        for op in _OPERATORS:
            if src.startswith(op, self.pos):
                self.pos += len(op)
                if op in ("&>", "&>>"):
                    return _Token("redirect", op)
                return _Token("op", op)
        return _Token("word", word=self._read_word())

    def _read_word(self) -> Word:
        src = self.src
        start = self.pos
        out: list[str] = []
        dynamic = False
        quoted = False
        subs: list[Script] = []
        while self.pos < len(src):
            ch = src[self.pos]
            if ch in _META:
                if src.startswith(("<(", ">("), self.pos) and self.pos == start:
                    self.pos += 2
                    subs.append(self._read_substitution(start))
                    dynamic = True
                    out.append(src[start : self.pos])
                    continue
                break
            if ch == "\\":
                if self.pos + 1 < len(src):
                    if src[self.pos + 1] != "\n":
                        out.append(src[self.pos + 1])
                    self.pos += 2
                else:
                    self.pos += 1
            elif ch == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                out.append(src[self.pos + 1 : end])
                self.pos = end + 1
                quoted = True
            elif ch == '"':
                quoted = True
                self.pos += 1
                dynamic |= self._read_double_quoted(out, subs)
            elif ch == "$" or ch == "`":
                dynamic = True
                out.append(self._read_dollar(subs))
            else:
                out.append(ch)
                self.pos += 1
        return Word("".join(out), src[start : self.pos], dynamic, quoted, tuple(subs))

    def _read_double_quoted(self, out: list[str], subs: list[Script]) -> bool:
        src = self.src
        dynamic = False
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("unclosed double quote")
            ch = src[self.pos]
            if ch == '"':
                self.pos += 1
                return dynamic
            if ch == "\\" and self.pos + 1 < len(src):
                nxt = src[self.pos + 1]
                if nxt in '"\\$`':
                    out.append(nxt)
                elif nxt != "\n":
                    out.append("\\" + nxt)
                self.pos += 2
            elif ch == "$" or ch == "`":
                dynamic = True
                out.append(self._read_dollar(subs))
            else:
                out.append(ch)
                self.pos += 1

    def _read_dollar(self, subs: list[Script]) -> str:
        """Read an expansion starting at ``$`` or a backtick; returns its raw text."""
        src = self.src
        start = self.pos
        if src[self.pos] == "`":
            end = self.pos + 1
            while end < len(src) and src[end] != "`":
                end += 2 if src[end] == "\\" else 1
            if end >= len(src):
                raise ShellSyntaxError("unclosed backtick substitution")
            inner = src[self.pos + 1 : end].replace("\\`", "`")
            subs.append(parse_script(inner))
            self.pos = end + 1
            return src[start : self.pos]
        if src.startswith("$((", self.pos):
            depth = 0
            i = self.pos + 1
            while i < len(src):
                if src[i] == "(":
                    depth += 1
                elif src[i] == ")":
                    depth -= 1
                    if depth == 0:
                        self.pos = i + 1
                        return src[start : self.pos]
                i += 1
            raise ShellSyntaxError("unclosed arithmetic expansion")
        if src.startswith("$(", self.pos):
            self.pos += 2
            subs.append(self._read_substitution(start))
            return src[start : self.pos]
        if src.startswith("${", self.pos):
            end = src.find("}", self.pos)
            if end < 0:
                raise ShellSyntaxError("unclosed ${...} expansion")
            self.pos = end + 1
            return src[start : self.pos]
        self.pos += 1
        if self.pos < len(src) and (src[self.pos].isalnum() or src[self.pos] == "_"):
            while self.pos < len(src) and (src[self.pos].isalnum() or src[self.pos] == "_"):
                self.pos += 1
        elif self.pos < len(src) and src[self.pos] in "@*#?$!-0123456789":
            self.pos += 1
        return src[start : self.pos]

    def _read_substitution(self, start: int) -> Script:
        """Parse the body of ``$(`` / ``<(`` / ``>(`` up to its closing parenthesis."""
        inner = _Parser(self.src)
        inner.pos = self.pos
        script = inner.parse_list(closing=")")
        closing = inner.take()
        if closing is None or closing.value != ")":
            raise ShellSyntaxError(
                f"unclosed substitution starting at {self.src[start : start + 20]!r}"
            )
        self.pos = inner.pos
        return script

    def _read_heredoc_bodies(self) -> None:
        src = self.src
        for delimiter, strip_tabs in self.heredocs:
            while self.pos < len(src):
                end = src.find("\n", self.pos)
                line = src[self.pos : len(src) if end < 0 else end]
                self.pos = len(src) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.heredocs.clear()

    # ----- parsing

    def parse_list(self, closing: str | None) -> Script:
        script = Script()
        while True:
            token = self.peek()
            if token is None:
                if closing is not None:
                    raise ShellSyntaxError(f"missing {closing!r}")
                return script
            if token.kind == "op" and token.value in (";", "\n", "&", ";;"):
                self.take()
                continue
            if closing is not None and token.kind == "op" and token.value == closing:
                return script
            if closing == "}" and token.kind == "word" and token.word and token.word.raw == "}":
                return script
            if token.kind == "op" and token.value == ")":
                raise ShellSyntaxError("unexpected ')'")
            pipeline = self._parse_pipeline(closing)
            nxt = self.peek()
            if nxt is not None and nxt.kind == "op" and nxt.value in ("&&", "||", ";", "&", "\n"):
                pipeline.operator = nxt.value
                self.take()
            script.pipelines.append(pipeline)

    def _parse_pipeline(self, closing: str | None) -> Pipeline:
        pipeline = Pipeline()
        while True:
            token = self.peek()
            if token is not None and token.kind == "word" and token.word and token.word.raw == "!":
                self.take()
            pipeline.stages.append(self._parse_stage(closing))
            nxt = self.peek()
            if nxt is not None and nxt.kind == "op" and nxt.value in ("|", "|&"):
                self.take()
                continue
            return pipeline

    def _parse_stage(self, closing: str | None) -> Stage:
        token = self.peek()
        if token is not None and token.kind == "op" and token.value == "(":
            self.take()
            body = self.parse_list(closing=")")
            self.take()
            group = Group(body, subshell=True)
            self._parse_redirects(group.redirects)
            return group
        if token is not None and token.kind == "word" and token.word and token.word.raw == "{":
            self.take()
            body = self.parse_list(closing="}")
            self.take()
            group = Group(body, subshell=False)
            self._parse_redirects(group.redirects)
            return group
        command = Command()
        while True:
            token = self.peek()
            if token is None:
                break
            if token.kind == "redirect":
                self.take()
                command.redirects.append(self._redirect(token))
                continue
            if token.kind == "op":
                if token.value == "(" and len(command.words) == 1 and not command.redirects:
                    return self._parse_function(command.words[0].text)
                if token.value == "(":
                    raise ShellSyntaxError("unexpected '('")
                break
            word = token.word
            assert word is not None
            if closing == "}" and word.raw == "}" and command.words:
                break
            self.take()
            if not command.words and _is_assignment(word):
                command.assignments.append(word)
            elif not command.words and word.raw == "function":
                name = self.take()
                if name is None or name.kind != "word" or name.word is None:
                    raise ShellSyntaxError("function needs a name")
                nxt = self.peek()
                if nxt is not None and nxt.kind == "op" and nxt.value == "(":
                    return self._parse_function(name.word.text)
                return self._parse_function_body(name.word.text)
            else:
                command.words.append(word)
        return command

    def _parse_function(self, name: str) -> Group:
        self.take()  # (
        close = self.take()
        if close is None or close.value != ")":
            raise ShellSyntaxError(f"bad function definition for {name!r}")
        return self._parse_function_body(name)

    def _parse_function_body(self, name: str) -> Group:
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.value == "\n":
            self.take()
        body_stage = self._parse_stage(None)
        if isinstance(body_stage, Group):
            body_stage.function_name = name
            return body_stage
        return Group(Script([Pipeline([body_stage])]), subshell=False, function_name=name)

    def _parse_redirects(self, into: list[Redirect]) -> None:
        while (token := self.peek()) is not None and token.kind == "redirect":
            self.take()
            into.append(self._redirect(token))

    def _redirect(self, token: _Token) -> Redirect:
        target = self.take()
        if target is None or target.kind != "word" or target.word is None:
            raise ShellSyntaxError(f"redirection {token.value!r} has no target")
        if token.value in ("<<", "<<-"):
            self.heredocs.append((target.word.text, token.value == "<<-"))
        return Redirect(token.value, target.word, token.fd)


def _is_assignment(word: Word) -> bool:
    name, eq, _ = word.raw.partition("=")
    return bool(eq) and name.isidentifier() and not word.raw.startswith("=")
