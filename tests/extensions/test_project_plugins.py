"""Project-local plugin files run only in a trusted project; broken ones are isolated."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from skillkit.extensions import PluginManager, TrustStore
from skillkit.extensions.trust import decide_trust

PLUGIN = """
from skillkit import tool
from skillkit.extensions import hookimpl

@tool
def {name}(text: str) -> str:
    '''A project tool.'''
    return "{reply}"

@hookimpl
def skillkit_register_tools(registry):
    registry.register({name})
"""


def make_project(root: Path, **files: str) -> Path:
    folder = root / ".skillkit" / "plugins"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)
    return root


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    return make_project(
        tmp_path / "project",
        stamp=PLUGIN.format(name="stamp", reply="v1"),
        broken="raise RuntimeError('this plugin is broken')\n",
        _helper="raise AssertionError('files starting with _ are not plugins')\n",
    )


def test_untrusted_project_plugins_do_not_run(project: Path, tmp_path: Path) -> None:
    manager = PluginManager()
    loaded = manager.load_project_plugins(project, store=TrustStore(tmp_path / "trust.json"))
    assert loaded == []
    assert "stamp" not in manager.registries.tools
    assert manager.failures == []
    [notice] = manager.notices
    assert notice.startswith("project plugins not loaded (broken.py, stamp.py):")
    assert "not trusted" in notice


def test_trusted_project_plugins_run_and_a_broken_one_is_isolated(
    project: Path, tmp_path: Path
) -> None:
    manager = PluginManager()
    loaded = manager.load_project_plugins(project, trusted=True)
    assert [info.name for info in loaded] == ["project:stamp"]
    assert manager.registries.tools.source_of("stamp") == "project:stamp"
    info = manager.info("project:stamp")
    assert info is not None and info.origin == "project"
    assert info.location == str(project / ".skillkit" / "plugins" / "stamp.py")
    [failure] = manager.failures
    assert str(failure) == (
        "plugin 'project:broken' failed to load: RuntimeError: this plugin is broken"
    )


def test_a_yes_at_the_prompt_is_remembered(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    asked: list[tuple[Path, list[str]]] = []

    def ask(folder: Path, files: Sequence[Path]) -> bool:
        asked.append((folder, [f.name for f in files]))
        return True

    PluginManager().load_project_plugins(project, ask=ask, store=store)
    assert asked == [(project.resolve(), ["broken.py", "stamp.py"])]
    assert store.is_trusted(project)

    manager = PluginManager()
    manager.load_project_plugins(project, ask=ask, store=store)
    assert len(asked) == 1  # not asked again
    assert "stamp" in manager.registries.tools


def test_a_no_at_the_prompt_loads_nothing_and_is_not_remembered(
    project: Path, tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "trust.json")
    manager = PluginManager()
    manager.load_project_plugins(project, ask=lambda folder, files: False, store=store)
    assert "stamp" not in manager.registries.tools
    assert not store.is_trusted(project)


def test_the_environment_setting_trusts_or_refuses(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.trust(project)
    monkeypatch.setenv("SKILLKIT_TRUST_PROJECT", "0")
    assert decide_trust(project, [], store=store)[0] is False
    monkeypatch.setenv("SKILLKIT_TRUST_PROJECT", "yes")
    store.untrust(project)
    manager = PluginManager()
    manager.load_project_plugins(project, store=store)
    assert "stamp" in manager.registries.tools


def test_reload_picks_up_an_edited_project_plugin(project: Path) -> None:
    manager = PluginManager()
    manager.load_project_plugins(project, trusted=True)
    plugin_file = project / ".skillkit" / "plugins" / "stamp.py"
    plugin_file.write_text(PLUGIN.format(name="stamp2", reply="v2"))
    manager.reload()
    assert "stamp" not in manager.registries.tools
    assert manager.registries.tools.source_of("stamp2") == "project:stamp"


def test_trust_store_survives_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text("{not json")
    store = TrustStore(path)
    assert store.projects() == []
    store.trust(tmp_path)
    assert store.projects() == [tmp_path.resolve()]
    assert store.untrust(tmp_path) is True
    assert store.untrust(tmp_path) is False
