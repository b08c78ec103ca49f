"""The trust prompt: the files listed relative to the project, yes only for y/yes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from skillkit.frontends.trust_prompt import QUESTION, ask_trust


@pytest.mark.parametrize(
    ("typed", "trusted"),
    [("y\n", True), ("YES\n", True), (" yes \n", True), ("n\n", False), ("\n", False),
     ("", False), ("yep\n", False)],
)  # fmt: skip
def test_only_y_or_yes_trusts(tmp_path: Path, typed: str, trusted: bool) -> None:
    out = io.StringIO()
    files = [tmp_path / ".skillkit" / "plugins" / "guard.py"]

    assert ask_trust(tmp_path, files, stdin=io.StringIO(typed), out=out) is trusted

    lines = out.getvalue().splitlines()
    assert lines[1:3] == [f"  project: {tmp_path}", "  .skillkit/plugins/guard.py"]
    assert lines[3].startswith(QUESTION)
