"""The statistics of pass rates: confidence intervals and two-run comparisons.

Written out from their formulas (no statistics package): the Wilson score interval
for a pass rate, Fisher's exact test (two-sided) for two small samples, and the
two-proportion z-test for large ones.
"""

from __future__ import annotations

import math

__all__ = ["fisher_exact", "two_proportion_p", "wilson_interval"]

Z_95 = 1.959963984540054
"""The standard normal quantile of a 95 % two-sided interval."""


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``passed / total`` (95 % by default). With no
    trials, (0, 1): nothing is known."""
    if total < 0 or not 0 <= passed <= total:
        raise ValueError("need 0 <= passed <= total")
    if total == 0:
        return 0.0, 1.0
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    spread = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / (1 + z2 / total)
    return max(0.0, centre - spread), min(1.0, centre + spread)


def fisher_exact(a_pass: int, a_total: int, b_pass: int, b_total: int) -> float:
    """The two-sided p-value of Fisher's exact test on the 2×2 table
    (passed, failed) × (run A, run B): the probability, with the margins fixed, of a
    table at most as likely as the one seen."""
    if not (0 <= a_pass <= a_total and 0 <= b_pass <= b_total):
        raise ValueError("need 0 <= passed <= total for both runs")
    passes = a_pass + b_pass
    total = a_total + b_total
    if total == 0:
        return 1.0
    denominator = math.comb(total, passes)

    def probability(x: int) -> float:
        return math.comb(a_total, x) * math.comb(b_total, passes - x) / denominator

    seen = probability(a_pass)
    low, high = max(0, passes - b_total), min(a_total, passes)
    p = sum(
        probability(x)
        for x in range(low, high + 1)
        if probability(x) <= seen * (1 + 1e-7)  # a relative tolerance for rounding
    )
    return min(1.0, p)


def two_proportion_p(a_pass: int, a_total: int, b_pass: int, b_total: int) -> float:
    """The two-sided p-value of the pooled two-proportion z-test."""
    if a_total == 0 or b_total == 0:
        return 1.0
    pooled = (a_pass + b_pass) / (a_total + b_total)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / a_total + 1 / b_total))
    if spread == 0:
        return 1.0
    z = (a_pass / a_total - b_pass / b_total) / spread
    return math.erfc(abs(z) / math.sqrt(2))
