"""Argument models that cost nothing until a call is validated.

A tool's argument model is a pydantic class, and pydantic is one of the largest imports
SkillKit has. `ArgumentModels` names the argument models of a set of tools by the module
that defines them, and keeps their JSON schemas in a file beside that module, so a tool
can be built, listed, judged by the permission gate and shown to a model without
pydantic; the module (and pydantic) is imported on the first access of ``args_model`` —
the first validation of a call.

The stored schemas are generated from the models (`ArgumentModels.write`) and checked
against them in the test suite (`ArgumentModels.stale`), so they cannot drift apart.

```python
MODELS = ArgumentModels("mypkg.arguments", Path(__file__).with_name("arguments.json"))


class LsTool:
    name = "ls"
    args_model = MODELS.model("LsArgs")  # imported on first access
    args_schema = MODELS.schema("LsArgs")  # read from the stored file
```
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ArgumentModels", "LazyModel", "StoredSchema"]


def clean_schema(node: Any) -> Any:
    """A JSON schema without pydantic's generated ``title`` keys, which only cost tokens."""
    if isinstance(node, dict):
        return {
            k: clean_schema(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [clean_schema(v) for v in node]
    return node


class ArgumentModels:
    """The argument models defined in ``module``, with their cleaned JSON schemas stored
    in ``schemas`` (a JSON object: model name -> schema)."""

    def __init__(self, module: str, schemas: Path) -> None:
        self.module = module
        self.path = schemas
        self._stored: dict[str, dict[str, Any]] | None = None
        self._models: dict[str, type[BaseModel]] = {}

    def model(self, name: str) -> LazyModel:
        """A class attribute: the model ``name``, imported on first access."""
        return LazyModel(self, name)

    def schema(self, name: str) -> StoredSchema:
        """A class attribute: the stored JSON schema of the model ``name``."""
        return StoredSchema(self, name)

    def reexport(self, module: str, *names: str) -> Callable[[str], Any]:
        """A module ``__getattr__`` for ``module`` that hands out ``names`` (models it
        used to define) from the models' module, imported when first asked for."""

        def __getattr__(name: str) -> Any:
            if name in names:
                return self.load(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        return __getattr__

    def load(self, name: str) -> type[BaseModel]:
        """The model class ``name`` (imports its module)."""
        model = self._models.get(name)
        if model is None:
            model = self._models[name] = getattr(import_module(self.module), name)
        return model

    def stored(self, name: str) -> dict[str, Any]:
        """The stored schema of ``name``. A name missing from the file (a model added
        without regenerating it) falls back to the model's own schema."""
        if self._stored is None:
            try:
                self._stored = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._stored = {}
        found = self._stored.get(name)
        if found is None:
            found = self._stored[name] = self.generate(name)
        return found

    def generate(self, name: str) -> dict[str, Any]:
        """The schema of ``name`` computed from the model (pydantic)."""
        schema: dict[str, Any] = clean_schema(self.load(name).model_json_schema())
        return schema

    def names(self) -> list[str]:
        """The argument models the module lists in its ``__all__``."""
        return list(getattr(import_module(self.module), "__all__", []))

    def write(self) -> None:
        """Regenerate the stored schemas from the models."""
        generated = {name: self.generate(name) for name in self.names()}
        self.path.write_text(json.dumps(generated, indent=1, sort_keys=True) + "\n")
        self._stored = None

    def stale(self) -> list[str]:
        """The models whose stored schema is missing or differs from their own."""
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        extra = sorted(set(stored) - set(self.names()))
        return [n for n in self.names() if stored.get(n) != self.generate(n)] + extra


class LazyModel:
    """A descriptor: the argument model of a tool class, imported on first access and
    kept. Reading it on the class or an instance gives the pydantic model."""

    __slots__ = ("_model", "models", "name")

    def __init__(self, models: ArgumentModels, name: str) -> None:
        self.models = models
        self.name = name
        self._model: type[BaseModel] | None = None

    @overload
    def __get__(self, obj: None, owner: type) -> type[BaseModel]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> type[BaseModel]: ...
    def __get__(self, obj: object, owner: type | None = None) -> type[BaseModel]:
        model = self._model
        if model is None:
            model = self._model = self.models.load(self.name)
        return model

    def __set__(self, obj: object, value: type[BaseModel]) -> None:
        raise AttributeError("a tool's argument model is fixed by its class")


class StoredSchema:
    """A descriptor: the stored JSON schema of a tool class's argument model (see
    `ArgumentModels`); `skillkit.tools.tool_schema` shows it to the model as is."""

    __slots__ = ("models", "name")

    def __init__(self, models: ArgumentModels, name: str) -> None:
        self.models = models
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> dict[str, Any]:
        return self.models.stored(self.name)
