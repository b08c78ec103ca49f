"""``skillkit plugins``: list, trust and untrust."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from skillkit.extensions import TrustStore
from skillkit.frontends.plugins_cli import register


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["plugins", *argv])
    code: int = args.handler(args)
    return code


def test_trust_then_list_loads_the_project_plugin(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugins = tmp_path / "project" / ".skillkit" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "hello.py").write_text(
        "from skillkit.extensions import Command, hookimpl\n"
        "@hookimpl\n"
        "def skillkit_register_commands(registry):\n"
        "    registry.register(Command('hello', 'say hello', lambda ctx, args: 'hello'))\n"
    )
    project = str(tmp_path / "project")

    assert run("list", project) == 0
    untrusted = capsys.readouterr().out
    assert "project plugins not loaded (hello.py)" in untrusted

    assert run("trust", project) == 0
    assert (
        capsys.readouterr().out
        == f"trusted {Path(project).resolve()}: its plugin files may run (hello.py)\n"
    )
    assert TrustStore().is_trusted(project)

    assert run("list", project) == 0
    listing = capsys.readouterr().out
    assert "project:hello (project: " in listing and "  commands: hello" in listing

    assert run("untrust", project) == 0
    assert capsys.readouterr().out.endswith("is no longer trusted\n")
    assert not TrustStore().is_trusted(project)


def test_list_fails_when_a_plugin_is_broken(
    tmp_path: Path,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins = tmp_path / ".skillkit" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "bad.py").write_text("1/0\n")
    monkeypatch.setenv("SKILLKIT_TRUST_PROJECT", "1")
    assert run("list", str(tmp_path)) == 1
    assert "plugin 'project:bad' failed to load: ZeroDivisionError: division by zero" in (
        capsys.readouterr().out
    )
