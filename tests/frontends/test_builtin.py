"""SkillKit's own frontends (`skillkit.frontends.builtin`), handed to the built-in plugin."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from skillkit.extensions import Frontend, PluginManager, TrustStore
from skillkit.frontends.builtin import BUILTIN_FRONTENDS, PrintFrontend, builtin_frontends
from tests.extensions.conftest import Model, make_runner
from tests.frontends.faces import session_of


def test_the_builtin_frontends_are_named_and_described() -> None:
    factories = builtin_frontends()
    assert [f.name for f in factories] == ["interactive", "print", "json"]
    assert all(f.description for f in factories)
    assert [f.factory for f in factories] == list(BUILTIN_FRONTENDS.values())


async def test_the_print_frontend_runs_a_prompt(tmp_path: Path) -> None:
    manager = PluginManager.for_project(
        tmp_path,
        entry_points=False,
        store=TrustStore(tmp_path / "trust.json"),
        home=tmp_path,
        frontends=builtin_frontends(),
    )
    out, err = io.StringIO(), io.StringIO()
    frontend = manager.registries.frontends.create("print", prompt="hi", out=out, err=err)
    assert isinstance(frontend, PrintFrontend) and isinstance(frontend, Frontend)
    session = session_of(make_runner(Model("hello there")), manager=manager)
    code = await frontend.run(session)
    await session.aclose()
    assert (code, out.getvalue(), err.getvalue()) == (0, "hello there\n", "")
    with pytest.raises(KeyError, match="no frontend named 'web'"):
        manager.registries.frontends.create("web")
