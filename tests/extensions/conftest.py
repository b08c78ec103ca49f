"""Helpers for the extension tests: a runner whose model records what it was sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.extensions import PluginManager, Registries
from skillkit.models import AgentMessage, LLMRequest
from skillkit.skills import SkillRegistry


class Model:
    """A scripted model: plays ``replies`` and keeps every request."""

    def __init__(self, *replies: Reply | str) -> None:
        self.replies = list(replies)
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> Reply | str:
        self.requests.append(request)
        return self.replies.pop(0) if self.replies else "done"

    @property
    def last(self) -> LLMRequest:
        return self.requests[-1]


def make_runner(
    model: Model | None = None, messages: Sequence[AgentMessage] = (), **config: Any
) -> AgentRunner:
    adapter = FunctionAdapter(model or Model(), model="test-model")
    return AgentRunner(AgentConfig(**config), adapter, messages=messages)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME (no user skills, no trust store) and working folder."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLKIT_TRUST_PROJECT", raising=False)
    return home


@pytest.fixture
def manager_factory(tmp_path: Path, isolated_home: Path) -> Callable[..., PluginManager]:
    """Managers with the built-in plugin and a skill registry rooted in a temp project."""

    def make(*plugins: object, builtin: bool = True) -> PluginManager:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        skills = SkillRegistry(cwd=project, home=isolated_home, default_sources=False)
        manager = PluginManager(Registries(skills=skills))
        if builtin:
            manager.load_builtin()
        for index, plugin in enumerate(plugins):
            manager.register(plugin, getattr(plugin, "name", None) or f"plugin{index}")
        return manager

    return make
