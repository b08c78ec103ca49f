"""Model metadata, cost and model strings, offline.

python examples/models.py
"""

from __future__ import annotations

from skillkit.model_registry import (
    ModelCost,
    ModelDefinition,
    ModelNotFoundError,
    ModelRegistry,
    resolve_model,
)
from skillkit.models import TokenUsage

registry = ModelRegistry()

# provider:model strings, bare ids, and unknown ids behind an OpenAI-compatible server
for text, base_url in [
    ("anthropic:claude-sonnet-4-5", None),
    ("MiniMax-M2.1", None),
    ("ollama:qwen3:8b", None),
    ("my-finetune", "http://127.0.0.1:8000/v1"),
]:
    resolved = resolve_model(text, base_url=base_url, registry=registry, env={})
    model = resolved.model
    print(
        f"{text!r:32} -> {resolved.provider}:{model.id} via {resolved.api}, "
        f"{model.context_window:,} tokens, key variable {resolved.api_key_env or '-'}"
    )

try:
    resolve_model("claude-sonet-4-5", registry=registry)
except ModelNotFoundError as exc:
    print(exc)

# cost of one call, cache reads included
usage = TokenUsage(input=12_000, output=800, cache_read=40_000)
for model_id in ("claude-sonnet-4-5", "gpt-4o", "deepseek-v4-flash"):
    print(f"{model_id:20} ${registry.calculate_cost(model_id, usage):.5f}")

# fuzzy search, and a model of your own
print([m.id for m in registry.find("sonnet", limit=3)])
registry.register(
    ModelDefinition(
        id="lab-coder",
        provider="lab",
        context_window=65_536,
        max_output_tokens=8_192,
        cost=ModelCost(input=0.1, output=0.2),
        base_url="http://127.0.0.1:9000/v1",
    )
)
print(resolve_model("lab-coder", registry=registry).base_url)
