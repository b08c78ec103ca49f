"""`OutputSpec`: what a run's final answer must be, as a JSON schema and a validator.

Made from a pydantic model, a dataclass, a ``TypedDict`` (or any other type pydantic
can validate) or a JSON schema dict. pydantic and jsonschema are imported only when a
spec is built, so importing SkillKit stays cheap.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from skillkit.output.strict import strict_schema

__all__ = [
    "OUTPUT_TOOL_NAME",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "read_schema_file",
]

OUTPUT_TOOL_NAME = "final_result"
"""The name of the final tool the model calls with its answer in tool mode."""

OutputMode: TypeAlias = Literal["auto", "native", "tool"]
"""How the answer is asked for: the provider's native structured output (``native``),
a final tool the model must call (``tool``), or the best the model supports (``auto``)."""

_WRAP_KEY = "result"
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_ERRORS = 10


class OutputValidationError(ValueError):
    """The model's answer is not a valid output. ``str(error)`` is written for the model:
    one line per problem, each naming where in the value it is."""


@dataclasses.dataclass(frozen=True, eq=False)
class OutputSpec:
    """A validated output type: its JSON ``schema``, a ``name`` and ``description`` for
    the provider, and how to check an answer.

    Build one with `OutputSpec.of`. ``retries`` is how many invalid answers are sent back
    to the model (with the validation error) before the run gives up with
    ``stop_reason="output_invalid"``. ``mode`` chooses native structured output or the
    final tool (``auto``: native where the model's catalog entry says it supports
    structured output and the schema has a strict form). ``wrapped`` says the schema's
    root is not an object, so the provider is sent ``{"result": <schema>}`` and the
    answer is unwrapped before validation.
    """

    target: Any
    name: str
    description: str
    schema: dict[str, Any]
    retries: int = 2
    mode: OutputMode = "auto"
    wrapped: bool = False
    _validate: Callable[[Any], Any] = dataclasses.field(default=lambda data: data, repr=False)
    _dump: Callable[[Any], Any] = dataclasses.field(default=lambda value: value, repr=False)

    @classmethod
    def of(
        cls,
        target: Any,
        *,
        retries: int | None = None,
        mode: OutputMode | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> OutputSpec:
        """The spec of ``target``: a pydantic model, dataclass or ``TypedDict`` class (or
        another type pydantic validates), a JSON schema dict, or an `OutputSpec` (the
        settings given here replace its own). ``retries`` defaults to 2 and ``mode`` to
        ``"auto"``. Raises `TypeError` / `ValueError` for anything else, an invalid
        schema, or a negative ``retries``."""
        if isinstance(target, OutputSpec):
            spec = dataclasses.replace(
                target,
                retries=target.retries if retries is None else retries,
                mode=target.mode if mode is None else mode,
                name=_clean_name(name) if name else target.name,
                description=description if description is not None else target.description,
            )
            _check_settings(spec.retries, spec.mode)
            return spec
        retries = 2 if retries is None else retries
        mode = "auto" if mode is None else mode
        _check_settings(retries, mode)
        if isinstance(target, dict):
            return _from_schema(target, retries, mode, name, description)
        if isinstance(target, type) or _is_type_form(target):
            return _from_type(target, retries, mode, name, description)
        raise TypeError(
            "output_type must be a pydantic model, a dataclass, a TypedDict or a JSON schema "
            f"dict, got {type(target).__name__}"
        )

    # ----- the provider's view

    def wire_schema(self) -> dict[str, Any]:
        """The schema the provider is sent: always an object at the root."""
        if not self.wrapped:
            return self.schema
        defs: dict[str, Any] = {
            k: self.schema[k] for k in ("$defs", "definitions") if k in self.schema
        }
        inner = {k: v for k, v in self.schema.items() if k not in defs}
        return {
            "type": "object",
            "properties": {_WRAP_KEY: inner},
            "required": [_WRAP_KEY],
            "additionalProperties": False,
            **defs,
        }

    def strict_wire_schema(self) -> dict[str, Any] | None:
        """The strict form of `wire_schema` (see `skillkit.output.strict`), or None."""
        return strict_schema(self.wire_schema())

    # ----- checking answers

    def parse_text(self, text: str) -> Any:
        """Validate an answer given as JSON text (a Markdown code fence around it is
        allowed). Returns the validated value; raises `OutputValidationError`."""
        body = _strip_fence(text)
        if not body:
            raise OutputValidationError("the answer is empty; reply with the JSON value only")
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise OutputValidationError(f"the answer is not valid JSON: {exc}") from None
        return self.parse_wire(data)

    def parse_wire(self, data: Any) -> Any:
        """Validate JSON data in the provider's shape (`wire_schema`): unwrapped first
        when the spec is ``wrapped``. Raises `OutputValidationError`."""
        if self.wrapped:
            if not isinstance(data, dict) or _WRAP_KEY not in data:
                raise OutputValidationError(
                    f'the answer must be an object with the key "{_WRAP_KEY}"'
                )
            data = data[_WRAP_KEY]
        return self.validate(data)

    def validate(self, data: Any) -> Any:
        """The validated value for JSON ``data`` (a model instance, dataclass, dict...).
        Raises `OutputValidationError`."""
        return self._validate(data)

    def dump(self, value: Any) -> Any:
        """The JSON data form of a value `validate` returned."""
        return self._dump(value)

    def unwrap_partial(self, data: Any) -> Any:
        """The output part of partial wire data (None while it has not started)."""
        if self.wrapped:
            return data.get(_WRAP_KEY) if isinstance(data, dict) else None
        return data


# --------------------------------------------------------------------------- building


def _check_settings(retries: int, mode: str) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be 0 or more, got {retries!r}")
    if mode not in ("auto", "native", "tool"):
        raise ValueError(f"mode must be 'auto', 'native' or 'tool', got {mode!r}")


def _is_type_form(target: Any) -> bool:
    """Generic aliases and other typing forms (``list[int]``, ``int | None``)."""
    return getattr(target, "__origin__", None) is not None or type(target).__module__ in (
        "typing",
        "types",
        "typing_extensions",
    )


def _from_type(
    target: Any, retries: int, mode: OutputMode, name: str | None, description: str | None
) -> OutputSpec:
    from pydantic import TypeAdapter, ValidationError
    from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

    try:
        adapter: TypeAdapter[Any] = TypeAdapter(target)
        schema = _drop_titles(adapter.json_schema())
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TypeError(f"cannot make a JSON schema of {target!r}: {first}") from None

    def validate(data: Any) -> Any:
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            raise OutputValidationError(_pydantic_errors(exc)) from None

    def dump(value: Any) -> Any:
        return adapter.dump_python(value, mode="json")

    doc = description if description is not None else _doc_of(target, schema)
    return OutputSpec(
        target=target,
        name=_clean_name(name or getattr(target, "__name__", "") or "output"),
        description=doc,
        schema=schema,
        retries=retries,
        mode=mode,
        wrapped=not _object_rooted(schema),
        _validate=validate,
        _dump=dump,
    )


def _from_schema(
    schema: dict[str, Any],
    retries: int,
    mode: OutputMode,
    name: str | None,
    description: str | None,
) -> OutputSpec:
    import jsonschema
    from jsonschema.exceptions import SchemaError

    validator_class = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"not a valid JSON schema: {exc.message}") from None
    validator = validator_class(schema)

    def validate(data: Any) -> Any:
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [
                f"- {_where(list(error.absolute_path))}: {error.message}"
                for error in errors[:_MAX_ERRORS]
            ]
            raise OutputValidationError("\n".join(lines))
        return data

    title = schema.get("title")
    doc = description if description is not None else str(schema.get("description") or "")
    return OutputSpec(
        target=schema,
        name=_clean_name(name or (title if isinstance(title, str) else "") or "output"),
        description=doc,
        schema=schema,
        retries=retries,
        mode=mode,
        wrapped=not _object_rooted(schema),
        _validate=validate,
    )


def _object_rooted(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "object":
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) <= 2:
        target = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
        return isinstance(target, dict) and target.get("type") == "object"
    return False


def _doc_of(target: Any, schema: dict[str, Any]) -> str:
    text = schema.get("description")
    if isinstance(text, str):
        return text
    doc = getattr(target, "__doc__", None) if isinstance(target, type) else None
    generated = f"{getattr(target, '__name__', '')}("  # the signature a dataclass gets
    if not doc or (dataclasses.is_dataclass(target) and doc.startswith(generated)):
        return ""
    return " ".join(doc.split())


def _drop_titles(node: Any) -> Any:
    """pydantic's generated ``title`` keys only cost tokens."""
    if isinstance(node, dict):
        return {
            k: _drop_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_drop_titles(v) for v in node]
    return node


def _clean_name(name: str) -> str:
    """A name providers accept (letters, digits, ``_`` and ``-``, at most 64)."""
    return _NAME_CHARS.sub("_", name).strip("_")[:64] or "output"


def _where(path: list[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or (
        "(value)"
    )


def _pydantic_errors(exc: Any) -> str:
    lines = []
    for item in exc.errors()[:_MAX_ERRORS]:
        lines.append(f"- {_where(list(item.get('loc', ())))}: {item.get('msg', 'invalid')}")
    return "\n".join(lines)


def _strip_fence(text: str) -> str:
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        body = body[3:-3]
        first, _, rest = body.partition("\n")
        if first.strip().isalpha() or not first.strip():
            body = rest
        body = body.strip()
    return body


def read_schema_file(path: str) -> dict[str, Any]:
    """The JSON schema in the file at ``path`` (``--output-schema FILE``), checked to be
    one `OutputSpec.of` accepts. `ValueError` with a one-line reason otherwise."""
    try:
        with open(path, encoding="utf-8-sig") as file:
            schema = json.load(file)
    except OSError as exc:
        raise ValueError(f"cannot read the output schema {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the output schema {path} is not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ValueError(f"the output schema {path} is not a JSON object")
    try:
        OutputSpec.of(schema)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the output schema {path}: {exc}") from None
    return schema
