"""``skillkit models [--provider P] [--json] [QUERY]``: the model catalog.

On a terminal the catalog is a table; piped or redirected it is plain aligned columns
(one header line, then one line per model, no borders). The model id is never cut in
either form: it is the one column a user copies.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.model_registry import ModelDefinition

__all__ = ["format_plain", "register", "run_models"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` subcommand."""
    parser = subparsers.add_parser(
        "models",
        help="list known models with context window, output limit and prices",
        description="List the models SkillKit knows: context window, output limit, "
        "prices in USD per million tokens, and capabilities. QUERY is matched loosely "
        "('sonnet 4.5', 'gpt5', 'kimi').",
    )
    parser.add_argument(
        "query", nargs="*", help="filter models by name (several words are one query)"
    )
    parser.add_argument("--provider", "-p", help="only this provider (e.g. openai, ollama)")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead")
    parser.set_defaults(handler=run_models)


def run_models(args: argparse.Namespace) -> int:
    """Print the matching models (of the assembly's model registry, handed down in
    ``args.make_model_registry``; else the default one); exit 1 when nothing matches, 2
    for an unknown provider."""
    from skillkit.model_registry import default_registry
    from skillkit.models import to_json

    make = getattr(args, "make_model_registry", None)
    registry = make() if make is not None else default_registry()
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
    query = " ".join(args.query)
    models = registry.find(query, provider=provider)
    if not models:
        where = f" from {provider}" if provider else ""
        print(f"skillkit: models: no model{where} matches '{query}'", file=sys.stderr)
        return 1
    if args.json:
        for model in models:
            sys.stdout.write(to_json(model).decode() + "\n")
        return 0
    if sys.stdout.isatty():
        _print_table(models)
    else:
        sys.stdout.write(format_plain(models))
    return 0


_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Provider", "left"),
    ("Model", "left"),
    ("Context", "right"),
    ("Max out", "right"),
    ("Input", "right"),
    ("Output", "right"),
    ("Cache r/w", "right"),
    ("Capabilities", "left"),
)
"""The columns, with their alignment; prices are in USD per million tokens."""


def _cells(model: ModelDefinition) -> list[str]:
    cost = model.cost
    return [
        model.provider,
        model.id,
        _tokens(model.context_window),
        _tokens(model.max_output_tokens),
        _price(cost.input) + ("+" if cost.tiers else ""),
        _price(cost.output),
        f"{_price(cost.cache_read)}/{_price(cost.cache_write)}",
        ",".join(sorted(model.capabilities - {"text"})) or "-",
    ]


def format_plain(models: list[ModelDefinition]) -> str:
    """The models as plain text: a header line and one line per model, columns aligned
    with spaces and nothing cut, for pipes and files (``skillkit models | grep sonnet``).
    Every cell is one word (capabilities are joined by commas), so
    ``awk '{print $2}'`` gives the model ids."""
    rows = [[header.lower().replace(" ", "_") for header, _ in _COLUMNS]]
    rows.extend(_cells(model) for model in models)
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if justify == "right" else cell.ljust(width)
            for cell, width, (_, justify) in zip(row, widths, _COLUMNS, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _print_table(models: list[ModelDefinition]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Models (prices in USD per million tokens)", title_justify="left")
    longest = max(len(model.id) for model in models)
    for header, justify in _COLUMNS:
        if header == "Model":  # never wrapped, never cut: the other columns give way
            table.add_column(header, no_wrap=True, min_width=longest)
        else:
            table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for model in models:
        cells = _cells(model)
        cells[-1] = cells[-1].replace(",", ", ")
        table.add_row(*cells)
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
