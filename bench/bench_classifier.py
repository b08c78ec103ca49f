"""Shell classifier benchmark: time to judge typical command lines, against a floor.

Run: python bench/bench_classifier.py [--rounds 2000]

For each command line it reports the median time of `ShellClassifier.classify` and of
the permission gate's whole `decide`, next to a plain floor (``str.split`` of the same
line), and the ratio classify/floor. Target: typical commands judged in well under a
millisecond (the tree-sitter parse itself takes a few microseconds).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skillkit.permissions import PermissionGate, ShellClassifier

COMMANDS = [
    "ls -la",
    "git status",
    "git log --oneline -5",
    "cat README.md",
    "grep -rn foo src",
    "head -20 README.md | tail -5",
    "cd src && ls",
    "find . -name '*.py' -not -path './.venv/*'",
    "npm test && git add -A && git commit -m 'fix: parser'",
    "cat <<EOF\n$(touch x)\nEOF",
    "git -c core.fsmonitor='touch x' status",
    "cat src/*.py",
]


def median_us(fn: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "src").mkdir()
        for i in range(20):
            (ws / "src" / f"m{i}.py").write_text("x = 1\n")
        (ws / "README.md").write_text("# bench\n")
        classifier = ShellClassifier(ws, home=ws / "home")
        gate = PermissionGate(workspace=ws, home=ws / "home")
        gate.rules.add("read(~/.ssh/**)", "deny")
        print(f"{'command':48} {'floor µs':>9} {'classify µs':>12} {'decide µs':>10} {'ratio':>7}")
        ratios = []
        for command in COMMANDS:
            floor = median_us(lambda c=command: c.split(), args.rounds)
            judged = median_us(lambda c=command: classifier.classify(c), args.rounds)
            decided = median_us(
                lambda c=command: gate.decide("bash", {"command": c}), args.rounds // 4
            )
            ratio = judged / max(floor, 1e-3)
            ratios.append(ratio)
            shown = command.replace("\n", "\\n")[:46]
            print(f"{shown:48} {floor:9.2f} {judged:12.1f} {decided:10.1f} {ratio:7.0f}")
        print(f"median ratio classify/str.split: {statistics.median(ratios):.0f}x")


if __name__ == "__main__":
    main()
