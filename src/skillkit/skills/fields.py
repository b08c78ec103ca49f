"""The frontmatter fields checked one by one (``name``, ``description``, ``license``,
``compatibility``, ``metadata``, ``allowed-tools``, flags), and YAML data made plain
JSON-like data. Each rule broken is a finding: an error, a warning or (by mode) either.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from skillkit.skills.diagnostics import Findings
from skillkit.skills.frontmatter import (
    MAX_NESTING,
    YAML11_BOOLEANS,
    Written,
    kind,
    nesting_bound,
)

__all__ = [
    "CLIENT_FIELDS",
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "OWN_KEYS",
    "SPEC_FIELDS",
    "check_allowed_tools",
    "check_compatibility",
    "check_description",
    "check_flag",
    "check_metadata",
    "check_name",
    "optional_text",
    "plain_data",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

# Extensions used by other clients; tolerated silently in lenient mode.
CLIENT_FIELDS = frozenset(
    {"disable-model-invocation", "user-invocable", "argument-hint", "version", "homepage"}
)


#: Keys SkillKit reads under ``metadata.skillkit``; any other is a finding (an error in
#: strict mode). Other clients' namespaces (``metadata.openclaw`` ...) are theirs: at
#: most warnings.
OWN_KEYS = frozenset({"requires", "always", "os", "actions", "context", "agent", *CLIENT_FIELDS})

_ASCII_NAME = re.compile(r"[a-z0-9-]*")


def _scalar_text(value: object) -> str | None:
    """Text for a scalar that YAML typed as something else (1.0, true, a date)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return None


def _text_field(value: object, name: str, findings: Findings, *, needed: bool) -> str | None:
    """``value`` as text. A number, boolean or date is converted (a problem; a YAML 1.1
    boolean word such as ``yes`` is text as written, no problem); anything else is
    refused — an error when the field is ``needed``, else ignored (a problem)."""
    if isinstance(value, Written):
        if str(value) not in YAML11_BOOLEANS:
            findings.problem(name, f"must be text (got {kind(value.typed)} {value}; quote it)")
        return str(value)
    if isinstance(value, str):
        return value
    converted = _scalar_text(value)
    if converted is not None:
        findings.problem(name, f"must be text (got {kind(value)} {converted}; quote it)")
        return converted
    if needed:
        findings.error(name, f"must be text (got {kind(value)})")
    else:
        note = "" if findings.strict else "; ignored"
        findings.problem(name, f"must be text (got {kind(value)}){note}")
    return None


def check_name(value: object, folder: str, findings: Findings) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        what = "is missing (required)" if value is None else "must not be empty"
        if findings.strict or not folder:
            findings.error("name", what)
            return None
        findings.warning("name", f"{what}; using the folder name '{folder}'")
        return folder
    name = _text_field(value, "name", findings, needed=findings.strict or not folder)
    if name is None:
        return folder or None
    name = unicodedata.normalize("NFKC", name.strip())
    if len(name) > MAX_NAME:
        findings.problem("name", f"must be 1-{MAX_NAME} characters (got {len(name)})")
    bad = (
        []
        if _ASCII_NAME.fullmatch(name)
        else sorted({c for c in name if not (c == "-" or (c.isalnum() and c == c.lower()))})
    )
    if bad:
        shown = "".join(bad[:5])
        findings.problem(
            "name", f"may contain only lowercase letters, digits and hyphens (found {shown!r})"
        )
    if name.startswith("-") or name.endswith("-"):
        findings.problem("name", "must not start or end with a hyphen")
    if "--" in name:
        findings.problem("name", "must not contain consecutive hyphens ('--')")
    if folder and unicodedata.normalize("NFKC", folder) != name:
        findings.problem("name", f"must equal the folder name '{folder}' (got '{name}')")
    return name


def check_description(fields: dict[str, Any], findings: Findings) -> str | None:
    if "description" not in fields or fields["description"] is None:
        findings.error("description", "is missing (required)")
        return None
    text = _text_field(fields["description"], "description", findings, needed=True)
    if text is None:
        return None
    text = text.strip()
    if not text:
        findings.error("description", "must not be empty")
        return None
    if len(text) > MAX_DESCRIPTION:
        findings.problem("description", f"must be 1-{MAX_DESCRIPTION} characters (got {len(text)})")
    return text


def optional_text(fields: dict[str, Any], name: str, findings: Findings) -> str | None:
    value = fields.get(name)
    if value is None:
        return None
    text = _text_field(value, name, findings, needed=False)
    return text.strip() if text is not None else None


def check_compatibility(fields: dict[str, Any], findings: Findings) -> str | None:
    if "compatibility" not in fields:
        return None
    text = optional_text(fields, "compatibility", findings)
    size = len(text) if text is not None else 0
    if fields["compatibility"] is None or (text is not None and not 1 <= size <= MAX_COMPATIBILITY):
        findings.problem("compatibility", f"must be 1-{MAX_COMPATIBILITY} characters (got {size})")
    return text or None


def check_metadata(
    fields: dict[str, Any], findings: Findings, *, plain: bool = False
) -> dict[str, Any]:
    if "metadata" not in fields or fields["metadata"] is None:
        return {}
    value = fields["metadata"]
    if isinstance(value, str):
        if nesting_bound(value) > MAX_NESTING:  # json.loads recurses too
            findings.error("frontmatter", f"is nested too deeply (more than {MAX_NESTING} levels)")
            findings.raise_if_errors()
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            findings.problem(
                "metadata", "must be a mapping (got a JSON string; write it as a YAML mapping)"
            )
            value = decoded
    if not isinstance(value, dict):
        findings.problem("metadata", f"must be a mapping (got {kind(value)}); ignored")
        return {}
    if plain:
        return value
    converted = plain_data(value, findings, "metadata")
    return converted if isinstance(converted, dict) else {}


def check_allowed_tools(fields: dict[str, Any], findings: Findings) -> tuple[str, ...]:
    value = fields.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(_split_tools(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        findings.problem(
            "allowed-tools",
            "must be a space-separated string (got a list; read as its items)",
        )
        return tuple(t for v in value for t in _split_tools(v))
    findings.problem(
        "allowed-tools",
        f"must be a space-separated string or a list of strings (got {kind(value)}); ignored",
    )
    return ()


def _split_tools(text: str) -> list[str]:
    """Split on spaces and commas outside parentheses: ``Bash(git add:*) Read``."""
    tools: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                tools.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tools.append("".join(current))
    return tools


def check_flag(source: Mapping[str, Any], key: str, prefix: str, findings: Findings) -> bool | None:
    if key not in source or source[key] is None:
        return None
    value = source[key]
    if isinstance(value, bool):
        return value
    where = f"{prefix}.{key}" if prefix else key
    if isinstance(value, str) and value.strip().lower() in (
        "true",
        "yes",
        "on",
        "false",
        "no",
        "off",
    ):
        findings.problem(where, f"must be true or false (got text {value!r})")
        return value.strip().lower() in ("true", "yes", "on")
    findings.problem(where, f"must be true or false (got {kind(value)}); ignored")
    return None


# --------------------------------------------------------------------------- plain data

_MAX_DEPTH = 32
_MAX_NODES = 20_000


def plain_data(value: Any, findings: Findings, where: str) -> Any:
    """JSON-like data from what YAML produced: string keys, dates as ISO text, sets and
    tuples as lists. Refuses recursive, over-deep or alias-bomb structures."""
    budget = [_MAX_NODES]

    def walk(node: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:
            raise _TooLarge
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, dict):
            return {_key(k): walk(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list | tuple | set | frozenset):
            return [walk(v, depth + 1) for v in node]
        if isinstance(node, datetime | date | time):
            return node.isoformat()
        if isinstance(node, bytes):
            return node.decode("utf-8", "replace")
        return str(node)

    try:
        return walk(value, 0)
    except _TooLarge:
        findings.error(where, f"is nested too deeply or too large (limit {_MAX_DEPTH} levels)")
        return {}


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    converted = _scalar_text(key)
    return converted if converted is not None else str(key)


class _TooLarge(Exception):
    pass
