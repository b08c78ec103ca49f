from __future__ import annotations

import pytest

from skillkit.adapters.registry import AdapterNotFoundError, AdapterRegistry
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.models import LLMRequest, UserMessage


def make(text: str = "hi") -> ScriptedAdapter:
    return ScriptedAdapter([text], cycle=True)


def test_registered_adapter_is_returned_by_name() -> None:
    registry = AdapterRegistry()
    adapter = make()
    registry.register("local", adapter)
    assert registry.get("local") is adapter
    assert "local" in registry
    assert registry.list() == ["local"]
    assert len(registry) == 1


async def test_adapter_from_registry_streams() -> None:
    registry = AdapterRegistry()
    registry.register("local", make("hello there"))
    request = LLMRequest(model="scripted", messages=[UserMessage("hi")])
    reply = await registry.get("local").chat(request)
    assert reply.text == "hello there"


def test_names_keep_registration_order() -> None:
    registry = AdapterRegistry()
    for name in ("b", "a", "c"):
        registry.register(name, make())
    assert registry.list() == ["b", "a", "c"]
    assert list(registry) == ["b", "a", "c"]


def test_registering_a_taken_name_fails_unless_replace() -> None:
    registry = AdapterRegistry()
    first, second = make(), make()
    registry.register("x", first, source="plugin-a")
    with pytest.raises(ValueError, match="already registered by plugin-a"):
        registry.register("x", second)
    registry.register("x", second, source="plugin-b", replace=True)
    assert registry.get("x") is second
    assert registry.source_of("x") == "plugin-b"


def test_unregister_returns_the_adapter_and_tolerates_unknown_names() -> None:
    registry = AdapterRegistry()
    adapter = make()
    registry.register("x", adapter)
    assert registry.unregister("x") is adapter
    assert registry.unregister("x") is None
    assert "x" not in registry


def test_unregister_by_source_removes_only_that_sources_adapters() -> None:
    registry = AdapterRegistry()
    registry.register("a", make(), source="ext")
    registry.register("b", make())
    registry.register("c", make(), source="ext")
    assert registry.unregister_by_source("ext") == ["a", "c"]
    assert registry.list() == ["b"]
    assert registry.unregister_by_source("ext") == []


def test_get_unknown_name_raises_key_error_listing_known_names() -> None:
    registry = AdapterRegistry()
    registry.register("openai", make())
    registry.register("local", make())
    with pytest.raises(KeyError) as info:
        registry.get("anthropic")
    assert isinstance(info.value, AdapterNotFoundError)
    message = str(info.value)
    assert message == "no adapter named 'anthropic' (known: openai, local)"
    assert "\n" not in message


def test_get_on_empty_registry_says_none_registered() -> None:
    with pytest.raises(AdapterNotFoundError, match="none registered"):
        AdapterRegistry().get("x")


def test_register_rejects_non_adapters_and_empty_names() -> None:
    registry = AdapterRegistry()
    with pytest.raises(TypeError, match="not an LLMAdapter"):
        registry.register("x", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        registry.register("  ", make())
    assert registry.list() == []


def test_a_registry_sees_another_live_and_its_own_names_first() -> None:
    mine, theirs = AdapterRegistry(), AdapterRegistry()
    own, shadowed, added_later = (
        ScriptedAdapter(["own"]),
        ScriptedAdapter(["shadowed"]),
        ScriptedAdapter(["later"]),
    )
    mine.register("a", own, "me")
    theirs.register("a", shadowed, "them")
    forget = mine.see_also(theirs)
    theirs.register("b", added_later, "them")
    assert mine.get("a") is own and mine.source_of("a") == "me"
    assert mine.get("b") is added_later and mine.source_of("b") == "them"
    assert mine.list() == ["a", "b"] and len(mine) == 2 and "b" in mine
    assert mine.unregister("b") is None and theirs.get("b") is added_later
    assert mine.see_also(mine)() is None and theirs.see_also(mine)() is None
    forget()
    assert "b" not in mine
    with pytest.raises(AdapterNotFoundError, match="known: a"):
        mine.get("b")
