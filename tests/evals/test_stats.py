"""The statistics against values computed by hand (and by textbooks)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.evals import fisher_exact, two_proportion_p, wilson_interval


def test_wilson_interval_matches_known_values() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_fisher_exact_matches_known_values() -> None:
    # all pass against all fail, 4 runs each: 2 tables of C(8,4)=70 are this extreme
    assert fisher_exact(4, 4, 0, 4) == pytest.approx(2 / 70)
    assert fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)
    assert fisher_exact(1, 1, 0, 1) == pytest.approx(1.0)
    # the lady tasting tea: 3 of 4 right
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(0.4857, abs=1e-4)
    assert fisher_exact(0, 0, 0, 0) == 1.0


def test_two_proportion_test_matches_the_normal_approximation() -> None:
    p = two_proportion_p(80, 100, 60, 100)
    z = (0.8 - 0.6) / math.sqrt(0.7 * 0.3 * (2 / 100))
    assert p == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert two_proportion_p(5, 5, 5, 5) == 1.0


@given(st.integers(0, 30), st.integers(0, 30), st.data())
def test_intervals_hold_the_rate_and_p_values_are_probabilities(
    total_a: int, total_b: int, data: st.DataObject
) -> None:
    a = data.draw(st.integers(0, total_a))
    b = data.draw(st.integers(0, total_b))
    low, high = wilson_interval(a, total_a)
    assert 0 <= low <= high <= 1
    if total_a:
        assert low - 1e-12 <= a / total_a <= high + 1e-12
    assert 0 <= fisher_exact(a, total_a, b, total_b) <= 1
    assert fisher_exact(a, total_a, b, total_b) == pytest.approx(
        fisher_exact(b, total_b, a, total_a)
    )
