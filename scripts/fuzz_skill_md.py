"""Coverage-guided fuzzing of the SKILL.md parser with atheris (outside the test suite).

Run: pip install atheris && python scripts/fuzz_skill_md.py [-max_total_time=60] [CORPUS_DIR]

The parser's contract: for any bytes, `parse_skill_bytes` returns a `Skill` or raises
`SkillError` — nothing else (no RecursionError, no crash of the YAML library, no hang:
libFuzzer's ``-timeout`` flags an input that takes too long). Anything else is reported
by atheris as a crash with the input that caused it. The example skills and a few deep
and tricky frontmatters seed the corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from skillkit.skills.diagnostics import SkillError
    from skillkit.skills.loader import parse_skill_bytes

LOCATION = Path("/fuzz/some-skill/SKILL.md")
SEEDS = [
    b"---\nname: some-skill\ndescription: d\n---\nbody\n",
    b"---\nname: x\ndescription: d\nmetadata: " + b"[" * 70 + b"]" * 70 + b"\n---\n",
    b"---\nmetadata:\n  skillkit:\n    requires: {python: [yaml]}\n    actions:\n"
    b"      go: {description: Go, command: [echo, '{x}'], params: {x: string}}\n---\n",
    b"---\ndescription: Use when: the user asks\nx: &a [*a]\n---\n",
]


def test_one(data: bytes) -> None:
    for strict in (False, True):
        try:
            parse_skill_bytes(data, LOCATION, strict=strict)
        except SkillError:
            pass


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    corpus = [a for a in sys.argv[1:] if not a.startswith("-")]
    if not corpus:
        seeds = Path("/tmp/skillkit-fuzz-corpus")
        seeds.mkdir(exist_ok=True)
        for index, seed in enumerate(SEEDS):
            (seeds / f"seed-{index}").write_bytes(seed)
        for path in sorted((root / "examples").rglob("SKILL.md")):
            (seeds / f"example-{path.parent.name}").write_bytes(path.read_bytes())
        sys.argv.append(str(seeds))
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
