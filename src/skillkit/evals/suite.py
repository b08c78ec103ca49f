"""Eval suites: a YAML file of cases, each a prompt, files and expectations.

    name: greeting
    models: [anthropic:claude-haiku-4-5]      # default for --models
    judge: {model: anthropic:claude-haiku-4-5} # default model of every judge check
    skills: [skills/]                          # skill folders placed in every workspace
    n: 1                                       # repeats of every case (a case may say its own)
    cases:
      - name: says-hello
        prompt: Greet the user.
        files: {notes.txt: "hello"}            # written into the case's scratch workspace
        n: 3
        expect:
          - contains: Hello
          - skill_loaded: greeting
          - judge: {rubric: "Is the greeting friendly?"}

`load_suite` reads and checks the whole file; every problem is a `SuiteError` whose
message names the file, the line and the field. A valid suite is plain frozen data
(picklable, so a Ray worker gets its own copy).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

__all__ = [
    "CHECK_KINDS",
    "Case",
    "Check",
    "Suite",
    "SuiteError",
    "load_suite",
    "parse_suite",
]

#: Every expectation kind and the one-line form of its value (for error messages).
CHECK_KINDS: dict[str, str] = {
    "exact": "the whole answer, as text",
    "contains": "a text the answer contains",
    "not_contains": "a text the answer must not contain",
    "regex": "a regular expression searched in the answer",
    "json_schema": "a JSON schema the answer (parsed as JSON) must match",
    "python": "'module:function' called with the run, returning a verdict",
    "judge": "{rubric: TEXT, model: MODEL (optional), threshold: 0..1 (optional)}",
    "skill_loaded": "a skill name the run loaded",
    "skill_not_loaded": "a skill name the run did not load",
    "tool_called": "a tool name, or {name: TOOL, args: {...}} (args: a subset that must match)",
    "action_called": "{skill: NAME, action: NAME, args: {...} (optional)}",
    "tool_not_called": "a tool name the run never called",
    "max_turns": "the most model calls the run may make",
    "max_cost": "the most USD the run may cost",
    "file": "{path: PATH, exists: BOOL, contains: TEXT, exact: TEXT, regex: RE, json_schema: {}}",
}

_FILE_KEYS = frozenset({"path", "exists", "contains", "exact", "regex", "json_schema"})
_CASE_KEYS = frozenset({"name", "prompt", "files", "expect", "n", "session", "max_turns"})
_SUITE_KEYS = frozenset({"name", "cases", "models", "judge", "skills", "n", "max_turns"})


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML was built with it (a suite of thousands of cases loads
in a fraction of the time); the same nodes, with their lines, either way."""


class SuiteError(ValueError):
    """A suite file cannot be used; the message names the file, line and field."""


@dataclass(frozen=True)
class Check:
    """One expectation of a case: its ``kind`` (a `CHECK_KINDS` key) and ``value``
    (already checked for that kind). ``label`` names it in reports."""

    kind: str
    value: Any
    line: int = 0

    @property
    def label(self) -> str:
        shown = self.value
        if isinstance(shown, Mapping):
            shown = shown.get("rubric") or shown.get("name") or shown.get("path") or shown
        text = shown if isinstance(shown, str) else json.dumps(shown, sort_keys=True)
        if len(text) > 40:
            text = text[:39] + "…"
        return f"{self.kind}: {text}"


@dataclass(frozen=True)
class Case:
    """One case: the prompt, ``files`` (relative path → text) placed in its scratch
    workspace, ``history`` (earlier user/assistant turns the run starts from), its
    checks and how many times it runs (``n``)."""

    name: str
    prompt: str
    checks: tuple[Check, ...]
    files: tuple[tuple[str, str], ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    n: int = 1
    max_turns: int | None = None


@dataclass(frozen=True)
class Suite:
    """A loaded suite. ``base`` is the folder of the suite file (``python`` checks'
    modules and ``skills`` folders are found from it); ``digest`` is the SHA-256 of the
    file's text, recorded with every run (a resumed run must use the same suite)."""

    name: str
    cases: tuple[Case, ...]
    models: tuple[str, ...] = ()
    judge_model: str | None = None
    skills: tuple[str, ...] = ()
    base: str = "."
    digest: str = ""
    source: str = ""
    case_index: Mapping[str, int] = field(default_factory=dict, compare=False)

    def case(self, name: str) -> Case:
        return self.cases[self.case_index[name]]


def load_suite(path: str | Path) -> Suite:
    """Read and check the suite in ``path``. `SuiteError` for anything wrong, `OSError`
    never (an unreadable file is a `SuiteError` too)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read the suite: {exc}") from None
    return parse_suite(text, source=str(path), base=str(path.resolve().parent))


def parse_suite(text: str, *, source: str = "<suite>", base: str = ".") -> Suite:
    """Check a suite given as YAML text (see `load_suite`)."""
    try:
        loader = _LOADER(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SuiteError(f"{source}{where}: not valid YAML: {problem}") from None
    reader = _Reader(source, node)
    if not isinstance(data, dict):
        raise reader.error((), "a suite is a mapping with a 'cases' list")
    reader.only(data, (), _SUITE_KEYS, "suite")
    cases_data = data.get("cases")
    if not isinstance(cases_data, list) or not cases_data:
        raise reader.error(("cases",), "'cases' must be a non-empty list")
    default_n = reader.positive(data.get("n", 1), ("n",), "n")
    default_turns = (
        reader.positive(data["max_turns"], ("max_turns",), "max_turns")
        if data.get("max_turns") is not None
        else None
    )
    cases: list[Case] = []
    names: dict[str, int] = {}
    for index, item in enumerate(cases_data):
        case = _case(reader, item, ("cases", index), default_n, default_turns)
        if case.name in names:
            raise reader.error(("cases", index, "name"), f"case name '{case.name}' is used twice")
        names[case.name] = index
        cases.append(case)
    models = reader.strings(data.get("models", []), ("models",), "models")
    judge = data.get("judge")
    judge_model: str | None = None
    if judge is not None:
        if isinstance(judge, str):
            judge_model = judge
        elif isinstance(judge, dict) and isinstance(judge.get("model"), str):
            reader.only(judge, ("judge",), frozenset({"model"}), "judge")
            judge_model = judge["model"]
        else:
            raise reader.error(("judge",), "'judge' is a model name or {model: MODEL}")
    skills = reader.strings(data.get("skills", []), ("skills",), "skills")
    name = data.get("name", PurePosixPath(source).stem)
    if not isinstance(name, str) or not name:
        raise reader.error(("name",), "'name' must be a text")
    return Suite(
        name=name,
        cases=tuple(cases),
        models=tuple(models),
        judge_model=judge_model,
        skills=tuple(skills),
        base=base,
        digest=hashlib.sha256(text.encode()).hexdigest(),
        source=source,
        case_index=names,
    )


def _case(
    reader: _Reader,
    item: Any,
    at: tuple[str | int, ...],
    default_n: int,
    default_turns: int | None,
) -> Case:
    if not isinstance(item, dict):
        raise reader.error(at, "a case is a mapping with 'name', 'prompt' and 'expect'")
    reader.only(item, at, _CASE_KEYS, "case")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise reader.error((*at, "name"), "every case needs a 'name' (a text)")
    prompt = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise reader.error((*at, "prompt"), f"case '{name}' needs a 'prompt' (a text)")
    files = _files(reader, item.get("files", {}), (*at, "files"))
    history = _history(reader, item.get("session"), (*at, "session"))
    expect = item.get("expect")
    if not isinstance(expect, list) or not expect:
        raise reader.error((*at, "expect"), f"case '{name}' needs an 'expect' list")
    checks = tuple(_check(reader, e, (*at, "expect", i)) for i, e in enumerate(expect))
    n = reader.positive(item.get("n", default_n), (*at, "n"), "n")
    turns = item.get("max_turns", default_turns)
    if turns is not None:
        turns = reader.positive(turns, (*at, "max_turns"), "max_turns")
    return Case(name, prompt, checks, files, history, n, turns)


def _files(reader: _Reader, value: Any, at: tuple[str | int, ...]) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise reader.error(at, "'files' maps relative paths to their text")
    out: list[tuple[str, str]] = []
    for key, text in value.items():
        where = (*at, key)
        if not isinstance(key, str) or not isinstance(text, str):
            raise reader.error(where, "'files' maps relative paths to their text")
        _relative(reader, key, where)
        out.append((key, text))
    return tuple(out)


def _relative(reader: _Reader, path: str, at: tuple[str | int, ...]) -> None:
    """A workspace path must stay inside the workspace."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise reader.error(at, f"'{path}' must be a relative path inside the workspace")


def _history(reader: _Reader, value: Any, at: tuple[str | int, ...]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise reader.error(at, "'session' is a list of {user: TEXT} / {assistant: TEXT} turns")
    out: list[tuple[str, str]] = []
    for index, turn in enumerate(value):
        if (
            not isinstance(turn, dict)
            or len(turn) != 1
            or next(iter(turn)) not in ("user", "assistant")
            or not isinstance(next(iter(turn.values())), str)
        ):
            raise reader.error(
                (*at, index), "a 'session' turn is {user: TEXT} or {assistant: TEXT}"
            )
        ((role, text),) = turn.items()
        out.append((role, text))
    return tuple(out)


def _check(reader: _Reader, item: Any, at: tuple[str | int, ...]) -> Check:
    if not isinstance(item, dict) or len(item) != 1:
        raise reader.error(at, "an expectation is one 'kind: value' pair, e.g. 'contains: Paris'")
    ((kind, value),) = item.items()
    line = reader.line(at)
    where = (*at, kind)
    if kind not in CHECK_KINDS:
        known = ", ".join(CHECK_KINDS)
        raise reader.error(where, f"unknown expectation '{kind}' (known: {known})")
    hint = f"'{kind}' takes {CHECK_KINDS[kind]}"
    match kind:
        case "exact" | "contains" | "not_contains" | "skill_loaded" | "skill_not_loaded":
            if not isinstance(value, str):
                raise reader.error(where, hint)
        case "tool_not_called":
            if not isinstance(value, str) or not value:
                raise reader.error(where, hint)
        case "regex":
            if not isinstance(value, str):
                raise reader.error(where, hint)
            _regex(reader, value, where)
        case "json_schema":
            _schema(reader, value, where)
        case "python":
            if not isinstance(value, str) or not re.fullmatch(r"[\w.]+:\w+", value):
                raise reader.error(where, hint)
        case "judge":
            if isinstance(value, str):
                value = {"rubric": value}
            if not isinstance(value, dict) or not isinstance(value.get("rubric"), str):
                raise reader.error(where, hint)
            reader.only(value, where, frozenset({"rubric", "model", "threshold"}), "judge")
            threshold = value.get("threshold", 0.5)
            if not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
                raise reader.error((*where, "threshold"), "'threshold' is a number from 0 to 1")
            if "model" in value and not isinstance(value["model"], str):
                raise reader.error((*where, "model"), "'model' is a model name")
        case "tool_called":
            if isinstance(value, str):
                value = {"name": value}
            if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                raise reader.error(where, hint)
            reader.only(value, where, frozenset({"name", "args"}), "tool_called")
            if not isinstance(value.get("args", {}), dict):
                raise reader.error((*where, "args"), "'args' is a mapping")
        case "action_called":
            if not isinstance(value, dict) or not all(
                isinstance(value.get(k), str) for k in ("skill", "action")
            ):
                raise reader.error(where, hint)
            reader.only(value, where, frozenset({"skill", "action", "args"}), "action_called")
            if not isinstance(value.get("args", {}), dict):
                raise reader.error((*where, "args"), "'args' is a mapping")
        case "max_turns":
            value = reader.positive(value, where, kind)
        case "max_cost":
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise reader.error(where, hint)
        case "file":
            if not isinstance(value, dict) or not isinstance(value.get("path"), str):
                raise reader.error(where, hint)
            reader.only(value, where, _FILE_KEYS, "file")
            _relative(reader, value["path"], (*where, "path"))
            if "regex" in value:
                _regex(reader, value["regex"], (*where, "regex"))
            if "json_schema" in value:
                _schema(reader, value["json_schema"], (*where, "json_schema"))
            for key in ("contains", "exact"):
                if key in value and not isinstance(value[key], str):
                    raise reader.error((*where, key), f"'{key}' is a text")
            if "exists" in value and not isinstance(value["exists"], bool):
                raise reader.error((*where, "exists"), "'exists' is true or false")
    return Check(kind, value, line)


def _regex(reader: _Reader, value: Any, at: tuple[str | int, ...]) -> None:
    if not isinstance(value, str):
        raise reader.error(at, "a regular expression is a text")
    try:
        re.compile(value)
    except re.error as exc:
        raise reader.error(at, f"not a valid regular expression: {exc}") from None


def _schema(reader: _Reader, value: Any, at: tuple[str | int, ...]) -> None:
    import jsonschema

    if not isinstance(value, dict):
        raise reader.error(at, "a JSON schema is a mapping")
    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as exc:
        raise reader.error(at, f"not a valid JSON schema: {exc.message}") from None


class _Reader:
    """Finds the line of a field (by its path of keys and indexes) for error messages."""

    def __init__(self, source: str, node: yaml.Node | None) -> None:
        self.source = source
        self.node = node

    def line(self, at: tuple[str | int, ...]) -> int:
        node = self.node
        line = node.start_mark.line + 1 if node is not None else 1
        for step in at:
            child: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(step):
                        child = value
                        line = key.start_mark.line + 1
                        break
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(step, int)
                and 0 <= step < len(node.value)
            ):
                child = node.value[step]
                line = child.start_mark.line + 1
            if child is None:
                break
            node = child
        return line

    def error(self, at: tuple[str | int, ...], message: str) -> SuiteError:
        field_name = ".".join(str(step) for step in at) or "suite"
        return SuiteError(f"{self.source}:{self.line(at)}: {field_name}: {message}")

    def only(
        self, data: Mapping[str, Any], at: tuple[str | int, ...], keys: frozenset[str], what: str
    ) -> None:
        for key in data:
            if key not in keys:
                allowed = ", ".join(sorted(keys))
                raise self.error((*at, key), f"unknown {what} field '{key}' (fields: {allowed})")

    def positive(self, value: Any, at: tuple[str | int, ...], name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error(at, f"'{name}' must be a whole number of at least 1")
        return value

    def strings(self, value: Any, at: tuple[str | int, ...], name: str) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.error(at, f"'{name}' is a list of texts")
        return list(value)
