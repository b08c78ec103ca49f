"""Strict schemas: the form of a JSON schema that providers' strict structured output
accepts (OpenAI ``strict: true``, Anthropic structured outputs).

A strict schema closes every object (``additionalProperties: false``) and lists every
property as required. Both rules only narrow what the schema allows, so a value that
satisfies the strict form also satisfies the original — SkillKit still validates
against the original. A schema that cannot be narrowed this way without changing its
meaning (an object with no listed properties, or whose ``additionalProperties`` is a
schema or ``true``) has no strict form.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["strict_schema"]

_MAX_DEPTH = 64
_DROPPED = frozenset({"default", "$schema", "$id"})


class _NotStrict(Exception):
    """The schema has no strict form."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The strict form of ``schema`` (a new dict; ``schema`` is not changed), or None
    when it has none. ``default`` keys are dropped, local ``$ref`` s that carry sibling
    keys are inlined (strict mode refuses siblings) and one-element ``allOf`` s are
    unwrapped."""
    if not isinstance(schema, dict):
        raise TypeError(f"a JSON schema must be a dict, got {type(schema).__name__}")
    root = copy.deepcopy(schema)
    try:
        strict: dict[str, Any] = _node(root, root, 0)
        return strict
    except _NotStrict:
        return None


def _node(node: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _NotStrict
    if isinstance(node, list):
        return [_node(item, root, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node and len(node) > 1:
        node = {**_resolve(node["$ref"], root), **{k: v for k, v in node.items() if k != "$ref"}}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        rest = {k: v for k, v in node.items() if k != "allOf"}
        node = {**all_of[0], **rest}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            if not isinstance(value, dict):
                raise _NotStrict
            out[key] = {name: _node(sub, root, depth + 1) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
            out[key] = _node(value, root, depth + 1)
        else:
            out[key] = value
    if _is_object(out):
        extra = out.get("additionalProperties", False)
        properties = out.get("properties")
        if extra is not False or not isinstance(properties, dict) or not properties:
            raise _NotStrict
        if "patternProperties" in out:
            raise _NotStrict
        out["additionalProperties"] = False
        out["required"] = list(properties)
    return out


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return True
    return kind is None and "properties" in node


def _resolve(ref: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The local definition ``ref`` points to (``#/$defs/Name``)."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise _NotStrict
    target: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            raise _NotStrict
        target = target[part]
    if not isinstance(target, dict):
        raise _NotStrict
    return target
