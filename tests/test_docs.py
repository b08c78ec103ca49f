"""Every ```python block in docs/ runs, and prints what its page says it prints.

A page's blocks run in order, in one Python process per page, each as a program of its
own (a fresh namespace, top-level ``await`` allowed) in an empty working directory.
Marks on the line just before a fence change that:

    <!-- continues -->
        the block goes on from the one before it (same namespace), like the next cell
        of a notebook;
    <!-- not run: REASON -->
        the block is not meant to run (a plugin module, a fragment of a larger program,
        one that needs a hosted provider); the reason is required;
    <!-- output -->
        the fenced block is what the python block before it prints, exactly.

A ```console block marked ``<!-- run -->`` is run too: each ``$ COMMAND`` line in a shell
(the block's commands in one fresh folder that holds ``examples/``, with this
environment's ``skillkit`` first on PATH and no API keys), and what it prints, stdout and
stderr together, must be the lines that follow it. A mark must stand before a block.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_MARK = re.compile(r"<!--\s*(not run|output|continues|run)\s*(?::\s*(.*?))?\s*-->\s*\Z", re.S)

# Runs the blocks given as JSON on stdin ([name, source, continues]), each with its
# prints captured, and writes one JSON object per block to the file named by argv[1]:
# {"stdout": ..., "error": ...}; stops at the first block that fails.
_HARNESS = r"""
import ast, asyncio, contextlib, io, json, sys, traceback
blocks = json.load(sys.stdin)
namespace = {}
loop = asyncio.new_event_loop()
results = []
for name, source, continues in blocks:
    if not continues:
        namespace = {"__name__": "__main__"}
    out = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                loop.run_until_complete(result)
    except BaseException:
        error = traceback.format_exc()
    results.append({"stdout": out.getvalue(), "error": error})
    if error is not None:
        break
with open(sys.argv[1], "w", encoding="utf-8") as file:
    json.dump(results, file)
"""


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    mark: str | None  # "not run", "output", "continues", "run" or None
    reason: str | None

    @property
    def name(self) -> str:
        return f"docs/{self.page}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n")
        last_line = before.rsplit("\n", 1)[-1]
        mark = _MARK.search(last_line)
        blocks.append(
            Block(
                page=page.name,
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(1),
                text=match.group(2),
                mark=mark.group(1) if mark else None,
                reason=mark.group(2) if mark else None,
            )
        )
    return blocks


def folder_and_environment(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An empty working folder holding ``examples/`` (the pages name files there), and an
    environment with a home of its own, this environment's commands first on PATH and no
    API keys or SkillKit settings."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_BASE_URL")) and not key.startswith("SKILLKIT_")
    }
    path = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(HOME=str(home), PATH=path)
    return work, env


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def runnable_pages() -> list[Path]:
    return [
        page
        for page in pages()
        if any(b.language == "python" and b.mark != "not run" for b in blocks_of(page))
    ]


def test_every_mark_gives_a_reason_and_stands_before_a_block() -> None:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        marks = len(re.findall(r"<!--\s*(?:not run|output|continues|run)\b", text))
        marked = [b for b in blocks_of(page) if b.mark is not None]
        assert marks == len(marked), f"docs/{page.name}: a mark that stands before no block"
        for block in marked:
            if block.mark == "not run":
                assert block.reason, f"{block.name}: 'not run' needs a reason"
            if block.mark == "run":
                assert block.language == "console", f"{block.name}: 'run' marks console blocks"


def test_the_docs_have_python_blocks_that_run() -> None:
    runnable = [
        b for p in pages() for b in blocks_of(p) if b.language == "python" and b.mark != "not run"
    ]
    assert len(runnable) >= 20


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", runnable_pages(), ids=lambda page: page.name)
def test_the_python_blocks_of_the_page_run_and_print_what_it_says(
    page: Path, tmp_path: Path
) -> None:
    blocks = blocks_of(page)
    runs = [b for b in blocks if b.language == "python" and b.mark != "not run"]
    work, env = folder_and_environment(tmp_path)
    report = tmp_path / "report.json"
    process = subprocess.run(
        [sys.executable, "-c", _HARNESS, str(report)],
        input=json.dumps([[b.name, b.text, b.mark == "continues"] for b in runs]),
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert process.returncode == 0, process.stderr
    results = json.loads(report.read_text(encoding="utf-8"))
    for block, result in zip(runs, results, strict=False):
        assert result["error"] is None, f"{block.name} failed:\n{result['error']}"
    assert len(results) == len(runs)

    printed = {b.name: r["stdout"] for b, r in zip(runs, results, strict=True)}
    last_run: Block | None = None
    for block in blocks:
        if block.language == "python" and block.mark != "not run":
            last_run = block
        elif block.mark == "output":
            assert last_run is not None, f"{block.name}: output of no block"
            assert printed[last_run.name] == block.text, (
                f"{last_run.name} printed {printed[last_run.name]!r}, "
                f"{block.name} says {block.text!r}"
            )


def console_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks_of(p) if b.mark == "run"]


def test_the_docs_have_console_examples_that_run() -> None:
    assert len(console_blocks()) >= 5


@pytest.mark.timeout(300)
@pytest.mark.parametrize("block", console_blocks(), ids=lambda block: block.name)
def test_the_console_example_prints_what_the_page_says(block: Block, tmp_path: Path) -> None:
    work, env = folder_and_environment(tmp_path)
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{block.name}: output before the first command"
            steps[-1][1].append(line)
    assert steps
    for command, expected in steps:
        result = subprocess.run(
            ["sh", "-c", command],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        assert result.stdout.splitlines() == expected, f"{block.name}: $ {command}"
