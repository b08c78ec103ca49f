"""`AgentConfig` never shows its API key or auth header values when printed."""

from __future__ import annotations

import io

from rich.console import Console
from rich.pretty import pretty_repr

from skillkit import AgentConfig

KEY = "sk-live-0123456789abcdef"


def _config() -> AgentConfig:
    return AgentConfig(
        model="openai:gpt-test",
        api_key=KEY,
        options={
            "temperature": 0.2,
            "headers": {"Authorization": f"Bearer {KEY}", "X-Api-Key": KEY, "X-Trace": "t1"},
        },
    )


def test_repr_and_str_hide_the_key_and_auth_headers() -> None:
    config = _config()
    for shown in (repr(config), str(config), f"{config}", f"{config!r}"):
        assert KEY not in shown
        assert "api_key='***'" in shown
        assert "'X-Trace': 't1'" in shown and "'temperature': 0.2" in shown
    assert config.api_key == KEY  # the value itself is untouched


def test_rich_pretty_printing_hides_the_key_too() -> None:
    out = io.StringIO()
    Console(file=out, width=100).print(_config())
    assert KEY not in out.getvalue() and KEY not in pretty_repr(_config())
    assert "***" in out.getvalue()


def test_a_config_without_a_key_says_so() -> None:
    assert "api_key=None" in repr(AgentConfig(model="m"))
