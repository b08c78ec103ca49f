"""Two runs side by side: which cases got worse, which got better, and whether the
difference is more than chance.

Cases are matched by name and model when the runs share models; when they do not (a
model was swapped), by name, every model of a run counted together. Each pair's pass
counts go through Fisher's exact test (two-sided); a change is called significant at
p < 0.05. With few repeats nothing is significant — the note says how many repeats
would let such a difference show.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from skillkit.evals.run import EvalResults
from skillkit.evals.stats import fisher_exact

__all__ = ["CaseChange", "compare_command", "compare_runs", "format_changes"]

SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class CaseChange:
    """One case in both runs: pass counts before (``a``) and after (``b``)."""

    case: str
    model: str
    a_passed: int
    a_total: int
    b_passed: int
    b_total: int

    @property
    def a_rate(self) -> float:
        return self.a_passed / self.a_total if self.a_total else 0.0

    @property
    def b_rate(self) -> float:
        return self.b_passed / self.b_total if self.b_total else 0.0

    @property
    def delta(self) -> float:
        return self.b_rate - self.a_rate

    @property
    def p_value(self) -> float:
        return fisher_exact(self.a_passed, self.a_total, self.b_passed, self.b_total)

    @property
    def significant(self) -> bool:
        return self.p_value < SIGNIFICANCE

    @property
    def verdict(self) -> str:
        """``regressed``, ``improved`` or ``same``."""
        if self.delta < 0:
            return "regressed"
        if self.delta > 0:
            return "improved"
        return "same"


def compare_runs(a: EvalResults, b: EvalResults) -> tuple[list[CaseChange], list[str]]:
    """The cases of both runs, and the names of cases found in only one of them."""
    a_models = {score.model for score in a.models}
    b_models = {score.model for score in b.models}
    by_model = bool(a_models & b_models)

    def counts(results: EvalResults) -> dict[tuple[str, str], list[int]]:
        out: dict[tuple[str, str], list[int]] = {}
        for score in results.cases:
            if by_model and score.model not in a_models & b_models:
                continue
            key = (score.case, score.model if by_model else "*")
            pair = out.setdefault(key, [0, 0])
            pair[0] += score.passed
            pair[1] += score.total
        return out

    before, after = counts(a), counts(b)
    changes = [
        CaseChange(case, model, *before[(case, model)], *after[(case, model)])
        for (case, model) in before
        if (case, model) in after
    ]
    only = sorted({c for c, _ in before.keys() ^ after.keys()})
    return changes, only


def format_changes(changes: list[CaseChange], only: list[str]) -> str:
    """The comparison as text: regressions first, then improvements, then a count of
    the unchanged, with the significance note."""
    lines: list[str] = []
    for title, verdict in (("Regressions", "regressed"), ("Improvements", "improved")):
        picked = sorted(
            (c for c in changes if c.verdict == verdict), key=lambda c: (c.delta, c.case)
        )
        if verdict == "improved":
            picked.reverse()
        lines.append(f"{title}: {len(picked)}")
        for change in picked:
            model = "" if change.model == "*" else f" [{change.model}]"
            note = (
                f"significant, p={change.p_value:.3g}"
                if change.significant
                else f"not significant, p={change.p_value:.3g}"
            )
            lines.append(
                f"  {change.case}{model}: {change.a_passed}/{change.a_total} → "
                f"{change.b_passed}/{change.b_total} ({change.delta:+.0%}; {note})"
            )
    same = sum(1 for c in changes if c.verdict == "same")
    lines.append(f"Unchanged: {same}")
    if only:
        lines.append(f"In one run only: {', '.join(only)}")
    lines.append(
        "Significance: Fisher's exact test (two-sided) on each case's pass counts; "
        f"p < {SIGNIFICANCE} is called significant. With n repeats per case a change from "
        "all passing to all failing needs n ≥ 4 to be significant."
    )
    return "\n".join(lines)


def compare_command(run_a: Path, run_b: Path) -> int:
    """``skillkit eval compare RUN_A RUN_B``: 0, or 1 when a case regressed
    significantly; 2 when a run cannot be read."""
    from skillkit.evals.run import EvalRunError, read_run

    try:
        a, _ = read_run(run_a)
        b, _ = read_run(run_b)
    except EvalRunError as exc:
        print(f"skillkit: error: eval: {exc}", file=sys.stderr)
        return 2
    changes, only = compare_runs(a, b)
    print(f"{run_a} → {run_b}")
    print(format_changes(changes, only))
    return 1 if any(c.verdict == "regressed" and c.significant for c in changes) else 0
