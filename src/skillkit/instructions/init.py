"""`write_starter`: the starter ``AGENTS.md`` that ``/init`` writes.

The file is a short outline for the project's own words: what the project is, how to
build and test it, its conventions. Where the folder shows how it is built
(``pyproject.toml``, ``package.json``, ``Cargo.toml``, ``go.mod``, ``Makefile``), the
usual commands are filled in as a first guess to correct. An existing file is never
overwritten: the file is created exclusively, so even a file that appears between the
check and the write is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["STARTER_NAME", "starter_text", "write_starter"]

STARTER_NAME = "AGENTS.md"

_BUILDS = (
    ("pyproject.toml", "python -m pytest", "ruff check . (if the project uses ruff)"),
    ("package.json", "npm test", "npm run lint (if defined)"),
    ("Cargo.toml", "cargo test", "cargo clippy"),
    ("go.mod", "go test ./...", "go vet ./..."),
    ("Makefile", "make test (if defined)", "make lint (if defined)"),
)


def starter_text(folder: Path) -> str:
    """The starter file's text for ``folder``."""
    commands: list[str] = []
    for marker, test, lint in _BUILDS:
        if (folder / marker).is_file():
            commands.append(f"- Test: `{test}`  (found {marker})")
            commands.append(f"- Lint: `{lint}`")
    if not commands:
        commands = ["- Build: <command>", "- Test: <command>", "- Lint: <command>"]
    name = folder.name or "this project"
    return (
        f"# {name}\n\n"
        "Instructions for coding agents working in this repository. SkillKit reads this\n"
        "file (and CLAUDE.md) from every folder between the repository root and the\n"
        "working directory, and puts it in the system prompt. Keep it short and true.\n\n"
        "## What this project is\n\n"
        "<one paragraph: what it does, the main folders>\n\n"
        "## Commands\n\n" + "\n".join(commands) + "\n\n"
        "## Conventions\n\n"
        "- <code style, naming, how errors are handled>\n"
        "- <what must never be done (secrets, generated files, ...)>\n\n"
        "## Before you finish\n\n"
        "- Run the tests and the linter; make sure both pass.\n"
    )


def write_starter(folder: str | os.PathLike[str]) -> Path:
    """Write ``AGENTS.md`` in ``folder`` and return its path. Raises `FileExistsError`
    when the file exists (nothing is written) and `OSError` when it cannot be written."""
    path = Path(folder) / STARTER_NAME
    text = starter_text(Path(os.path.abspath(folder)))
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    return path
