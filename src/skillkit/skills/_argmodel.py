"""Builds the pydantic argument model of an action (internal; pydantic is imported here)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model


class ActionParam(Protocol):
    """What the model is built from, per parameter (`skillkit.skills.actions.ActionParam`)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def required(self) -> bool: ...
    @property
    def default(self) -> Any: ...
    @property
    def enum(self) -> tuple[Any, ...] | None: ...


class ActionSpec(Protocol):
    """What the model is built from, per action (`skillkit.skills.actions.ActionSpec`)."""

    @property
    def name(self) -> str: ...
    @property
    def params(self) -> Sequence[ActionParam]: ...


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


_Text = Annotated[str, AfterValidator(_no_nul)]
_BASE: dict[str, Any] = {
    "string": _Text,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[_Text],
}


def _annotation(param: ActionParam) -> Any:
    if param.enum is not None:
        return Literal[param.enum]
    return _BASE[param.type]


def build_args_model(spec: ActionSpec) -> type[BaseModel]:
    """A model whose fields are the params (by alias, so any name is safe) and that
    forbids unknown arguments. Optional params without a default default to None."""
    fields: dict[str, Any] = {}
    for index, param in enumerate(spec.params):
        annotation = _annotation(param)
        extra: dict[str, Any] = {"alias": param.name}
        if param.description:
            extra["description"] = param.description
        if param.required:
            fields[f"p{index}"] = (annotation, Field(..., **extra))
        elif param.default is not None:
            fields[f"p{index}"] = (annotation, Field(param.default, **extra))
        else:
            fields[f"p{index}"] = (annotation | None, Field(None, **extra))
    model_name = "".join(w.title() for w in re.split(r"[^0-9A-Za-z]+", spec.name) if w) or "Action"
    return create_model(
        f"{model_name}Args",
        __config__=ConfigDict(extra="forbid", populate_by_name=False),
        **fields,
    )
