"""What a runner knows about its models: the `ModelRegistry` it was given, the context
window and price of a model as that registry gives them, and the compaction settings
that keep the transcript within that window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.agent import parts
from skillkit.context import CompactionResult, CompactionSettings, ContextBudget, RendererRegistry

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.config import AgentConfig
    from skillkit.model_registry import ModelRegistry
    from skillkit.models import TokenUsage

__all__ = ["ModelFacts"]


class ModelFacts:
    """The runner's model facts (a part of `AgentRunner`): ``_models`` is the registry
    passed in, or None until `models` makes the runner's own."""

    _models: ModelRegistry | None
    _compaction: CompactionSettings
    _budget: ContextBudget | None
    _run_start: int
    config: AgentConfig
    adapter: LLMAdapter
    renderers: RendererRegistry

    @property
    def compaction(self) -> CompactionSettings:
        """How the context is kept within the model's window (see ``docs/context.md``);
        assign new settings to change it from the next turn on."""
        return self._compaction

    @compaction.setter
    def compaction(self, settings: CompactionSettings) -> None:
        if not isinstance(settings, CompactionSettings):
            raise TypeError(f"compaction must be CompactionSettings, got {type(settings).__name__}")
        self._compaction = settings
        self._budget = parts.context_budget(
            settings, self.renderers, self._compacted, self.context_window
        )

    @property
    def models(self) -> ModelRegistry:
        """The model registry this runner reads windows, prices and capabilities from:
        the one it was given, else its own with the built-in catalog (made on first use;
        never the process's `default_registry`, which a caller passes to share it)."""
        if self._models is None:
            from skillkit.model_registry import ModelRegistry

            self._models = ModelRegistry()
        return self._models

    def context_window(self, model: str) -> int | None:
        """``model``'s context window as `models` gives it (None: unknown)."""
        return parts.catalog_window(self.models, model)

    def _catalog_cost(self, usage: TokenUsage) -> float | None:
        return parts.catalog_cost(self.models, self.config, self.adapter, usage)

    def _compacted(self, result: CompactionResult) -> None:
        self._run_start = result.new_index(self._run_start)
