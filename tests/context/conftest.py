"""Context tests count with the heuristic, whether or not tiktoken is installed."""

from __future__ import annotations

import pytest

from skillkit.context import tokens


@pytest.fixture(autouse=True)
def heuristic_tokens_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_tiktoken_missing", True)
    monkeypatch.setattr(tokens, "_tiktoken_cache", {})
