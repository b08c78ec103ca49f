"""Streamed Markdown benchmark: the cost per streamed delta of rendering an answer as
Markdown in the terminal, against writing the same deltas as raw text.

Run: python bench/bench_markdown.py [--deltas 5000] [--rounds 5]

The answer is Markdown with headings, paragraphs, lists, tables and fenced code, cut
into deltas of 4 characters, drawn by `TerminalRenderer` on a 100-column colour terminal
console writing to memory. The floor is the same renderer with Markdown off (each
delta redacted, neutralized and written as raw text). Measured: Markdown with the open
block held for the live area (the interactive session's way) and with the open block in
a rich ``Live`` (any other terminal). Also shown for reference: the whole answer
rendered once by rich's Markdown after it has arrived (no streaming at all) — the least
any rendering with rich can cost. Targets: at most 3x the floor per delta with
5,000 deltas, and the per-delta cost with 10,000 deltas within 1.5x of that with 1,000
(not quadratic in the answer's length).

Measured on a shared 2-core machine under load (load average 5-6, so the numbers move
by 2x from run to run): floor 19-20 us per delta; held 35-71 us (1.75-3.7x the floor;
1.1-1.95x rendering once); in a Live 69-97 us (3.6-5x); 10,000 vs 1,000 deltas
0.92-2.2x across runs. Rerun on a quiet machine before trusting a ratio.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

from rich.console import Console
from rich.markdown import Markdown

from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import StreamEvent
from skillkit.secrets import Redactor

_SECTION = """## Step {n}

The **change** in `src/app_{n}.py` keeps *every* caller working; see the notes below
and the [guide](https://example.com/guide) for the reasons behind it.

- the parser reads the header first
- then each record, checked against the schema
- errors are collected, never raised

| file | lines | status |
|------|------:|--------|
| app_{n}.py | {n}0 | changed |
| util.py | 40 | kept |
| test_app.py | 88 | added |

```python
def handle_{n}(record: dict[str, int]) -> int:
    total = sum(record.values())
    return total * {n}
```

"""


def answer(deltas: int, size: int = 4) -> list[str]:
    text = ""
    n = 0
    while len(text) < deltas * size:
        n += 1
        text += _SECTION.format(n=n)
    return [text[i : i + size] for i in range(0, deltas * size, size)]


def run(pieces: list[str], *, markdown: bool, held: bool) -> float:
    console = Console(file=io.StringIO(), width=100, force_terminal=True, color_system="truecolor")
    renderer = TerminalRenderer(console, markdown=markdown, redactor=Redactor({}))
    renderer.hold_partial_line = held
    started = time.perf_counter()
    renderer.stream(StreamEvent(type="text_start"))
    for piece in pieces:
        renderer.stream(StreamEvent(type="text_delta", content=piece))
    renderer.stream(StreamEvent(type="text_end"))
    return time.perf_counter() - started


def render_once(pieces: list[str]) -> float:
    console = Console(file=io.StringIO(), width=100, force_terminal=True, color_system="truecolor")
    started = time.perf_counter()
    console.print(Markdown("".join(pieces), code_theme="monokai", hyperlinks=False))
    return time.perf_counter() - started


def per_delta(deltas: int, rounds: int, *, markdown: bool, held: bool) -> float:
    pieces = answer(deltas)
    return (
        statistics.median(run(pieces, markdown=markdown, held=held) for _ in range(rounds)) / deltas
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    floor = per_delta(args.deltas, args.rounds, markdown=False, held=True)
    print(f"{args.deltas} deltas, median of {args.rounds} rounds, microseconds per delta")
    print(f"  floor (raw text)              {floor * 1e6:8.1f}")
    pieces = answer(args.deltas)
    once = statistics.median(render_once(pieces) for _ in range(args.rounds)) / args.deltas
    print(f"  rendered once by rich         {once * 1e6:8.1f}  {once / floor:.2f}x the floor")
    for label, held in (
        ("markdown, open block held", True),
        ("markdown, open block in Live", False),
    ):
        cost = per_delta(args.deltas, args.rounds, markdown=True, held=held)
        print(
            f"  {label:<30}{cost * 1e6:8.1f}  {cost / floor:.2f}x the floor (target <= 3x), "
            f"{cost / once:.2f}x rendering once"
        )
    small = per_delta(1000, args.rounds, markdown=True, held=True)
    large = per_delta(10000, args.rounds, markdown=True, held=True)
    print(
        f"  markdown per delta: 1,000 deltas {small * 1e6:.1f}, 10,000 deltas "
        f"{large * 1e6:.1f} ({large / small:.2f}x; target <= 1.5x, not quadratic)"
    )


if __name__ == "__main__":
    main()
