"""`may_declare`: entry-point groups found without importlib.metadata, and "maybe"
wherever the layout is not plain folders (so a plugin is never missed)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from skillkit.extensions.declared import may_declare


def dist(folder: Path, name: str, entry_points: str | None) -> None:
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def test_a_declared_group_is_found(tmp_path: Path) -> None:
    dist(tmp_path, "plain", None)
    dist(tmp_path, "tool", "[console_scripts]\ntool = tool:main\n")
    assert may_declare("skillkit", [str(tmp_path)]) is False
    dist(tmp_path, "plugin", "[console_scripts]\nx = y:z\n\n[skillkit]\nplugin = plugin\n")
    assert may_declare("skillkit", [str(tmp_path)]) is True
    assert may_declare("skillkit.providers", [str(tmp_path)]) is False


def test_egg_info_folders_count_too(tmp_path: Path) -> None:
    info = tmp_path / "old.egg-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[skillkit]\nold = old\n")
    assert may_declare("skillkit", [str(tmp_path)]) is True


def test_a_zip_or_an_egg_on_the_path_is_a_maybe(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("pkg/__init__.py", "")
    assert may_declare("skillkit", [str(archive)]) is True
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "thing-1.0-py3.11.egg").mkdir()
    assert may_declare("skillkit", [str(tmp_path / "lib")]) is True


def test_a_missing_path_holds_nothing(tmp_path: Path) -> None:
    assert may_declare("skillkit", [str(tmp_path / "gone")]) is False


def test_it_agrees_with_importlib_metadata_on_this_interpreter() -> None:
    import importlib.metadata

    for group in ("skillkit", "skillkit.providers", "console_scripts"):
        if importlib.metadata.entry_points(group=group):
            assert may_declare(group) is True
