"""The catalog file: `Catalog` (providers and models, with where they came from) and
`load_catalog`. The built-in catalog is ``skillkit/data/models_catalog.json``, decoded
with msgspec on first use, never at import time."""

from __future__ import annotations

import os
from functools import cache

import msgspec

from skillkit.model_registry.definitions import ModelDefinition, ProviderInfo

__all__ = ["Catalog", "load_catalog"]


class Catalog(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """A catalog file: providers and models, with the date and source versions it was
    generated from."""

    version: int = 1
    generated: str = ""
    sources: dict[str, str] = msgspec.field(default_factory=dict)
    providers: tuple[ProviderInfo, ...] = ()
    models: tuple[ModelDefinition, ...] = ()


_CATALOG_FILE = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "data", "models_catalog.json"
)


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Decode a catalog file (the built-in one when ``path`` is None; that one is decoded
    once per process). Raises `msgspec.ValidationError` for a malformed file."""
    if path is None:
        return _builtin_catalog()
    with open(path, "rb") as file:
        return msgspec.json.decode(file.read(), type=Catalog)


@cache
def _builtin_catalog() -> Catalog:
    with open(_CATALOG_FILE, "rb") as file:
        return msgspec.json.decode(file.read(), type=Catalog)
