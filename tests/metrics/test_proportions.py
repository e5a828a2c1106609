"""Rates of accepted runs and their uncertainty: checked against published worked examples
and against the defining equations, solved another way."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.metrics.proportions import (
    Z_95,
    difference_interval,
    standard_error,
    wilson_interval,
)

# Newcombe (1998), "Interval estimation for the difference between independent proportions:
# comparison of eleven methods", Statistics in Medicine 17: 873-890, Table II, method 10
# (the hybrid score interval), to four decimals.
NEWCOMBE_METHOD_10 = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0)),
    ((10, 10, 0, 10), (0.6075, 1.0)),
]
# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17: 857-872, Table I, method 3 (Wilson score).
WILSON_EXAMPLES = [
    ((81, 263), (0.2553, 0.3662)),
    ((15, 148), (0.0624, 0.1605)),
    ((0, 20), (0.0, 0.1611)),
    ((1, 29), (0.0061, 0.1718)),
]


@pytest.mark.parametrize(("counts", "published"), NEWCOMBE_METHOD_10)
def test_the_difference_interval_reproduces_newcombes_published_examples(
    counts: tuple[int, int, int, int], published: tuple[float, float]
) -> None:
    """Each worked example of the paper's table, within the rounding of its fourth decimal
    (the paper used z = 1.96; the code uses the exact quantile)."""
    interval = difference_interval(*counts)

    assert interval is not None
    assert interval == pytest.approx(published, abs=1.5e-4)


@pytest.mark.parametrize(("counts", "published"), WILSON_EXAMPLES)
def test_the_wilson_interval_reproduces_newcombes_published_examples(
    counts: tuple[int, int], published: tuple[float, float]
) -> None:
    """The single-proportion examples of the companion paper."""
    assert wilson_interval(*counts) == pytest.approx(published, abs=1e-4)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_wilson_bounds_solve_the_score_equation(counts: tuple[int, int]) -> None:
    """The bounds are the roots of (p - pi)^2 = z^2 pi (1 - pi) / n, a quadratic in pi,
    solved here with the quadratic formula instead of the closed form the code uses."""
    k, n = counts
    p, z2 = k / n, Z_95**2
    a, b, c = 1 + z2 / n, -(2 * p + z2 / n), p * p
    root = math.sqrt(max(b * b - 4 * a * c, 0.0))
    expected = ((-b - root) / (2 * a), (-b + root) / (2 * a))

    interval = wilson_interval(k, n)

    assert interval == pytest.approx(expected, abs=1e-9)
    assert interval is not None and 0.0 <= interval[0] <= p <= interval[1] <= 1.0


def test_the_standard_error_is_that_of_a_binomial_proportion() -> None:
    """sqrt(p(1 - p)/n): 1 of 4 is sqrt(0.25 * 0.75 / 4) = 0.2165."""
    assert standard_error(1, 4) == pytest.approx(0.216506, abs=1e-6)
    assert standard_error(5, 10) == pytest.approx(math.sqrt(0.025))


def test_all_or_nothing_has_no_standard_error_but_a_real_interval() -> None:
    """p = 0 and p = 1: the standard error is 0, the Wilson interval still has width, and
    its far end is exactly 0 or 1."""
    assert standard_error(0, 3) == 0.0 and standard_error(3, 3) == 0.0
    low, high = wilson_interval(3, 3) or (None, None)
    assert high == 1.0 and low == pytest.approx(0.438503, abs=1e-6)
    assert wilson_interval(0, 3) == pytest.approx((0.0, 1 - 0.438503), abs=1e-6)


def test_no_trials_give_no_rate_error_or_interval() -> None:
    """n = 0: nothing is known, which is not 0."""
    assert standard_error(0, 0) is None
    assert wilson_interval(0, 0) is None
    assert difference_interval(0, 0, 3, 4) is None
    assert difference_interval(3, 4, 0, 0) is None


def test_more_successes_than_trials_is_refused() -> None:
    """Counts that cannot be a proportion are a programming error, not a rate over 1."""
    with pytest.raises(ValueError, match="5 successes in 4 trials"):
        wilson_interval(5, 4)


@given(
    st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
)
def test_the_difference_interval_holds_the_difference_inside_minus_one_to_one(
    first: tuple[int, int], second: tuple[int, int]
) -> None:
    """Always a proper interval around the observed difference, never past +-1, and the
    mirror image when the samples swap places."""
    difference = first[0] / first[1] - second[0] / second[1]

    interval = difference_interval(*first, *second)
    mirrored = difference_interval(*second, *first)

    assert interval is not None and mirrored is not None
    assert -1.0 <= interval[0] <= difference + 1e-12 and difference - 1e-12 <= interval[1] <= 1.0
    assert mirrored == pytest.approx((-interval[1], -interval[0]), abs=1e-12)
