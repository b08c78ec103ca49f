"""What the lazy re-export tables save at start-up (not part of the test run).

    python bench/bench_lazy_exports.py [--runs N] [PACKAGE ...]

For each package whose ``__init__`` re-exports lazily (a module ``__getattr__``), and for
``skillkit -p hello`` (scripted model) and ``skillkit --help``: runs the command in a fresh
process (bytecode cache allowed), then reports whether the command imported the package
at all, and the CPU time and modules that resolving every name of its ``__all__`` adds —
what plain imports in the ``__init__`` would have cost that command. Median of N runs.

A package the command does not import costs it nothing either way; one it imports whose
names resolve in well under a millisecond (nothing new to load) can take plain imports.
docs/architecture.md ("Lazy re-exports") records the figures and the decision.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELLO = ROOT / "examples" / "scripts" / "hello.yaml"
COMMANDS = {"-p hello": ["-p", "hello", "--model", f"scripted:{HELLO}"], "--help": ["--help"]}

_PROBE = r"""
import contextlib, importlib, io, json, sys, time
args, package = json.loads(sys.argv[1]), sys.argv[2]
from skillkit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(args)
    except SystemExit:
        pass
imported = package in sys.modules
before = set(sys.modules)
start = time.process_time()
module = importlib.import_module(package)
for name in getattr(module, "__all__", ()):
    getattr(module, name)
spent = time.process_time() - start
print(json.dumps([imported, spent, sorted(set(sys.modules) - before)]))
"""


def lazy_packages() -> list[str]:
    """The subpackages of skillkit whose ``__init__`` defines a module ``__getattr__``."""
    found = []
    for init in sorted((ROOT / "src" / "skillkit").glob("*/__init__.py")):
        if "\ndef __getattr__(" in init.read_text():
            found.append(init.parent.name)
    return found


def probe(package: str, args: list[str], env: dict[str, str], cwd: str) -> tuple[bool, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args), f"skillkit.{package}"],
        env=env, cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    imported, spent, new = json.loads(out.stdout)
    return imported, spent * 1000, len(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("packages", nargs="*", help="default: every lazy one")
    options = parser.parse_args()
    packages = options.packages or lazy_packages()
    home = tempfile.mkdtemp(prefix="skillkit-bench-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = home
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    for label, args in COMMANDS.items():
        print(
            f"skillkit {label}: what resolving every exported name adds (median of {options.runs})"
        )
        for package in packages:
            runs = [probe(package, args, env, home) for _ in range(options.runs)]
            imported = runs[-1][0]
            spent = statistics.median(r[1] for r in runs)
            modules = runs[-1][2]
            state = "imported" if imported else "not imported"
            print(f"  {package:12} {state:13} {spent:7.2f} ms CPU  +{modules} modules")


if __name__ == "__main__":
    main()
