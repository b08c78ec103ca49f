"""What a model is: `ModelDefinition` (with its `ModelCost` and `CostTier` prices and
its server's `ModelCompat` quirks) and `ProviderInfo`, a provider's defaults. Plain
data: every type round-trips through JSON (`skillkit.models.to_json` / `from_json`)."""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from skillkit.models import TokenUsage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "OPENAI_COMPATIBLE",
    "CostTier",
    "ModelApi",
    "ModelCompat",
    "ModelCost",
    "ModelDefinition",
    "ProviderInfo",
]

ModelApi: TypeAlias = Literal["openai-completions", "openai-responses", "anthropic-messages"]
"""The wire protocol a model is spoken to with: OpenAI Chat Completions (also every
OpenAI-compatible server), the OpenAI Responses API, or the Anthropic Messages API."""

OPENAI_COMPATIBLE = "openai-compatible"
"""Provider name given to models that are not in the registry but were reached through a
``base_url`` whose host matches no known provider."""

DEFAULT_CONTEXT_WINDOW = 128_000
"""Context window assumed for a model the registry does not know."""

DEFAULT_MAX_OUTPUT_TOKENS = 16_384
"""Output limit assumed for a model the registry does not know."""

_MILLION = 1_000_000.0


class ModelCompat(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """How one model's OpenAI-compatible server departs from OpenAI's own behaviour.

    Adapters read these flags instead of special-casing providers. Every default is what
    OpenAI's Chat Completions API does, so an empty `ModelCompat()` means "behaves like
    OpenAI". Flags that do not apply to a model's `ModelApi` are ignored.

    - ``assistant_content_null_rejected``: the server rejects an assistant message whose
      ``content`` is ``null`` (a turn with only tool calls); send ``""`` instead.
    - ``repeated_tool_call_ids_in_deltas``: the server repeats the tool-call ``id`` (and
      ``name``) on every streamed delta of the same call; a repeated id continues the
      open call rather than starting a new one (calls are keyed by ``index``).
    - ``no_stream_usage``: the server sends no usage in the stream or rejects
      ``stream_options``; do not send ``stream_options.include_usage`` and count usage
      another way.
    - ``reasoning_field``: the name of the delta / message field that carries reasoning
      text (``"reasoning_content"``, ``"reasoning"``), or ``None`` when the server sends
      none.
    - ``think_tags``: reasoning arrives inline in ``content`` wrapped in
      ``<think>...</think>``; split it out as thinking.
    - ``replay_reasoning``: earlier reasoning must be sent back on assistant messages (in
      ``reasoning_field``) while a tool-call loop is running, or the server rejects the
      request or loses its chain of thought.
    - ``max_tokens_field``: the request field that limits output tokens.
    - ``tool_call_id_length``: the server accepts only tool-call ids of exactly this many
      ASCII letters and digits (Mistral: 9); ids made by other providers must be rewritten.
    """

    assistant_content_null_rejected: bool = False
    repeated_tool_call_ids_in_deltas: bool = False
    no_stream_usage: bool = False
    reasoning_field: str | None = None
    think_tags: bool = False
    replay_reasoning: bool = False
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    tool_call_id_length: int | None = None


class CostTier(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Prices in USD per million tokens that replace the base prices for a whole call
    once its prompt (input + cache read + cache write tokens) exceeds ``above`` tokens."""

    above: int
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelCost(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Prices in USD per million tokens: uncached input, output, cache reads and cache
    writes, plus optional long-context `CostTier` s (sorted by ``above``)."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[CostTier, ...] = ()

    def __post_init__(self) -> None:
        prices = [self.input, self.output, self.cache_read, self.cache_write]
        for tier in self.tiers:
            prices += [tier.input, tier.output, tier.cache_read, tier.cache_write]
            if tier.above < 0:
                raise ValueError(f"cost tier threshold must not be negative: {tier.above}")
        if any(not price >= 0 for price in prices):  # also rejects NaN
            raise ValueError(f"prices must be non-negative numbers: {prices}")
        thresholds = [tier.above for tier in self.tiers]
        if thresholds != sorted(thresholds):
            msgspec.structs.force_setattr(
                self, "tiers", tuple(sorted(self.tiers, key=lambda tier: tier.above))
            )

    def rates_for(self, prompt_tokens: int) -> tuple[float, float, float, float]:
        """(input, output, cache_read, cache_write) per million for a call whose prompt
        has ``prompt_tokens`` tokens."""
        for tier in reversed(self.tiers):
            if prompt_tokens > tier.above:
                return tier.input, tier.output, tier.cache_read, tier.cache_write
        return self.input, self.output, self.cache_read, self.cache_write

    def cost_of(self, usage: TokenUsage) -> float:
        """The price in USD of one call's ``usage``. For a sum of several calls the tier
        is chosen by the summed prompt, which can overstate long-context surcharges."""
        rate_in, rate_out, rate_read, rate_write = self.rates_for(usage.prompt_tokens)
        return (
            usage.input * rate_in
            + usage.output * rate_out
            + usage.cache_read * rate_read
            + usage.cache_write * rate_write
        ) / _MILLION

    def cache_savings(self, usage: TokenUsage) -> float:
        """What prompt caching saved on ``usage``, in USD: its cache reads priced at the
        input price minus their price as cache reads (at the rates `rates_for` picks for
        the whole prompt). Never negative; 0.0 without cache reads. The premium some
        providers charge for cache writes is not subtracted: it is part of `cost_of`."""
        if usage.cache_read <= 0:
            return 0.0
        rate_in, _, rate_read, _ = self.rates_for(usage.prompt_tokens)
        return max(0.0, usage.cache_read * (rate_in - rate_read) / _MILLION)


class ModelDefinition(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """Everything SkillKit knows about one model of one provider.

    ``id`` is what the provider's API expects as the model name. ``context_window`` is
    the maximum prompt size in tokens and drives compaction; ``max_output_tokens`` the
    largest output one call may ask for. ``capabilities`` uses the words ``text``,
    ``image``, ``pdf``, ``audio``, ``video`` (accepted inputs), ``tool_use``,
    ``reasoning`` and ``structured_output`` (the provider's native JSON-schema output:
    structured output runs use it instead of a final tool). ``base_url`` and
    ``api_key_env`` are where and with which environment variable the provider is
    reached by default (``None`` / empty: the SDK's default
    endpoint / no key needed). ``aliases`` are other names the provider accepts for the
    same model (dated snapshots, ``-latest`` names).
    """

    id: str
    provider: str
    context_window: int
    max_output_tokens: int
    api: ModelApi = "openai-completions"
    display_name: str = ""
    cost: ModelCost = msgspec.field(default_factory=lambda: ModelCost(0.0, 0.0))
    capabilities: frozenset[str] = frozenset({"text"})
    reasoning: bool = False
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    compat: ModelCompat = msgspec.field(default_factory=ModelCompat)
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id or not self.provider:
            raise ValueError("a model needs a non-empty id and provider")
        if self.context_window <= 0 or self.max_output_tokens <= 0:
            raise ValueError(
                f"model {self.id!r}: context_window and max_output_tokens must be positive"
            )

    @property
    def name(self) -> str:
        """The display name, or the id when there is none."""
        return self.display_name or self.id

    @property
    def key(self) -> str:
        """``provider:id``, unique in a registry."""
        return f"{self.provider}:{self.id}"


class ProviderInfo(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """A provider's defaults: wire API, endpoint, the environment variables its key is
    read from (first set one wins), compatibility flags, and whether it runs locally
    (local servers need no key)."""

    name: str
    display_name: str = ""
    api: ModelApi = "openai-completions"
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    compat: ModelCompat = msgspec.field(default_factory=ModelCompat)
    local: bool = False
