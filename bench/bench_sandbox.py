"""Benchmark: the start-up the sandbox adds to each command SkillKit runs.

    python bench/bench_sandbox.py [--runs N] [--files N]

Each command is ``/bin/true`` started through `skillkit.runtime.spawn.run_process` (the
one place SkillKit starts processes for the model), four ways, interleaved run by run so
that machine noise hits them alike:

- ``bare``: no sandbox — the floor, measured in the same run;
- ``bwrap before``: bubblewrap with the mounts SkillKit used before the kernel held the
  gate's verdict (``/`` read-only, a private ``/tmp``, the workspace writable);
- ``read-only``: the profile of a command run unasked as read-only — nothing writable
  but ``/tmp``, the credential stores masked, and a scan of the workspace for the names
  a deny-read rule masks (``.env``);
- ``approved``: the profile of an approved command — the workspace writable, every
  protected path found in it bound read-only (with the folders holding them pinned), the
  masks.

The workspace is a realistic tree (``--files`` files in folders of ten, a repository at
the top and two nested ones, ``.skillkit/``, ``.vscode/``, ``.mcp.json``); HOME holds
the usual credential stores. Both outside the host's ``/tmp``. Reported: the median and
p90 per command, and what each profile adds over ``bwrap before`` and over ``bare``.
Target: the new profiles add at most 15 ms per command over ``bwrap before``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from skillkit.confinement import READ_ONLY, Confinement
from skillkit.runtime.sandbox import (
    Bubblewrap,
    Sandbox,
    _bwrap_argv,
    _Mounts,
    default_masked_paths,
    find_bubblewrap,
)
from skillkit.runtime.spawn import run_process

TRUE = shutil.which("true") or "/bin/true"


def sink(fd: int, data: bytes) -> None:
    return None


def make_tree(root: Path, files: int) -> None:
    """``files`` files, ten per folder in folders of ten; three repositories."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for index in range(files):
        folder = root / "src" / f"m{index // 100:03}" / f"d{index // 10 % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{index % 10}.py").write_text("x = 1\n")
    for name in ("vendor/a", "vendor/b/deep/lib"):
        subprocess.run(["git", "init", "-q", str(root / name)], check=True)
    (root / ".skillkit" / "plugins").mkdir(parents=True)
    (root / ".vscode").mkdir()
    (root / ".mcp.json").write_text("{}\n")
    (root / ".env").write_text("TOKEN=x\n")


def make_home(home: Path) -> None:
    for folder in (".ssh", ".aws", ".kube", ".gnupg", ".config/gcloud", ".config/gh"):
        (home / folder).mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key\n")
    (home / ".netrc").write_text("machine x\n")
    (home / ".docker").mkdir()
    (home / ".docker" / "config.json").write_text("{}\n")


async def timed(start: Callable[[], Awaitable[object]]) -> float:
    began = time.perf_counter()
    await start()
    return time.perf_counter() - began


def summary(name: str, times: list[float], floor: float, before: float | None) -> str:
    median = statistics.median(times)
    p90 = sorted(times)[max(0, int(len(times) * 0.9) - 1)]
    over = f"+{(median - floor) * 1e3:6.2f} ms over bare"
    if before is not None:
        over += f", +{(median - before) * 1e3:6.2f} ms over bwrap before"
    ratio = median / floor
    return (
        f"  {name:13} median {median * 1e3:6.2f} ms  p90 {p90 * 1e3:6.2f} ms  x{ratio:4.2f}  {over}"
    )


async def main(runs: int, files: int) -> int:
    found = find_bubblewrap()
    if not isinstance(found, Bubblewrap):
        print(f"no usable bubblewrap: {found}")
        return 1
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    scratch = Path(tempfile.mkdtemp(prefix="skillkit-bench-sandbox-", dir=base))
    try:
        workspace = scratch / "ws"
        home = scratch / "home"
        workspace.mkdir()
        make_tree(workspace, files)
        make_home(home)
        sandbox = Sandbox(workspace=workspace, masked_paths=default_masked_paths(home))
        sandbox.mask(names=[".env"])
        before_argv = _bwrap_argv(
            found.path,
            [TRUE],
            cwd=workspace,
            tmp=sandbox._private_tmp(),
            network=False,
            mounts=_Mounts(writable=[workspace]),
        )
        profiles: dict[str, Callable[[], Awaitable[object]]] = {
            "bare": lambda: run_process([TRUE], sink, cwd=workspace),
            "bwrap before": lambda: run_process(before_argv, sink, cwd=workspace),
            "read-only": lambda: run_process(
                [TRUE], sink, cwd=workspace, sandbox=sandbox, confinement=READ_ONLY
            ),
            "approved": lambda: run_process(
                [TRUE], sink, cwd=workspace, sandbox=sandbox, confinement=Confinement()
            ),
        }
        for start in profiles.values():  # warm up: probe, caches, page cache
            await start()
        await asyncio.sleep(2.1)  # past the scan's racy window, as in a real session
        times: dict[str, list[float]] = {name: [] for name in profiles}
        for _ in range(runs):
            for name, start in profiles.items():
                times[name].append(await timed(start))
        tree = sandbox.finder.find(workspace)
        folders = sum(1 for _ in workspace.rglob("*") if _.is_dir())
        print(
            f"sandbox start-up per command, {runs} runs each, bubblewrap {found.version}; "
            f"workspace of {files} files in {folders} folders, {len(tree.protected)} "
            f"protected paths in {len(tree.git_dirs)} repositories; python {sys.version.split()[0]}"
        )
        floor = statistics.median(times["bare"])
        before = statistics.median(times["bwrap before"])
        print(summary("bare", times["bare"], floor, None))
        print(summary("bwrap before", times["bwrap before"], floor, None))
        print(summary("read-only", times["read-only"], floor, before))
        print(summary("approved", times["approved"], floor, before))
        worst = max(statistics.median(times[n]) for n in ("read-only", "approved")) - before
        verdict = "meets" if worst <= 0.015 else "MISSES"
        print(f"  added by the new profiles: at most {worst * 1e3:.2f} ms ({verdict} 15 ms)")
        await sandbox.aclose()
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--files", type=int, default=3000)
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.runs, options.files)))
