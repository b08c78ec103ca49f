"""`choose_model` and the settings files' ``model`` entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillkit.model_registry import default_registry, resolve_model
from skillkit.model_registry.choice import (
    PROVIDER_DEFAULT_MODELS,
    ModelSettings,
    choose_model,
    load_model_settings,
    read_model_entry,
)


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_every_provider_default_is_in_the_catalog() -> None:
    for variable, model in PROVIDER_DEFAULT_MODELS:
        definition = default_registry().get(model)
        assert definition is not None, model
        assert variable in definition.api_key_env


def test_the_order_flag_env_settings_key_local() -> None:
    settings = ModelSettings(model="ollama:qwen3:8b", source="/s.json")
    env = {"SKILLKIT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "k"}
    assert choose_model(model="x:y", settings=settings, environ=env).source == "--model"
    assert choose_model(settings=settings, environ=env).model == "openai:gpt-4.1"
    del env["SKILLKIT_MODEL"]
    chosen = choose_model(settings=settings, environ=env)
    assert (chosen.model, chosen.source) == ("ollama:qwen3:8b", "/s.json")
    chosen = choose_model(environ=env)
    assert chosen.model == "openai:gpt-4o" and chosen.source == "OPENAI_API_KEY is set"
    assert chosen.notice is not None and "openai:gpt-4o" in chosen.notice
    both = choose_model(environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert both.model == "anthropic:claude-sonnet-4-5"
    local = choose_model(environ={}, local_notice="tiny")
    assert (local.model, local.notice) == ("local", "tiny")
    assert local.source == "default: no model named, no provider key found"


def test_a_settings_endpoint_never_goes_with_another_model() -> None:
    settings = ModelSettings(model="m", base_url="http://evil/v1", api_key_env="AWS_SECRET")
    chosen = choose_model(model="openai:gpt-4o", settings=settings, environ={})
    assert chosen.base_url is None and chosen.api_key_env is None
    chosen = choose_model(settings=settings, environ={})
    assert chosen.base_url == "http://evil/v1" and chosen.api_key_env == "AWS_SECRET"


def test_project_settings_count_only_when_trusted(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".skillkit" / "settings.json", {"model": "anthropic:claude-sonnet-4-5"})
    _write(work / ".skillkit" / "settings.json", {"model": {"name": "a", "provider": "ollama"}})
    _write(work / ".skillkit" / "settings.local.json", {"model": "openai:gpt-4o"})
    untrusted = load_model_settings(work, trusted=False, home=home)
    assert untrusted.model == "anthropic:claude-sonnet-4-5"
    assert len(untrusted.ignored) == 2 and "not trusted" in untrusted.ignored[0]
    trusted = load_model_settings(work, trusted=True, home=home)
    assert trusted.model == "openai:gpt-4o" and trusted.ignored == ()
    assert trusted.source == str(work / ".skillkit" / "settings.local.json")


def test_a_workspace_at_home_reads_the_user_file_as_the_users(tmp_path: Path) -> None:
    _write(tmp_path / ".skillkit" / "settings.json", {"model": "openai:gpt-4o"})
    found = load_model_settings(tmp_path, trusted=False, home=tmp_path)
    assert found.model == "openai:gpt-4o" and found.ignored == ()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (3, "must be a model string or an object"),
        ({"provider": "openai"}, "needs a 'name'"),
        ({"name": 1}, "'model.name' must be a string"),
        ({"name": "x", "options": []}, "'model.options' must be an object"),
    ],
)
def test_malformed_entries_are_problems(value: object, problem: str) -> None:
    entry, found = read_model_entry(value, "f.json")
    assert entry is None and found is not None and problem in found


def test_an_unknown_key_is_a_problem_but_the_entry_is_kept() -> None:
    entry, found = read_model_entry({"name": "x", "base": "y"}, "f.json")
    assert entry is not None and entry.model == "x"
    assert found is not None and "unknown key(s) in 'model' not used: base" in found


def test_a_model_entry_declares_its_capabilities(tmp_path: Path) -> None:
    model = {
        "name": "m",
        "provider": "openai-compatible",
        "base_url": "http://gpu:8000/v1",
        "capabilities": ["text", "tool_use"],
    }
    _write(tmp_path / ".skillkit" / "settings.json", {"model": model})
    settings = load_model_settings(tmp_path / "w", trusted=False, home=tmp_path)
    assert settings.problems == () and settings.capabilities == {"text", "tool_use"}
    choice = choose_model(settings=settings, environ={})
    assert choice.model == "openai-compatible:m" and choice.capabilities == {"text", "tool_use"}
    assert choice.base_url == "http://gpu:8000/v1"


@pytest.mark.parametrize(
    ("capabilities", "kept", "problem"),
    [
        (["text", "vision"], {"text"}, "unknown capabilities vision not used"),
        ("text", None, "'model.capabilities' must be a list of strings"),
    ],
)
def test_bad_capabilities_are_a_problem_and_the_model_is_still_used(
    capabilities: object, kept: set[str] | None, problem: str
) -> None:
    entry, found = read_model_entry({"name": "m", "capabilities": capabilities}, "f.json")
    assert entry is not None and entry.model == "m" and entry.capabilities == kept
    assert found is not None and problem in found


def test_unreadable_settings_are_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / ".skillkit").mkdir()
    (tmp_path / ".skillkit" / "settings.json").write_bytes(b"{not json")
    found = load_model_settings(tmp_path / "w", trusted=True, home=tmp_path)
    assert found.model is None and len(found.problems) == 1


def test_sdk_base_url_variables_keep_the_providers_key() -> None:
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_API_KEY": "sk-1"}
    resolved = resolve_model("openai:gpt-4o", env=env)
    assert resolved.base_url == "https://proxy.example/v1" and resolved.api_key == "sk-1"
    env = {"ANTHROPIC_BASE_URL": "https://gw.example", "ANTHROPIC_API_KEY": "sk-2"}
    resolved = resolve_model("anthropic:claude-sonnet-4-5", env=env)
    assert resolved.base_url == "https://gw.example" and resolved.api_key == "sk-2"
    # another provider's model keeps its own endpoint
    resolved = resolve_model("deepseek:deepseek-v4-flash", env={"OPENAI_BASE_URL": "http://x"})
    assert resolved.base_url != "http://x"
    compatible = resolve_model("openai-compatible:m", env={"OPENAI_BASE_URL": "http://127.0.0.1:1"})
    assert compatible.base_url == "http://127.0.0.1:1" and compatible.local
    explicit = resolve_model("openai:gpt-4o", base_url="http://other.example", env=env)
    assert explicit.base_url == "http://other.example"
