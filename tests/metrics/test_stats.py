"""Percentiles of times (metrics.stats.Distribution): exact nearest-rank values up to the
limit, a sketch within 1 % past it, merges of every pair of forms, and bounded memory.

The reference is written here apart from the code: the value at rank ``ceil(q · n)`` of the
sorted values, the rank computed on fractions so that float noise cannot move it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.metrics.stats import (
    EXACT_LIMIT,
    MAX_BUCKETS,
    RELATIVE_ACCURACY,
    Distribution,
    PhaseStats,
    merge,
)

QUANTILES = [q / 100 for q in range(1, 100)]
"""0.01, 0.02, ..., 0.99."""
SKEWED: dict[str, Callable[[random.Random], float]] = {
    # Times in ms around 1.2 s with a long right tail (sigma 1.5: p99 near 40x the median).
    "lognormal": lambda rng: rng.lognormvariate(7.1, 1.5),
    # A heavy tail (alpha 1.2: the variance is infinite), starting at 100 ms.
    "pareto": lambda rng: 100 * rng.paretovariate(1.2),
}
_BOUND = RELATIVE_ACCURACY * (1 + 1e-9)
"""1 %, with room for the last bit of a floating-point log at a bucket's edge."""

times = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
shares = st.floats(min_value=1e-6, max_value=1.0)


def nearest_rank(values: list[float], q: float) -> float:
    """The smallest value with at least a share ``q`` of the values at or below it."""
    return ranked(sorted(values), q)


def ranked(ordered: list[float], q: float) -> float:
    """:func:`nearest_rank` of values already sorted."""
    rank = max(1, math.ceil(Fraction(str(q)) * len(ordered)))
    return ordered[rank - 1]


def distribution(values: list[float]) -> Distribution:
    """A distribution with ``values`` added one by one."""
    built = Distribution()
    for value in values:
        built.add(value)
    return built


def skewed(name: str, count: int, seed: int) -> list[float]:
    """``count`` values of the ``name`` distribution, the same for a seed."""
    rng = random.Random(seed)
    return [SKEWED[name](rng) for _ in range(count)]


def assert_within_bound(sketch: Distribution, values: list[float]) -> None:
    """Every quantile of 0.01 to 0.99 within 1 % of the exact nearest-rank one."""
    assert not sketch.exact
    ordered = sorted(values)
    for q in QUANTILES:
        exact, estimate = ranked(ordered, q), sketch.quantile(q)
        assert estimate is not None
        assert abs(estimate - exact) <= _BOUND * exact, (q, exact, estimate)


@given(st.lists(times, min_size=1, max_size=300), shares)
def test_exact_quantiles_are_the_nearest_rank_value_of_the_sorted_values(
    values: list[float], q: float
) -> None:
    """Any values, any share: the very value the sorted-list reference picks."""
    built = distribution(values)

    assert built.exact
    assert built.quantile(q) == nearest_rank(values, q)


def test_quantiles_at_round_shares_are_not_moved_by_float_noise() -> None:
    """0.07 · 100 is 7.000000000000001 in floats; the 7th of 100 values is still p7."""
    built = distribution([float(v) for v in range(1, 101)])

    assert (built.quantile(0.07), built.quantile(0.5), built.quantile(1.0)) == (7.0, 50.0, 100.0)


def test_eight_runs_give_the_median_of_the_nearest_rank_exactly() -> None:
    """The case of issue 29: 5 % buckets said 1210.7 ms where the 4th of 8 runs took 1224 ms."""
    runs = [3045.6, 1105.3, 1224.0, 830.5, 2210.0, 1502.2, 912.0, 1390.8]

    built = distribution(runs)

    assert (built.quantile(0.5), built.quantile(0.95)) == (1224.0, 3045.6)


def test_an_empty_distribution_has_no_quantile_and_empty_bins() -> None:
    """None, not 0: no run took no time."""
    empty = Distribution()

    assert (empty.quantile(0.5), empty.exact, empty.bins([0, 10, math.inf])) == (None, True, [0, 0])


def test_past_the_limit_the_values_become_a_sketch_once() -> None:
    """The limit-th value keeps it exact; the next one turns it into buckets for good."""
    built = distribution([1.0 + i for i in range(EXACT_LIMIT)])
    assert built.exact

    built.add(5.0)

    assert (built.exact, built.values, built.count) == (False, None, EXACT_LIMIT + 1)
    assert sum(built.buckets.values()) == EXACT_LIMIT + 1


@pytest.mark.parametrize("name", sorted(SKEWED))
def test_the_sketch_is_within_one_percent_at_every_quantile_of_skewed_data(name: str) -> None:
    """100,000 lognormal or Pareto times: p1 to p99 each within 1 % of the exact value."""
    values = skewed(name, 100_000, seed=29)

    assert_within_bound(distribution(values), values)


def test_zeros_are_counted_apart_in_the_sketch() -> None:
    """A tenth of the values are 0: low quantiles are exactly 0, the rest within 1 %."""
    values = [0.0] * 2_000 + skewed("lognormal", 18_000, seed=5)

    sketch = distribution(values)

    assert (sketch.zeros, sketch.quantile(0.05), sketch.quantile(0.1)) == (2_000, 0.0, 0.0)
    estimate, exact = sketch.quantile(0.5), nearest_rank(values, 0.5)
    assert estimate is not None and abs(estimate - exact) <= _BOUND * exact


@given(st.lists(times, max_size=200), st.lists(times, max_size=200), shares)
def test_merging_exact_distributions_equals_building_from_the_union(
    first: list[float], second: list[float], q: float
) -> None:
    """Below the limit a merge keeps every value: the same quantiles and bins as one pass."""
    merged, union = distribution(first), distribution(first + second)

    merged.merge(distribution(second))

    assert merged.exact and merged.count == union.count
    assert merged.quantile(q) == union.quantile(q)
    edges = [0, 1_000, 60_000, math.inf]
    assert merged.bins(edges) == union.bins(edges)


@pytest.mark.parametrize(
    ("first_size", "second_size"),
    [(6_000, 6_000), (3_000, 20_000), (20_000, 3_000), (20_000, 30_000)],
    ids=["exact+exact past the limit", "exact+sketch", "sketch+exact", "sketch+sketch"],
)
def test_merging_stays_within_the_bound_of_the_union(first_size: int, second_size: int) -> None:
    """Each pair of forms: the merge is a sketch of every value, within 1 % at every quantile."""
    first = skewed("pareto", first_size, seed=1)
    second = skewed("lognormal", second_size, seed=2)
    merged, other = distribution(first), distribution(second)

    merged.merge(other)

    assert merged.count == first_size + second_size
    assert_within_bound(merged, first + second)
    assert other.count == second_size  # the other side is left as it was


def test_merging_phase_stats_merges_their_times() -> None:
    """merge() adds counters and merges the distribution inside, the way --by mode groups."""
    into, other = PhaseStats(runs=1), PhaseStats(runs=2)
    into.to_completion_ms.add(10.0)
    other.to_completion_ms.add(30.0)
    other.to_completion_ms.add(20.0)

    merge(into, other)

    assert into.runs == 3
    assert [into.to_completion_ms.quantile(q) for q in (0.3, 0.6, 1.0)] == [10.0, 20.0, 30.0]


def test_the_sketch_keeps_a_bounded_number_of_buckets_over_a_wide_range() -> None:
    """1,000,000 times spread evenly on a log scale from 1 µs to 31 years: the buckets the
    range needs (about 1,730), far below what one per value would take."""
    rng = random.Random(7)
    sketch = Distribution()
    for _ in range(1_000_000):
        sketch.add(10 ** rng.uniform(-3, 12))

    assert sketch.count == 1_000_000
    assert len(sketch.buckets) <= 1_750 < MAX_BUCKETS


def test_past_the_bucket_cap_the_lowest_buckets_fold_and_the_rest_keep_their_bound() -> None:
    """A fifth of the values are tiny and spread over 290 orders of magnitude (a hostile log):
    no more than MAX_BUCKETS buckets, the tiny ones folded into the lowest; p25 and above
    stay within 1 %, and p1 is overstated, never understated."""
    rng = random.Random(11)
    values = skewed("lognormal", 12_000, seed=3)
    values += [10 ** rng.uniform(-300, -10) for _ in range(3_000)]

    sketch = distribution(values)

    assert len(sketch.buckets) == MAX_BUCKETS and sketch.floor is not None
    for q in (0.25, 0.5, 0.9, 0.99):
        estimate, exact = sketch.quantile(q), nearest_rank(values, q)
        assert estimate is not None and abs(estimate - exact) <= _BOUND * exact
    lowest = sketch.quantile(0.01)
    assert lowest is not None and lowest > nearest_rank(values, 0.01)


def test_bins_count_every_value_between_its_edges_in_both_forms() -> None:
    """Exact: each value in its bin, one before the first edge in the first, one past the
    last in the last. The sketch puts its bucket's value in the same bins, away from edges."""
    edges = [0, 1_000, 5_000, 60_000]
    exact = distribution([-1.0, 0.0, 999.9, 1_000.0, 4_000.0, 59_999.0, 90_000.0])
    assert exact.bins(edges) == [3, 2, 2]

    values = [500.0] * 6_000 + [2_000.0] * 3_000 + [30_000.0] * 2_000 + [0.0] * 1_000
    sketch = distribution(values)
    assert not sketch.exact
    assert sketch.bins(edges) == [7_000, 3_000, 2_000]
