"""Deterministic actions: named commands a skill declares, run exactly as declared.

An action lives under ``metadata.skillkit.actions``::

    metadata:
      skillkit:
        actions:
          count-lines:
            description: Count the lines of a file
            params:
              path: {type: string, description: File to count}
              max: {type: integer, default: 0, flag: --max}
            command: [wc, -l, "{path}"]     # or: script: scripts/count.py
            timeout: 30                     # seconds (default 60)
            cwd: project                    # project (default), skill, or a folder in the skill

The command is an argument list, never a shell string. Each argument value is validated
against its declared type and becomes whole argument(s): ``; rm -rf ~`` reaches the
program as those exact characters. An element that is exactly ``{param}`` becomes the
value (dropped when the value is absent; a list becomes several arguments; with a
``flag`` it becomes ``flag value``, or just ``flag`` for a true boolean). Placeholders
inside a longer element (``--name={name}``) are formatted into that one argument.
Parameters the command does not mention are appended in declaration order.

`run_action` starts the command in its own process group and kills the whole group when
the timeout passes or the run is aborted.
"""

from __future__ import annotations

import os
import re
import string
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillkit.skills.diagnostics import Findings

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "ActionError",
    "ActionParam",
    "ActionSpec",
    "ParamType",
    "parse_actions",
    "parse_command_arguments",
]

ParamType = Literal["string", "integer", "number", "boolean", "array"]
PARAM_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "array")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0

_ACTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_PARAM_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_INTERPRETERS = {
    ".py": (sys.executable,),
    ".sh": ("sh",),
    ".bash": ("bash",),
    ".js": ("node",),
    ".mjs": ("node",),
    ".rb": ("ruby",),
    ".pl": ("perl",),
}
_ACTION_KEYS = frozenset(
    {"description", "params", "command", "script", "args", "timeout", "cwd", "env"}
)
_PARAM_KEYS = frozenset({"type", "description", "required", "default", "enum", "flag"})


class ActionError(Exception):
    """An action cannot run: unknown action, bad arguments, or the command failed to start.

    The message is one line meant for the user (or the model)."""


@dataclass(frozen=True, slots=True)
class ActionParam:
    """One typed parameter. ``required`` is false when a default is declared."""

    name: str
    type: ParamType = "string"
    description: str = ""
    required: bool = True
    default: Any = None
    enum: tuple[Any, ...] | None = None
    flag: str | None = None


# One argv element: literal text and placeholder names, in order.
Template = tuple[tuple[str, bool], ...]


@dataclass(frozen=True, eq=False)
class ActionSpec:
    """A parsed action declaration of one skill."""

    name: str
    description: str
    skill_dir: Path
    params: tuple[ActionParam, ...] = ()
    program: tuple[str, ...] = ()
    template: tuple[Template, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    cwd: str = "project"
    env: Mapping[str, str] = field(default_factory=dict)

    def param(self, name: str) -> ActionParam | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @cached_property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model of this action's arguments (its schema is what a model sees)."""
        from skillkit.skills._argmodel import build_args_model

        return build_args_model(self)

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check raw argument values (from JSON or the command line) against the params.

        Returns the typed values with defaults filled in; raises `ActionError`.
        """
        from pydantic import ValidationError

        try:
            model = self.args_model.model_validate(dict(values))
        except ValidationError as exc:
            problems = []
            for item in exc.errors():
                where = ".".join(str(p) for p in item.get("loc", ())) or "arguments"
                problems.append(f"{where}: {item.get('msg', 'invalid')}")
            raise ActionError(f"action '{self.name}': " + "; ".join(problems)) from None
        return model.model_dump(by_alias=True)

    def argv(self, values: Mapping[str, Any]) -> list[str]:
        """The exact argument list for validated ``values`` (see the module docs)."""
        argv = list(self.program)
        mentioned: set[str] = set()
        for element in self.template:
            names = [text for text, is_name in element if is_name]
            mentioned.update(names)
            if len(element) == 1 and element[0][1]:
                argv.extend(self._expand(element[0][0], values.get(element[0][0])))
                continue
            if any(values.get(n) is None for n in names):
                continue
            argv.append("".join(_render(values[t]) if is_name else t for t, is_name in element))
        for p in self.params:
            if p.name not in mentioned:
                argv.extend(self._expand(p.name, values.get(p.name)))
        return argv

    def _expand(self, name: str, value: Any) -> list[str]:
        if value is None:
            return []
        spec = self.param(name)
        flag = spec.flag if spec is not None else None
        items = value if isinstance(value, list) else [value]
        out: list[str] = []
        for item in items:
            if flag is None:
                out.append(_render(item))
            elif isinstance(item, bool):
                out.extend([flag] if item else [])
            else:
                out.extend([flag, _render(item)])
        return out

    def working_directory(self, project: Path) -> Path:
        if self.cwd == "project":
            return project
        if self.cwd == "skill":
            return self.skill_dir
        return self.skill_dir / self.cwd

    def describe_command(self) -> str:
        """The command as a reader sees it (placeholders kept), for listings."""
        parts = list(self.program) + [
            "".join("{" + t + "}" if is_name else t for t, is_name in e) for e in self.template
        ]
        return " ".join(parts)


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --------------------------------------------------------------------------- parsing


def parse_actions(
    metadata: Mapping[str, Any], skill_dir: Path, findings: Findings
) -> tuple[ActionSpec, ...]:
    """The actions declared under ``metadata.skillkit.actions``; never raises.

    A malformed action is a finding; in lenient mode it is dropped and the rest load.
    """
    own = metadata.get("skillkit")
    if not isinstance(own, Mapping) or own.get("actions") is None:
        return ()
    declared = own["actions"]
    if not isinstance(declared, Mapping):
        findings.problem("metadata.skillkit.actions", "must be a mapping of action names")
        return ()
    specs: list[ActionSpec] = []
    for name, body in declared.items():
        where = f"metadata.skillkit.actions.{name}"
        local = Findings(findings.path, strict=True)
        spec = _parse_action(str(name), body, skill_dir, where, local)
        for item in local.items:
            if findings.strict:
                findings.items.append(item)
            else:
                findings.warning(item.field, f"{item.message}; action skipped")
        if spec is not None and not local.errors:
            specs.append(spec)
    return tuple(specs)


def _parse_action(
    name: str, body: Any, skill_dir: Path, where: str, findings: Findings
) -> ActionSpec | None:
    if not _ACTION_NAME.match(name):
        findings.error(where, "action names use lowercase letters, digits, '-' and '_' (max 64)")
    if not isinstance(body, Mapping):
        findings.error(where, "must be a mapping (description, params, command or script...)")
        return None
    for key in body:
        if key not in _ACTION_KEYS:
            findings.error(
                f"{where}.{key}", f"unknown key (known: {', '.join(sorted(_ACTION_KEYS))})"
            )
    description = body.get("description")
    if not isinstance(description, str) or not description.strip():
        findings.error(f"{where}.description", "is required text")
        description = ""
    params = _parse_params(body.get("params"), f"{where}.params", findings)
    known = {p.name for p in params}
    program, raw_template = _parse_program(body, skill_dir, where, findings)
    template: list[Template] = []
    for index, element in enumerate(raw_template):
        parsed = _parse_template(element, known, f"{where}.command[{index}]", findings)
        if parsed is None:
            continue
        template.append(parsed)
        names = [t for t, is_name in parsed if is_name]
        if len(parsed) > 1:
            for n in names:
                spec = next(p for p in params if p.name == n)
                if spec.type == "array" or spec.flag is not None:
                    findings.error(
                        f"{where}.command[{index}]",
                        f"'{{{n}}}' is a list or a flag and must stand alone as an argument",
                    )
    timeout = body.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        findings.error(f"{where}.timeout", f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
        timeout = DEFAULT_TIMEOUT
    cwd = body.get("cwd", "project")
    if not isinstance(cwd, str) or not cwd.strip():
        findings.error(f"{where}.cwd", "must be 'project', 'skill' or a folder inside the skill")
        cwd = "project"
    elif cwd not in ("project", "skill") and not _inside(skill_dir, cwd):
        findings.error(f"{where}.cwd", f"must stay inside the skill folder (got {cwd!r})")
    env = body.get("env", {})
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in env.items()
    ):
        findings.error(f"{where}.env", "must map variable names to text")
        env = {}
    return ActionSpec(
        name=name,
        description=description.strip(),
        skill_dir=skill_dir,
        params=params,
        program=program,
        template=tuple(template),
        timeout=float(timeout),
        cwd=cwd,
        env={k: str(v) for k, v in env.items()},
    )


def _parse_program(
    body: Mapping[str, Any], skill_dir: Path, where: str, findings: Findings
) -> tuple[tuple[str, ...], list[Any]]:
    """(fixed program prefix, template elements) from ``command`` or ``script`` + ``args``."""
    command, script = body.get("command"), body.get("script")
    if (command is None) == (script is None):
        findings.error(where, "needs exactly one of 'command' (an argument list) or 'script'")
        return (), []
    if command is not None:
        if isinstance(command, str):
            findings.error(
                f"{where}.command",
                "must be an argument list like [git, status], not a shell line",
            )
            return (), []
        if (
            not isinstance(command, list)
            or not command
            or not all(
                isinstance(c, str | int | float) and not isinstance(c, bool) for c in command
            )
        ):
            findings.error(f"{where}.command", "must be a non-empty list of arguments")
            return (), []
        if "args" in body:
            findings.error(f"{where}.args", "goes with 'script'; put arguments in 'command'")
        head = str(command[0])
        if "{" in head:
            findings.error(f"{where}.command[0]", "the program itself cannot be a placeholder")
            return (), []
        return (head,), [str(c) for c in command[1:]]
    if not isinstance(script, str) or not script.strip():
        findings.error(f"{where}.script", "must be a path inside the skill folder")
        return (), []
    if not _inside(skill_dir, script):
        findings.error(f"{where}.script", f"must stay inside the skill folder (got {script!r})")
        return (), []
    path = skill_dir / script
    args = body.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        findings.error(f"{where}.args", "must be a list of arguments")
        args = []
    if not path.is_file():
        findings.error(f"{where}.script", f"file not found: {script}")
        return (), []
    interpreter = _INTERPRETERS.get(path.suffix.lower())
    if interpreter is not None:
        return (*interpreter, str(path)), [str(a) for a in args]
    if not os.access(path, os.X_OK):
        known = ", ".join(sorted(_INTERPRETERS))
        findings.error(f"{where}.script", f"is not executable and not a known type ({known})")
        return (), []
    return (str(path),), [str(a) for a in args]


def _inside(root: Path, relative: str) -> bool:
    if Path(relative).is_absolute():
        return False
    resolved_root = root.resolve()
    target = (root / relative).resolve()
    return target == resolved_root or resolved_root in target.parents


def _parse_params(raw: Any, where: str, findings: Findings) -> tuple[ActionParam, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        findings.error(where, "must be a mapping of parameter names")
        return ()
    params: list[ActionParam] = []
    for name, spec in raw.items():
        at = f"{where}.{name}"
        if not _PARAM_NAME.match(str(name)):
            findings.error(at, "parameter names start with a letter, then letters, digits, '_'")
            continue
        if isinstance(spec, str):
            spec = {"type": spec}
        if not isinstance(spec, Mapping):
            findings.error(at, "must be a type name or a mapping (type, description, default...)")
            continue
        for key in spec:
            if key not in _PARAM_KEYS:
                findings.error(
                    f"{at}.{key}", f"unknown key (known: {', '.join(sorted(_PARAM_KEYS))})"
                )
        kind = spec.get("type", "string")
        if kind not in PARAM_TYPES:
            findings.error(f"{at}.type", f"must be one of {', '.join(PARAM_TYPES)} (got {kind!r})")
            continue
        enum = spec.get("enum")
        if enum is not None and (not isinstance(enum, list) or not enum):
            findings.error(f"{at}.enum", "must be a non-empty list of values")
            enum = None
        flag = spec.get("flag")
        if flag is not None and (not isinstance(flag, str) or not flag.startswith("-")):
            findings.error(f"{at}.flag", "must be an option like --name or -n")
            flag = None
        has_default = "default" in spec
        required = spec.get("required", not has_default)
        if not isinstance(required, bool):
            findings.error(f"{at}.required", "must be true or false")
            required = not has_default
        description = spec.get("description", "")
        params.append(
            ActionParam(
                name=str(name),
                type=kind,
                description=description if isinstance(description, str) else str(description),
                required=required and not has_default,
                default=spec.get("default"),
                enum=tuple(enum) if enum is not None else None,
                flag=flag,
            )
        )
    return tuple(params)


def _parse_template(
    element: str, known: set[str], where: str, findings: Findings
) -> Template | None:
    parts: list[tuple[str, bool]] = []
    try:
        parsed = list(string.Formatter().parse(element))
    except ValueError as exc:
        findings.error(where, f"bad placeholder syntax ({exc}); write literal braces as {{{{ }}}}")
        return None
    for literal, name, spec, conversion in parsed:
        if literal:
            parts.append((literal, False))
        if name is None:
            continue
        if spec or conversion or name not in known:
            findings.error(where, f"placeholder '{{{name}}}' does not name a declared parameter")
            return None
        parts.append((name, True))
    return tuple(parts) if parts else (("", False),)


# --------------------------------------------------------------------------- command line


def parse_command_arguments(spec: ActionSpec, tokens: Sequence[str]) -> dict[str, Any]:
    """Raw values from ``key=value`` tokens; bare tokens fill parameters in order.

    A repeated key (or several bare tokens for an array parameter) makes a list. Values
    stay text here; `ActionSpec.validate` converts them to the declared types.
    """
    values: dict[str, Any] = {}
    positional = [p for p in spec.params]
    index = 0
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep and spec.param(key) is not None:
            _put(values, spec, key, value)
            continue
        while (
            index < len(positional)
            and positional[index].name in values
            and positional[index].type != "array"
        ):
            index += 1
        if index >= len(positional):
            raise ActionError(f"action '{spec.name}': unexpected argument {token!r}")
        _put(values, spec, positional[index].name, token)
    return values


def _put(values: dict[str, Any], spec: ActionSpec, key: str, value: str) -> None:
    param = spec.param(key)
    if param is not None and param.type == "array":
        values.setdefault(key, []).append(value)
    elif key in values:
        raise ActionError(f"action '{spec.name}': argument '{key}' given twice")
    else:
        values[key] = value
