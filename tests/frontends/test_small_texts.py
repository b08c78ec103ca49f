"""Small texts the faces show: /help lists ``!command``, /cost on a free model, and the
doctor's rows of keyless providers."""

from __future__ import annotations

from skillkit.commands.builtin import _cache_line
from skillkit.doctor import _providers
from skillkit.model_registry import default_registry
from skillkit.models import TokenUsage


def test_cost_on_a_free_model_says_there_is_nothing_to_save() -> None:
    model = default_registry().get("ollama:qwen3:8b")
    assert model is not None and model.cost.input == 0
    line = _cache_line(TokenUsage(input=10, output=1, cache_read=500), model)
    assert (
        line == "caching: 500 tokens read from cache (the model's input is free: nothing to save)"
    )
    assert "$0/M" not in line


def test_doctor_names_a_keyless_provider_without_empty_brackets() -> None:
    section = _providers({})
    rows = [text for _, text in section.rows if "no key needed" in text]
    assert rows
    assert not any("()" in text for text in rows)
