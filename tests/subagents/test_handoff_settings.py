"""``agents.handoff_to`` in the settings files: the most specific file wins, a project's
only once it is trusted, and a malformed entry is a problem line, never an error."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from skillkit.subagents.settings import load_handoff_settings


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_users_file_names_the_agents(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".skillkit" / "settings.json", {"agents": {"handoff_to": ["a", "b", "a"]}})
    found = load_handoff_settings(work, home=home, trusted=False)
    assert found.handoff_to == ("a", "b")
    assert found.source == str(home / ".skillkit" / "settings.json")
    assert found.problems == [] and found.ignored == []


def test_a_trusted_projects_file_wins_and_an_untrusted_one_is_left_out(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".skillkit" / "settings.json", {"agents": {"handoff_to": ["a"]}})
    _write(work / ".skillkit" / "settings.json", {"agents": {"handoff_to": "b, c"}})
    assert load_handoff_settings(work, home=home, trusted=True).handoff_to == ("b", "c")
    untrusted = load_handoff_settings(work, home=home, trusted=False)
    assert untrusted.handoff_to == ("a",)
    assert len(untrusted.ignored) == 1 and "not trusted" in untrusted.ignored[0]


def test_malformed_entries_are_problems(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".skillkit" / "settings.json", {"agents": {"handoff_to": [1, "a"]}})
    _write(work / ".skillkit" / "settings.json", {"agents": "reviewer"})
    (work / ".skillkit" / "settings.local.json").write_text("{not json")
    found = load_handoff_settings(work, home=home, trusted=True)
    assert found.handoff_to == ()
    assert len(found.problems) == 3


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )
)
def test_any_json_value_is_read_without_raising(value: object) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        _write(home / ".skillkit" / "settings.json", {"agents": {"handoff_to": value}})
        found = load_handoff_settings(home / "work", home=home, trusted=True)
        assert all(isinstance(name, str) and name for name in found.handoff_to)
