"""``skillkit models [--provider P] [--json] [QUERY]``: the model catalog as a table."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.model_registry import ModelDefinition

__all__ = ["register", "run_models"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` subcommand."""
    parser = subparsers.add_parser(
        "models",
        help="list known models with context window, output limit and prices",
        description="List the models SkillKit knows: context window, output limit, "
        "prices in USD per million tokens, and capabilities. QUERY is matched loosely "
        "('sonnet 4.5', 'gpt5', 'kimi').",
    )
    parser.add_argument("query", nargs="?", default="", help="filter models by name")
    parser.add_argument("--provider", "-p", help="only this provider (e.g. openai, ollama)")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead")
    parser.set_defaults(handler=run_models)


def run_models(args: argparse.Namespace) -> int:
    """Print the matching models; exit 1 when nothing matches, 2 for an unknown provider."""
    from skillkit.model_registry import default_registry
    from skillkit.models import to_json

    registry = default_registry()
    provider: str | None = args.provider
    if (
        provider is not None
        and registry.provider(provider) is None
        and not (registry.list_by_provider(provider))
    ):
        known = ", ".join(info.name for info in registry.providers())
        print(
            f"skillkit: error: models: unknown provider '{provider}' (known: {known})",
            file=sys.stderr,
        )
        return 2
    models = registry.find(args.query or "", provider=provider)
    if not models:
        where = f" from {provider}" if provider else ""
        print(f"skillkit: models: no model{where} matches '{args.query}'", file=sys.stderr)
        return 1
    if args.json:
        for model in models:
            sys.stdout.write(to_json(model).decode() + "\n")
        return 0
    _print_table(models)
    return 0


def _print_table(models: list[ModelDefinition]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Models (prices in USD per million tokens)", title_justify="left")
    for header, justify in (
        ("Provider", "left"),
        ("Model", "left"),
        ("Context", "right"),
        ("Max out", "right"),
        ("Input", "right"),
        ("Output", "right"),
        ("Cache r/w", "right"),
        ("Capabilities", "left"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for model in models:
        cost = model.cost
        caps = sorted(model.capabilities - {"text"})
        table.add_row(
            model.provider,
            model.id,
            _tokens(model.context_window),
            _tokens(model.max_output_tokens),
            _price(cost.input) + ("+" if cost.tiers else ""),
            _price(cost.output),
            f"{_price(cost.cache_read)}/{_price(cost.cache_write)}",
            ", ".join(caps),
        )
    Console(soft_wrap=False).print(table)


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        exact = count % 1_048_576 == 0
        return f"{count // 1_048_576}M" if exact else f"{count / 1_000_000:.3g}M"
    if count % 1000 == 0:
        return f"{count // 1000}K"
    if count % 1024 == 0:
        return f"{count // 1024}K"
    if count >= 1000:
        return f"{round(count / 1000)}K"
    return str(count)


def _price(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") if value else "-"
