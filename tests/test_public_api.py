"""The public names are written down in docs/api.md and all resolve."""

from __future__ import annotations

import re
import subprocess
import sys
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
