"""The permission gate's knowledge of paths: the absolute path a file tool's input
names, whether it lies in the workspace or an additional directory, every spelling of a
path a rule may match (as written and resolved), and the deny and ask rules that apply
to the files a call touches and to each command a shell command runs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from skillkit.permissions.rules import FILE_FAMILIES, Evaluation, RuleAction, RuleSet, Subject
from skillkit.permissions.shell_paths import realpath
from skillkit.permissions.shell_verdict import ShellVerdict

__all__ = ["GatePaths", "target_path"]


class GatePaths:
    """The path and file-rule part of `skillkit.permissions.gate.PermissionGate`."""

    workspace: str
    home: str
    directories: tuple[str, ...]
    rules: RuleSet

    def path_of(self, tool_input: Mapping[str, Any]) -> str:
        """The absolute, normalised path a file tool's input names (the workspace when the
        tool was given none)."""
        return os.path.normpath(self._joined(tool_input))

    def _joined(self, tool_input: Mapping[str, Any]) -> str:
        """The absolute path a file tool's input names, ``~`` and ``~user`` expanded as
        the file tools expand them, not normalised: a ``..`` after a symbolic link is
        left for the physical resolution (`_path_subject`)."""
        raw = tool_input.get("path", tool_input.get("file_path"))
        text = raw if isinstance(raw, str) and raw else "."
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        elif text.startswith("~") and "\0" not in text:
            text = os.path.expanduser(text)
        return os.path.join(self.workspace, text)

    def inside(self, path: str) -> bool:
        return any(path == d or path.startswith(d.rstrip("/") + "/") for d in self.directories)

    def _absolute(self, path: str | os.PathLike[str]) -> str:
        text = os.fspath(path)
        if "\0" in text:
            raise ValueError("NUL in path")
        return os.path.join(self.workspace, text)

    def _path_subject(self, path: str) -> Subject:
        """Every absolute spelling of ``path``: normalised as written, and resolved the
        way the kernel resolves it (symbolic links followed, ``..`` after them too)."""
        normal = os.path.normpath(path)
        real = realpath(path)
        return Subject("path", (normal,) if real == normal else (normal, real))

    def display_path(self, path: str) -> str:
        if self.inside(path) and path.startswith(self.workspace):
            return os.path.relpath(path, self.workspace)
        if path.startswith(self.home + "/"):
            return "~" + path[len(self.home) :]
        return path

    def _matching_rules(
        self,
        tool_name: str,
        subjects: list[Subject],
        tool_input: Mapping[str, Any],
        tool: object | None,
        family: str,
        verdict: ShellVerdict | None,
    ) -> Evaluation:
        """The rules that match a call: its own subjects; for a tool of a file ``family``
        (``read``/``edit``) the deny and ask rules of that family for the file it says it
        touches; for a shell command the rules for each command as it runs and for the
        files it reads and writes."""
        found = self.rules.evaluate(tool_name, subjects)
        target = target_path(tool, tool_input) if tool is not None else ""
        if family and target:
            # a tool that reads or writes a file it names: the file rules apply to it
            only = (RuleAction.DENY, RuleAction.ASK)
            subject = self._path_subject(target)
            _merge_file_rules(found, [self.rules.evaluate(family, [subject], actions=only)])
        if verdict is not None:
            if not found.allowed:
                self._allow_whole_command(tool_name, tool_input, found)
            _merge_file_rules(found, [*self._command_forms(tool_name, verdict)])
            _merge_file_rules(found, self._file_rules(verdict))
        return found

    def _allow_whole_command(
        self, tool_name: str, tool_input: Mapping[str, Any], found: Evaluation
    ) -> None:
        """An exact allow rule naming the whole command line (what "allow always" adds
        for a compound command or one with redirections) allows it, although its parts
        are judged one by one; deny and ask rules for the parts still win."""
        command = tool_input.get("command")
        if not isinstance(command, str):
            return
        whole = self.rules.evaluate(
            tool_name, [Subject.command(command)], actions=(RuleAction.ALLOW,)
        )
        if whole.allowed and whole.exact:
            found.allow, found.allowed, found.exact = whole.allow, True, True
            found.unmatched.clear()

    def _command_forms(self, tool_name: str, verdict: ShellVerdict) -> list[Evaluation]:
        """Deny and ask rules matched against each command as it runs: quotes removed,
        wrappers unwrapped, the program without its folder (``\\rm``, ``"rm"``,
        ``/bin/rm``, ``env rm``, ``timeout 5 rm`` are all ``rm``); a command that gets
        further arguments when it runs (``xargs rm``) matches every rule it could."""
        only = (RuleAction.DENY, RuleAction.ASK)
        out: list[Evaluation] = []
        # every tool that runs shell commands (``monitor`` too) meets bash's deny and ask
        # rules: a command refused as ``bash`` is not run another way
        names = [
            name
            for name in dict.fromkeys((tool_name, "bash"))
            if any(r.action is not RuleAction.ALLOW for r in self.rules.for_tool(name))
        ]
        if not names:
            return out  # no deny or ask rule to match: the common case, fast
        forms = [Subject.command(form) for form in verdict.forms]
        written = [Subject.command(text) for text in verdict.commands]
        for name in names:
            # the commands as written were matched for the tool itself already
            subjects = forms if name == tool_name else [*written, *forms]
            if subjects:
                out.append(self.rules.evaluate(name, subjects, actions=only))
            if verdict.open_forms:
                found = Evaluation()
                for action in only:
                    rule = self.rules.first_open_match(name, verdict.open_forms, action)
                    setattr(found, action.value, rule)
                out.append(found)
        return out

    def _file_rules(self, verdict: ShellVerdict) -> list[Evaluation]:
        """File deny/ask rules applied to the paths a shell command reads and writes."""
        only = (RuleAction.DENY, RuleAction.ASK)
        out = []
        reads = [self._path_subject(p) for p in verdict.reads if p is not None]
        writes = [self._path_subject(p) for p in verdict.writes if p is not None]
        if reads:
            out.append(self.rules.evaluate("read", reads, actions=only))
        for tool_name in ("write", "edit"):
            if writes:
                out.append(self.rules.evaluate(tool_name, writes, actions=only))
        return out

    def _hidden_paths(self, verdict: ShellVerdict) -> str:
        """Why a shell command must ask because file deny rules exist and it reads or
        writes paths the classifier cannot see, or reads whole directories a deny rule
        reaches into; "" when neither."""
        denies = [
            r
            for name in ("read", "edit", "write")
            for r in self.rules.for_tool(name)
            if r.action is RuleAction.DENY
        ]
        if not denies:
            return ""
        if verdict.unresolved:
            return (
                "the command reads or writes a path known only when it runs, "
                "so file deny rules cannot be checked"
            )
        for root in verdict.recursive_reads:
            for rule in denies:
                if rule.tool != "read" and not any(ch in rule.tool for ch in "*?["):
                    continue
                if _reaches_into(rule.pattern, root, self.workspace, self.home):
                    return f"the command reads everything below {root}, which `{rule}` protects"
        return ""


def _reaches_into(pattern: str | None, root: str, workspace: str, home: str) -> bool:
    """Whether a path rule's pattern may match something below directory ``root``."""
    if pattern is None or "/" not in pattern.rstrip("/"):
        return True  # no pattern, or a file name matched in any directory
    if pattern == "~" or pattern.startswith("~/"):
        absolute = home + pattern[1:]
    elif pattern.startswith("/"):
        absolute = pattern
    else:
        absolute = os.path.join(workspace, pattern[2:] if pattern.startswith("./") else pattern)
    literal = re.split(r"[*?\[]", absolute, maxsplit=1)[0].replace("\\", "")
    root = os.path.normpath(root)
    return (
        os.path.normpath(literal or "/") == root
        or literal.startswith(root.rstrip("/") + "/")
        or root.startswith(literal)
    )


def _merge_file_rules(into: Evaluation, others: list[Evaluation]) -> None:
    for other in others:
        if into.deny is None and other.deny is not None:
            into.deny = other.deny
        if into.ask is None and other.ask is not None:
            into.ask = other.ask


def target_path(tool: object, tool_input: Mapping[str, Any]) -> str:
    """The file a tool (not one of the built-in file tools) says a call touches
    (``tool.target_path(input)``); "" when it says none or fails."""
    target = getattr(tool, "target_path", None)
    if not callable(target) or getattr(tool, "name", "") in FILE_FAMILIES:
        return ""
    try:
        found = target(tool_input)
    except Exception:
        return ""
    return found if isinstance(found, str) else ""
