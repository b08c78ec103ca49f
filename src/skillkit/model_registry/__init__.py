"""Model metadata, cost, and model-string resolution.

`ModelDefinition` says what a model is (provider, wire API, context window, output
limit, prices, capabilities, quirks of its server); `ModelRegistry` holds definitions
and answers `get`, fuzzy `find`, `list_by_provider` and `calculate_cost`.
`resolve_model` turns what a user typed (``"gpt-4o"``, ``"anthropic:claude-sonnet-4-5"``,
an unknown id plus a ``base_url``) into a `ResolvedModel` an adapter can be built from.

The built-in catalog is a JSON file shipped in ``skillkit/data``; it is decoded with
msgspec on first use of a registry that includes it, never at import time. Every type
here round-trips through JSON (`skillkit.models.to_json` / `from_json`).

The package's modules, one concept each: `definitions` (what a model is),
`catalog` (the catalog file), `registry` (`ModelRegistry` and the process-wide one),
`resolve` (model strings).
"""

from skillkit.model_registry.catalog import Catalog, load_catalog
from skillkit.model_registry.definitions import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT_TOKENS,
    OPENAI_COMPATIBLE,
    CostTier,
    ModelApi,
    ModelCompat,
    ModelCost,
    ModelDefinition,
    ProviderInfo,
)
from skillkit.model_registry.registry import ModelRegistry, default_registry, set_default_registry
from skillkit.model_registry.resolve import (
    MissingApiKeyError,
    ModelNotFoundError,
    ResolvedModel,
    resolve_model,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "OPENAI_COMPATIBLE",
    "Catalog",
    "CostTier",
    "MissingApiKeyError",
    "ModelApi",
    "ModelCompat",
    "ModelCost",
    "ModelDefinition",
    "ModelNotFoundError",
    "ModelRegistry",
    "ProviderInfo",
    "ResolvedModel",
    "default_registry",
    "load_catalog",
    "resolve_model",
    "set_default_registry",
]
