"""Cost of the model registry: import, first catalog decode, resolution and fuzzy find.

    python bench/model_registry.py

Prints wall-clock numbers; nothing is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time


def main() -> None:
    code = (
        "import time, skillkit.models; t = time.perf_counter(); "
        "import skillkit.model_registry; print(time.perf_counter() - t)"
    )
    imports = [float(subprocess.check_output([sys.executable, "-c", code])) for _ in range(5)]
    print(f"import skillkit.model_registry after skillkit.models: {1e3 * min(imports):.2f} ms")

    from skillkit import model_registry as registry_module
    from skillkit.models import TokenUsage

    start = time.perf_counter()
    catalog = registry_module.load_catalog()
    decoded = time.perf_counter() - start
    print(f"first catalog decode: {1e3 * decoded:.2f} ms ({len(catalog.models)} models)")

    registry = registry_module.ModelRegistry()
    start = time.perf_counter()
    registry.get("gpt-4o")
    print(f"registry fill from decoded catalog: {1e3 * (time.perf_counter() - start):.3f} ms")

    for label, text in (("provider:model", "anthropic:claude-sonnet-4-5"), ("bare id", "gpt-4o")):
        rounds = 20_000
        start = time.perf_counter()
        for _ in range(rounds):
            registry_module.resolve_model(text, registry=registry, env={})
        per_call = (time.perf_counter() - start) / rounds
        print(f"resolve_model({label}): {1e6 * per_call:.2f} us")

    usage = TokenUsage(input=12_000, output=800, cache_read=40_000)
    rounds = 100_000
    start = time.perf_counter()
    for _ in range(rounds):
        registry.calculate_cost("claude-sonnet-4-5", usage)
    print(f"calculate_cost: {1e6 * (time.perf_counter() - start) / rounds:.2f} us")

    for query in ("sonnet 4.5", "claude-sonet-4-5"):
        rounds = 200
        start = time.perf_counter()
        for _ in range(rounds):
            registry.find(query)
        print(f"find({query!r}): {1e6 * (time.perf_counter() - start) / rounds:.0f} us")


if __name__ == "__main__":
    main()
