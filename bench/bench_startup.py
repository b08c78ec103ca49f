"""Start-up benchmark of the ``skillkit`` command (not part of the test run).

    python bench/bench_startup.py [--runs N] [--src PATH ...] [--importtime]

Runs, interleaved (so a change of machine load touches all alike), in fresh processes
with the bytecode cache allowed (``PYTHONDONTWRITEBYTECODE`` unset; one warm-up run
writes it):

- the floor, ``python -c pass``;
- ``skillkit -p hello`` with the scripted hello model;
- ``skillkit --help``;

and prints, for each, the median and minimum CPU time (user + system, the operating
system's accounting of the finished child) and wall time, and the median of the
per-run ratio of its CPU time to the floor's run beside it. The budgets are
``-p hello`` ≤ 250 ms CPU and ``--help`` ≤ 120 ms CPU on the machine measured; this
script reports, it never fails on a number.

``--importtime`` adds, for ``-p hello``, the summed ``-X importtime`` figure, the number
of modules imported and the cumulative import time of the plugin machinery (pluggy,
``skillkit.extensions``, ``skillkit.commands``) — a separate run, since import timing
slows the process it measures.

``--src`` measures other source trees too (put first on ``PYTHONPATH``), e.g. a
checkout of an older commit.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
RUN = (
    "import sys; from skillkit.cli import main; "
    f"sys.exit(main(['-p', 'hello', '--model', {MODEL!r}]))"
)
HELP = "import sys; from skillkit.cli import main; main(['--help'])"
FLOOR = "pass"
BUDGETS_MS = {"-p hello": 250.0, "--help": 120.0}
PLUGIN_MACHINERY = ("pluggy", "skillkit.extensions", "skillkit.commands")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


@dataclass(frozen=True)
class Sample:
    cpu_ms: float
    wall_ms: float


def _env(src: Path | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *env.get("PYTHONPATH", "").split(":")])
    return env


def measure(code: str, src: Path | None, home: Path, cwd: Path) -> Sample:
    """CPU (user + system) and wall milliseconds of ``python -c code`` as one process."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=cwd, env=_env(src, home),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stderr is not None
    error = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    child.stderr.close()
    wall = (time.perf_counter() - start) * 1000
    if child.returncode != 0:
        raise SystemExit(f"the run failed:\n{error.decode(errors='replace')[-2000:]}")
    return Sample((usage.ru_utime + usage.ru_stime) * 1000, wall)


def import_profile(src: Path | None, home: Path, cwd: Path) -> tuple[float, int, dict[str, float]]:
    """(summed import ms, modules imported, cumulative ms of each plugin module) of one
    ``-p hello`` run under ``-X importtime``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", RUN],
        cwd=cwd, env=_env(src, home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    total, count = 0, 0
    machinery: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        total += int(match[1])
        count += 1
        name = match[4]
        if name in PLUGIN_MACHINERY or name.startswith(("skillkit.extensions.", "pluggy.")):
            top = next(p for p in PLUGIN_MACHINERY if name == p or name.startswith(p + "."))
            machinery[top] = max(machinery.get(top, 0.0), int(match[2]) / 1000)
    return total / 1000, count, machinery


def _report(label: str, runs: list[Sample], floors: list[Sample]) -> None:
    cpu = [r.cpu_ms for r in runs]
    wall = [r.wall_ms for r in runs]
    ratios = [r.cpu_ms / max(f.cpu_ms, 0.1) for r, f in zip(runs, floors, strict=True)]
    budget = next((b for name, b in BUDGETS_MS.items() if label.startswith(name)), None)
    within = "" if budget is None else f"  (budget {budget:.0f} ms)"
    print(f"skillkit {label}")
    print(f"  cpu:  median {statistics.median(cpu):6.1f} ms, min {min(cpu):6.1f} ms{within}")
    print(f"  wall: median {statistics.median(wall):6.1f} ms, min {min(wall):6.1f} ms")
    print(f"  cpu / floor: median {statistics.median(ratios):.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", type=Path, action="append", default=[])
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    trees += [(str(path), path.resolve()) for path in args.src]
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        home.mkdir()
        project.mkdir()
        for _, src in trees:  # warm-up: writes the bytecode cache
            measure(RUN, src, home, project)
            measure(HELP, src, home, project)
        floors: list[Sample] = []
        runs: dict[str, list[Sample]] = {}
        for _ in range(args.runs):
            floors.append(measure(FLOOR, None, home, project))
            for label, src in trees:
                runs.setdefault(f"-p hello ({label})", []).append(measure(RUN, src, home, project))
                runs.setdefault(f"--help ({label})", []).append(measure(HELP, src, home, project))
        profiles = {}
        if args.importtime:
            profiles = {label: import_profile(src, home, project) for label, src in trees}
    cpu = [f.cpu_ms for f in floors]
    print(f"floor: python -c pass ({args.runs} runs)")
    print(f"  cpu:  median {statistics.median(cpu):6.1f} ms, min {min(cpu):6.1f} ms")
    for label, samples in runs.items():
        _report(label, samples, floors)
    for label, (total, count, machinery) in profiles.items():
        print(f"-p hello imports ({label}): {total:.1f} ms summed, {count} modules")
        for name in PLUGIN_MACHINERY:
            print(f"  {name:<20} {machinery.get(name, 0.0):6.1f} ms (cumulative import)")


if __name__ == "__main__":
    main()
