"""Permission rules: allow / ask / deny a tool, optionally only for some arguments.

A rule is written ``tool`` or ``tool(pattern)``:

- ``bash(git status)`` — exactly that command; ``bash(npm test:*)`` — ``npm test`` and
  ``npm test`` followed by anything; ``bash(git *)`` — ``*`` matches any text. A compound
  command (``a && b``, ``a | b``, ``$(...)``...) is allowed only when *every* simple
  command in it is allowed, and denied or asked when *any* part is.
- ``read(~/.ssh/**)``, ``write(src/**)``, ``edit(/etc/**)`` — path globs: ``*`` matches
  within one path segment, ``**`` across segments, ``?`` one character. A relative pattern
  starts at the workspace, ``~/`` at the home directory, ``/`` at the filesystem root; a
  pattern without any ``/`` (``*.pem``, ``.env``) matches that file name in any directory.
  A pattern also matches everything below a directory it matches, and ``dir/**`` matches
  ``dir`` itself.
- the tool name itself may hold ``*`` (``mcp__github__*``).
- tool names match in any case: ``Bash(git status)`` and ``Write(*.txt)`` (as other
  agents and the Agent Skills ``allowed-tools`` field spell them) are ``bash(...)`` and
  ``write(...)``. A rule naming no tool the agent has is kept (the tool may come later,
  from an MCP server or a plugin); `unknown_tool_rules` finds them, so a face can warn.
- ``web_fetch(domain:example.com)`` — pages of that host; ``web_fetch(domain:*.example.com)``
  — of any host below it (not ``example.com`` itself). Host names match in any case and
  without a trailing dot; a ``web_fetch`` pattern that is not ``domain:HOST`` is a
  `ValueError` when parsed.
- ``\\*`` is a literal ``*`` in any pattern.

When several rules match, deny beats ask beats allow (`RuleSet.evaluate`). An allow rule
whose pattern has a wildcard (or no pattern) is *broad*: the gate still asks for commands
the classifier marks dangerous, unless an exact rule allows them.

**File rules are one family per kind of access** (`FILE_FAMILIES`): a rule for ``read``,
``grep``, ``find`` or ``ls`` applies to all four (``deny read(.env)`` also hides ``.env``
from ``grep``), and a rule for ``edit`` or ``write`` applies to both. Path patterns are
matched against every spelling of the file (as named, and with every symlink resolved).

A pattern is compiled when the rule is parsed (`parse_rule`, `RuleSet.add`): an invalid
glob (``read([z-a])``) is a `ValueError` there, so matching never raises.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

__all__ = [
    "FILE_FAMILIES",
    "Evaluation",
    "Rule",
    "RuleAction",
    "RuleSet",
    "Subject",
    "parse_rule",
    "unknown_tool_rules",
]


class RuleAction(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


_RULE = re.compile(r"^\s*([A-Za-z0-9_.*:?\[\]-]+)\s*(?:\((.*)\))?\s*$", re.S)

FILE_FAMILIES: dict[str, str] = {
    "read": "read",
    "grep": "read",
    "find": "read",
    "ls": "read",
    "edit": "edit",
    "write": "edit",
}
"""The built-in file tools and the access family each belongs to: a rule naming any
tool of a family applies to every tool of that family."""

_COMMAND_TOOLS = frozenset({"bash", "monitor"})
"""Tools whose rule patterns are shell-command patterns (never path globs)."""

_DOMAIN_TOOLS = frozenset({"web_fetch"})
"""Tools whose rule patterns are ``domain:HOST`` patterns."""


@dataclass(frozen=True)
class Rule:
    """One rule. ``source`` says where it came from: ``user``, ``project``, ``local``
    (settings files), ``flag`` (command line), ``session`` (allow always), ``sdk`` or a
    plugin's name."""

    action: RuleAction
    tool: str
    pattern: str | None = None
    source: str = "sdk"

    @property
    def text(self) -> str:
        """The rule as written: ``bash(npm test:*)``."""
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    @property
    def broad(self) -> bool:
        """True when the rule covers more than one exact argument."""
        return self.pattern is None or re.search(r"(?<!\\)\*", self.pattern) is not None

    def applies_to(self, tool_name: str) -> bool:
        """Whether the rule covers calls of ``tool_name``: its own name, a name its
        wildcard matches, or a file tool of the same family (`FILE_FAMILIES`). Names
        are compared without regard to case."""
        mine, theirs = self.tool.casefold(), tool_name.casefold()
        if any(ch in mine for ch in "*?["):
            return fnmatch.fnmatchcase(theirs, mine)
        if mine == theirs:
            return True
        family = FILE_FAMILIES.get(mine)
        return family is not None and family == FILE_FAMILIES.get(theirs)

    def __str__(self) -> str:
        return f"{self.action.value} {self.text}"


def parse_rule(text: str, action: RuleAction | str, source: str = "sdk") -> Rule:
    """Parse ``tool`` or ``tool(pattern)``. Raises `ValueError` with a one-line message."""
    act = RuleAction(action) if not isinstance(action, RuleAction) else action
    if not isinstance(text, str):
        raise ValueError(f"invalid permission rule {text!r}: expected a string")
    match = _RULE.match(text)
    if match is None:
        raise ValueError(
            f"invalid permission rule {text!r}: expected 'tool' or 'tool(pattern)', "
            "e.g. 'bash(git status)' or 'read(~/.ssh/**)'"
        )
    tool, pattern = match.group(1), match.group(2)
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise ValueError(f"invalid permission rule {text!r}: empty pattern in parentheses")
        for kind in _pattern_kinds(tool):
            try:
                re.compile(_pattern_regex(pattern, kind, "/workspace", "/home"), re.S)
            except (re.error, RecursionError, OverflowError) as exc:
                raise ValueError(
                    f"invalid permission rule {text!r}: bad pattern ({_one_line(exc)})"
                ) from None
    return Rule(act, tool, pattern, source)


def _pattern_kinds(tool: str) -> tuple[str, ...]:
    """The forms a rule for ``tool`` is matched in: commands for shell tools, host names
    for the web tools, paths for everything else (any tool with a ``path`` argument is
    matched by path)."""
    name = tool.casefold()
    if name in _DOMAIN_TOOLS:
        return ("domain",)
    return ("command",) if name in _COMMAND_TOOLS else ("command", "path")


def unknown_tool_rules(rules: Iterable[Rule], tool_names: Iterable[str]) -> list[Rule]:
    """The rules that name no tool of ``tool_names`` (in any case, counting file
    families), in order. The tools rules have a syntax for (the file tools of
    `FILE_FAMILIES`, ``bash``, ``monitor``) always count as known, offered or not. A
    rule whose name has a wildcard never counts as unknown, nor does one for an MCP tool
    (``mcp__...``: its server may connect later) or an MCP server's sampling
    (``mcp_sampling__...``)."""
    names = [*tool_names, *FILE_FAMILIES, *_COMMAND_TOOLS, *_DOMAIN_TOOLS]
    return [
        rule
        for rule in rules
        if not any(ch in rule.tool for ch in "*?[")
        and not rule.tool.casefold().startswith(("mcp__", "mcp_sampling__"))
        and not any(rule.applies_to(name) for name in names)
    ]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


SubjectKind = Literal["command", "path", "text", "domain"]


@dataclass(frozen=True)
class Subject:
    """What a rule pattern is matched against for one call.

    ``command``: one simple shell command; ``path``: one file, as every absolute spelling
    it has (normalised and symlink-resolved); ``domain``: the host name a web request
    goes to; ``text``: any other argument text. For deny and ask a match of any value
    counts; for allow all values must match.
    """

    kind: SubjectKind
    values: tuple[str, ...]

    @classmethod
    def command(cls, text: str) -> Subject:
        return cls("command", (text,))

    @classmethod
    def text(cls, text: str) -> Subject:
        return cls("text", (text,))

    @classmethod
    def domain(cls, host: str) -> Subject:
        """The host a web request goes to, in the form rules match (lower case, no
        trailing dot)."""
        return cls("domain", (host.casefold().rstrip("."),))


@dataclass
class Evaluation:
    """The rules that matched one call: the first deny, the first ask, and whether allow
    rules cover every subject (``allowed``), exactly (``exact``)."""

    deny: Rule | None = None
    ask: Rule | None = None
    allow: Rule | None = None
    allowed: bool = False
    exact: bool = False
    unmatched: list[str] = field(default_factory=list)

    @property
    def action(self) -> RuleAction | None:
        """The winning action: deny beats ask beats allow; None when no rule decides."""
        if self.deny is not None:
            return RuleAction.DENY
        if self.ask is not None:
            return RuleAction.ASK
        if self.allowed:
            return RuleAction.ALLOW
        return None

    @property
    def matched(self) -> Rule | None:
        return self.deny or self.ask or (self.allow if self.allowed else None)


class RuleSet:
    """An ordered collection of rules, matched relative to ``workspace`` and ``home``."""

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        workspace: str | os.PathLike[str] = ".",
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.workspace = os.path.abspath(os.fspath(workspace))
        self.home = os.path.abspath(os.fspath(home)) if home is not None else str(Path.home())
        self._rules: list[Rule] = []
        self._compiled: dict[str, re.Pattern[str]] = {}
        for rule in rules:
            self.add(rule)

    # ----- editing

    def add(
        self, rule: Rule | str, action: RuleAction | str | None = None, *, source: str = "sdk"
    ) -> Rule:
        """Add a rule (a `Rule`, or its text with ``action``); returns it. Duplicates are
        kept once."""
        if isinstance(rule, str):
            if action is None:
                raise ValueError("add(text) needs an action: 'allow', 'ask' or 'deny'")
            rule = parse_rule(rule, action, source)
        if rule.pattern is not None:
            for kind in _pattern_kinds(rule.tool):
                try:
                    self._regex(rule.pattern, kind)
                except (re.error, RecursionError, OverflowError) as exc:
                    raise ValueError(
                        f"invalid permission rule {rule.text!r}: bad pattern ({_one_line(exc)})"
                    ) from None
        if rule not in self._rules:
            self._rules.append(rule)
        return rule

    def allow(self, *texts: str, source: str = "sdk") -> None:
        for text in texts:
            self.add(text, RuleAction.ALLOW, source=source)

    def ask(self, *texts: str, source: str = "sdk") -> None:
        for text in texts:
            self.add(text, RuleAction.ASK, source=source)

    def deny(self, *texts: str, source: str = "sdk") -> None:
        for text in texts:
            self.add(text, RuleAction.DENY, source=source)

    def remove(self, rule: Rule) -> bool:
        if rule in self._rules:
            self._rules.remove(rule)
            return True
        return False

    def remove_source(self, source: str) -> list[Rule]:
        """Remove every rule from ``source``; returns them."""
        gone = [r for r in self._rules if r.source == source]
        self._rules = [r for r in self._rules if r.source != source]
        return gone

    def __iter__(self) -> Iterator[Rule]:
        return iter(list(self._rules))

    def __len__(self) -> int:
        return len(self._rules)

    def for_tool(self, tool_name: str) -> list[Rule]:
        return [r for r in self._rules if r.applies_to(tool_name)]

    # ----- matching

    def evaluate(
        self,
        tool_name: str,
        subjects: Sequence[Subject],
        *,
        actions: Iterable[RuleAction] = tuple(RuleAction),
    ) -> Evaluation:
        """Match the rules for ``tool_name`` against the call's ``subjects``.

        A call without subjects is matched by rules without a pattern only. Only the
        ``actions`` given are considered (the gate asks file rules for deny/ask only
        when judging a shell command's reads and writes).
        """
        wanted = set(actions)
        result = Evaluation()
        rules = self.for_tool(tool_name)
        for action in (RuleAction.DENY, RuleAction.ASK):
            if action not in wanted:
                continue
            for rule in (r for r in rules if r.action is action):
                if rule.pattern is None or any(
                    self._matches(rule, s.kind, v, on_error=True)
                    for s in subjects
                    for v in s.values
                ):
                    setattr(result, action.value, rule)
                    break
        if RuleAction.ALLOW not in wanted:
            return result
        allows = [r for r in rules if r.action is RuleAction.ALLOW]
        if not allows:
            return result
        exact = True
        first: Rule | None = None
        for subject in subjects or [Subject("text", ())]:
            covering = [
                r
                for r in allows
                if r.pattern is None
                or (
                    subject.values
                    and all(
                        self._matches(r, subject.kind, v, on_error=False) for v in subject.values
                    )
                )
            ]
            if not covering:
                result.unmatched.append(subject.values[0] if subject.values else "")
                continue
            first = first or covering[0]
            exact = exact and any(not r.broad for r in covering)
        result.allowed = not result.unmatched
        result.allow = first
        result.exact = result.allowed and exact
        return result

    def matching(self, tool_name: str, subject: Subject, action: RuleAction) -> list[Rule]:
        """Every ``action`` rule for ``tool_name`` that matches ``subject`` (a rule without
        a pattern always does). A pattern that cannot be used counts as a match."""
        return [
            rule
            for rule in self.for_tool(tool_name)
            if rule.action is action
            and (
                rule.pattern is None
                or any(self._matches(rule, subject.kind, v, on_error=True) for v in subject.values)
            )
        ]

    def first_open_match(
        self, tool_name: str, commands: Sequence[str], action: RuleAction
    ) -> Rule | None:
        """The first ``action`` rule for ``tool_name`` whose command pattern matches one of
        ``commands`` followed by any further arguments (``xargs rm`` runs ``rm`` with
        arguments read at run time): it matches as is, or the pattern's literal start
        (before its first ``*``) begins with the command and a space, or the command
        begins with that literal start. Over-approximates, as deny and ask rules must."""
        for rule in self.for_tool(tool_name):
            if rule.action is not action:
                continue
            if rule.pattern is None:
                return rule
            start = _literal_start(rule.pattern)
            for command in commands:
                text = _squash(command)
                if (
                    self._matches(rule, "command", text, on_error=True)
                    or start.startswith(text + " ")
                    or text.startswith(start)
                ):
                    return rule
        return None

    def _matches(self, rule: Rule, kind: SubjectKind, value: str, *, on_error: bool) -> bool:
        """Whether ``rule``'s pattern matches ``value``. Never raises: a pattern that
        cannot be used (only possible for a rule built by hand, not parsed) counts as
        ``on_error`` — a match for deny and ask, no match for allow (fail closed)."""
        assert rule.pattern is not None
        try:
            if kind == "command":
                return self._regex(rule.pattern, "command").fullmatch(_squash(value)) is not None
            if kind == "path":
                return self._regex(rule.pattern, "path").fullmatch(value) is not None
            if kind == "domain":
                host = value.casefold().rstrip(".")
                return (
                    bool(host) and self._regex(rule.pattern, "domain").fullmatch(host) is not None
                )
            return fnmatch.fnmatchcase(value, rule.pattern)
        except (re.error, RecursionError, OverflowError, ValueError):
            return on_error

    def _regex(self, pattern: str, kind: str) -> re.Pattern[str]:
        key = f"{kind}\0{pattern}"
        compiled = self._compiled.get(key)
        if compiled is None:
            source = _pattern_regex(pattern, kind, self.workspace, self.home)
            compiled = self._compiled[key] = re.compile(source, re.S)
        return compiled


def url_host(url: str) -> str:
    """The host an ``http``/``https`` URL names, parsed as the web tools parse it (so
    the rules judge the host the request goes to); "" for anything else."""
    import httpx2

    try:
        parsed = httpx2.URL(url.strip())
    except Exception:
        return ""
    if parsed.scheme not in ("http", "https"):
        return ""
    return parsed.host.casefold().rstrip(".")


def _pattern_regex(pattern: str, kind: str, workspace: str, home: str) -> str:
    """The regular expression (for ``fullmatch``) of a rule pattern matched as ``kind``."""
    if kind == "domain":
        return _domain_regex(pattern)
    return _command_regex(pattern) if kind == "command" else _path_regex(pattern, workspace, home)


def _domain_regex(pattern: str) -> str:
    """``domain:example.com`` → that host; ``domain:*.example.com`` → any host below it;
    ``domain:*`` → any host. Raises `re.error` for any other form."""
    if not pattern.casefold().startswith("domain:"):
        raise re.error("a web_fetch rule's pattern is domain:HOST, e.g. domain:example.com")
    host = pattern[len("domain:") :].strip().casefold().rstrip(".")
    if host == "*":
        return r"[^/\s]+"
    below = host.startswith("*.")
    name = host[2:] if below else host
    if not name or any(ch in name for ch in "*?[]/\\:@ \t") or ".." in name:
        raise re.error(
            f"not a host name: {host!r} (write domain:example.com or domain:*.example.com)"
        )
    return (r"(?:[^./\s]+\.)+" if below else "") + re.escape(name)


def _path_regex(pattern: str, workspace: str, home: str) -> str:
    if "/" not in pattern:
        return r"(?:.*/)?" + _glob_regex(pattern) + r"(?:/.*)?"
    if pattern == "~" or pattern.startswith("~/"):
        root, rest = home, pattern[2:]
    elif pattern.startswith("/"):
        root, rest = "", pattern.lstrip("/")
    else:
        root, rest = workspace, pattern[2:] if pattern.startswith("./") else pattern
    rest = rest.rstrip("/")
    while rest.endswith("/**"):  # "dir/**" also covers "dir" itself
        rest = rest[:-3]
    prefix = re.escape(root.rstrip("/")) + "/"
    if not rest:
        return re.escape(root.rstrip("/") or "/") + r"(?:/.*)?"
    return prefix + _glob_regex(rest) + r"(?:/.*)?"


def _squash(text: str) -> str:
    return " ".join(text.split())


def _literal_start(pattern: str) -> str:
    """The text a command pattern starts with before its first wildcard."""
    pattern = _squash(pattern)
    if pattern.endswith(":*"):
        pattern = pattern[:-2].rstrip()
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch == "*":
            break
        out.append(ch)
        i += 1
    return "".join(out)


def _command_regex(pattern: str) -> str:
    pattern = _squash(pattern)
    tail = ""
    if pattern.endswith(":*"):
        pattern, tail = pattern[:-2].rstrip(), r"(?:\s.*)?"
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else re.escape(ch))
        i += 1
    return "".join(out) + tail


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob[i] == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif glob.startswith("**/", i):
            out.append(r"(?:[^/]*/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
