"""Skill benchmarks: cold load of 1,000 skills, and edit-to-live hot reload.

Run: python bench/bench_skills.py [--skills 1000] [--edits 20]

Targets: cold load of 1,000 skills <= 250 ms; edit-to-live (save a SKILL.md until the
registry serves the new version) <= 300 ms median, debounce included.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillkit.skills.registry import SkillRegistry
from skillkit.skills.watch import SkillWatcher

TEMPLATES = [
    "---\nname: {name}\ndescription: Skill number {i}. Use when the user asks for {i}.\n---\n"
    "# Skill {i}\n\nDo step one.\nDo step two.\n",
    "---\nname: {name}\ndescription: >\n  Skill number {i}, with a folded description:\n"
    "  use it for task {i}.\nlicense: MIT\nmetadata:\n  author: bench\n  skillkit:\n"
    "    requires:\n      bins: [sh]\n      env: [HOME]\n---\n# Skill {i}\n\nInstructions.\n",
    "---\nname: {name}\ndescription: Skill {i} with an action.\nmetadata:\n  skillkit:\n"
    "    actions:\n      run:\n        description: Run it\n        params:\n"
    "          target: {{type: string}}\n        command: [echo, '{{target}}']\n---\nBody {i}\n",
    '---\nname: {name}\ndescription: "Skill {i}: openclaw gated"\nmetadata: '
    '{{"openclaw": {{"requires": {{"anyBins": ["sh", "bash"]}}}}}}\n---\nBody {i}\n',
]


def make_tree(root: Path, count: int) -> None:
    for i in range(count):
        name = f"skill-{i:04d}"
        folder = root / f"group-{i % 10}" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(TEMPLATES[i % len(TEMPLATES)].format(name=name, i=i))
        if i % 5 == 0:
            (folder / "scripts").mkdir()
            (folder / "scripts" / "helper.py").write_text("print('hi')\n")


def load_once(root: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, skills loaded) for one load by a fresh registry."""
    registry = SkillRegistry(cwd=root, home=root, default_sources=False)
    registry.add_source(root)
    started, cpu = time.perf_counter(), time.process_time()
    registry.load()
    elapsed, cpu_used = time.perf_counter() - started, time.process_time() - cpu
    return elapsed, cpu_used, len(registry)


def cold_process(root: Path) -> float:
    code = (
        "import time; t = time.perf_counter();"
        "from skillkit.skills.registry import SkillRegistry;"
        f"r = SkillRegistry(cwd={str(root)!r}, home={str(root)!r}, default_sources=False);"
        f"r.add_source({str(root)!r}); r.load();"
        "print(time.perf_counter() - t, len(r))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


async def edit_to_live(root: Path, edits: int) -> list[float]:
    registry = SkillRegistry(cwd=root, home=root, default_sources=False)
    registry.add_source(root)
    registry.load()
    samples: list[float] = []
    async with SkillWatcher(registry, debounce_ms=50):
        await asyncio.sleep(0.2)
        for n in range(edits):
            name = f"skill-{(n * 37) % len(registry):04d}"
            skill = registry.get(name)
            assert skill is not None
            marker = f"Edited {n}."
            new = skill.location.read_text() + f"\n{marker}\n"
            started = time.perf_counter()
            skill.location.write_text(new)
            while True:
                current = registry.get(name)
                if current is not None and current.body.endswith(marker):
                    break
                if time.perf_counter() - started > 5:
                    raise RuntimeError(f"edit {n} not live after 5 s")
                await asyncio.sleep(0.002)
            samples.append(time.perf_counter() - started)
            await asyncio.sleep(0.1)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, args.skills)
        runs = [load_once(root) for _ in range(7)]
        loaded = runs[0][2]
        times = [t * 1000 for t, _, _ in runs]
        cpu = [c * 1000 for _, c, _ in runs]
        print(
            f"cold load of {loaded} skills (fresh registry, in process): "
            f"median {statistics.median(times):.1f} ms wall, min {min(times):.1f} ms; "
            f"median {statistics.median(cpu):.1f} ms CPU"
        )
        process = [cold_process(root) * 1000 for _ in range(3)]
        print(
            f"cold load of {loaded} skills (new process, imports included): "
            f"median {statistics.median(process):.1f} ms"
        )
        samples = [s * 1000 for s in asyncio.run(edit_to_live(root, args.edits))]
        print(
            f"edit-to-live over {len(samples)} edits ({loaded} skills watched, 50 ms debounce): "
            f"median {statistics.median(samples):.1f} ms, max {max(samples):.1f} ms"
        )


if __name__ == "__main__":
    main()
