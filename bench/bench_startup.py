"""Start-up benchmark of the ``skillkit`` command (not part of the test run).

    python bench/bench_startup.py [--runs N] [--src PATH ...]

Runs ``skillkit -p hello`` with the scripted hello model, ``--runs`` times, in a fresh
process with ``PYTHONDONTWRITEBYTECODE`` unset and ``-X importtime``, and prints the
median (and minimum) of the summed import time and of the wall time, the number of
modules imported, and the cumulative import time of the plugin machinery (pluggy,
``skillkit.extensions``, ``skillkit.commands``). Also the wall time of ``--help``.

``--src`` measures other source trees (put first on ``PYTHONPATH``), e.g. a checkout of
an older commit, interleaved with this one so machine load affects both alike.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
RUN = (
    "import sys; from skillkit.cli import main; "
    f"sys.exit(main(['-p', 'hello', '--model', {MODEL!r}]))"
)
HELP = "import sys; from skillkit.cli import main; main(['--help'])"
PLUGIN_MACHINERY = ("pluggy", "skillkit.extensions", "skillkit.commands")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


Sample = tuple[float, float, dict[str, float]]


def measure(code: str, src: Path | None, home: Path, cwd: Path) -> Sample:
    """(summed import ms, wall ms, cumulative ms of each top-level plugin module)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stderr[-2000:]}")
    total = 0
    machinery: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        total += int(match[1])
        name = match[4]
        if name in PLUGIN_MACHINERY or name.startswith(("skillkit.extensions.", "pluggy.")):
            top = next(p for p in PLUGIN_MACHINERY if name == p or name.startswith(p + "."))
            machinery[top] = max(machinery.get(top, 0.0), int(match[2]) / 1000)
    return total / 1000, wall, machinery


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", type=Path, action="append", default=[])
    args = parser.parse_args()
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    trees += [(str(path), path.resolve()) for path in args.src]
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        home.mkdir()
        project.mkdir()
        results: dict[str, list[Sample]] = {label: [] for label, _ in trees}
        helps: list[float] = []
        for _ in range(args.runs):
            for label, src in trees:
                results[label].append(measure(RUN, src, home, project))
            helps.append(measure(HELP, None, home, project)[1])
    for label, runs in results.items():
        imports = [r[0] for r in runs]
        walls = [r[1] for r in runs]
        print(f"skillkit -p hello ({label}, {args.runs} runs)")
        print(f"  imports: median {statistics.median(imports):.1f} ms, min {min(imports):.1f} ms")
        print(f"  wall:    median {statistics.median(walls):.0f} ms, min {min(walls):.0f} ms")
        for name in PLUGIN_MACHINERY:
            values = [r[2].get(name, 0.0) for r in runs]
            print(f"  {name:<20} {statistics.median(values):6.1f} ms (cumulative import)")
    print(f"skillkit --help wall: median {statistics.median(helps):.0f} ms")


if __name__ == "__main__":
    main()
