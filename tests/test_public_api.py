"""The public names are written down in docs/api.md, all resolve, and none breaks
against the committed snapshot (tests/public_api.json)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import skillkit

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_top_level_names_match_the_documented_list() -> None:
    text = DOCS.read_text()
    section = text.split("## `skillkit` (top level)")[1].split("## ")[0]
    documented = set(re.findall(r"`(\w+)`", section)) - {"skillkit"}
    documented = {n for n in documented if not n.startswith("skillkit")}
    exported = set(skillkit.__all__) - {"__version__"}
    assert documented == exported


def test_every_exported_name_resolves() -> None:
    for name in skillkit.__all__:
        assert getattr(skillkit, name) is not None


def test_import_skillkit_loads_no_heavy_modules() -> None:
    code = (
        "import sys, skillkit; "
        "heavy = [m for m in ('pydantic', 'rich', 'prompt_toolkit', 'yaml', 'openai', 'anthropic') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- API snapshot


def test_public_api_has_no_breaking_change_against_the_snapshot() -> None:
    from tests.api_surface import additions, breaking_changes, extract, load_snapshot

    snapshot, current = load_snapshot(), extract()
    breaking = breaking_changes(snapshot, current)
    assert not breaking, (
        "breaking changes to the public API (a major release; if intended, run "
        "`python -m tests.api_surface --update`):\n  " + "\n  ".join(breaking)
    )
    added = additions(snapshot, current)
    if added:
        warnings.warn(
            "public names missing from tests/public_api.json (run "
            "`python -m tests.api_surface --update`): " + ", ".join(added),
            stacklevel=1,
        )


def test_removing_or_breaking_a_public_name_fails_the_api_check(tmp_path: Path) -> None:
    from tests.api_surface import SOURCE, additions, breaking_changes, extract, load_snapshot

    copy = tmp_path / "src"
    shutil.copytree(SOURCE / "skillkit", copy / "skillkit", ignore=shutil.ignore_patterns("*.pyc"))
    init = copy / "skillkit" / "extensions" / "__init__.py"
    init.write_text(init.read_text().replace('    "BlockDecision",\n', ""))
    dispatch = copy / "skillkit" / "commands" / "dispatch.py"
    text = dispatch.read_text()
    edited = text.replace(
        "self, command: Command, *, source: str | None = None, replace: bool = False",
        "self, command: Command, *, source: str | None = None, replace: bool",
    )
    assert edited != text
    dispatch.write_text(edited)

    breaking = breaking_changes(load_snapshot(), extract(copy))
    assert breaking == [
        "skillkit.commands.CommandRegistry.register: parameter 'replace' became required",
        "skillkit.extensions.BlockDecision: removed",
        "skillkit.extensions.CommandRegistry.register: parameter 'replace' became required",
        "skillkit.extensions.registries.CommandRegistry.register: "
        "parameter 'replace' became required",
    ]
    assert additions(load_snapshot(), extract(copy)) == []
