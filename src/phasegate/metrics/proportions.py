"""Proportions of runs accepted, with their uncertainty: standard error, Wilson score interval
for one proportion, Newcombe's hybrid score interval for the difference of two.

Repeats of a unit are few (often 3 to 10), so the intervals are score intervals, which stay
inside [0, 1] and do not collapse to a point when every run passed or every run failed
(the normal approximation does both). Pure functions of counts: no I/O, no state.

- Wilson score interval (Wilson 1927) for ``k`` successes in ``n`` trials, with
  ``p = k / n`` and ``z`` the normal quantile::

      centre = (p + z²/2n) / (1 + z²/n)
      half   = z / (1 + z²/n) · sqrt(p(1 - p)/n + z²/4n²)

- Newcombe's hybrid score interval ("method 10" of Newcombe 1998, Statistics in Medicine 17,
  873-890) for ``p1 - p2`` of independent samples, from the Wilson intervals (l1, u1) and
  (l2, u2) of each::

      lower = (p1 - p2) - sqrt((p1 - l1)² + (u2 - p2)²)
      upper = (p1 - p2) + sqrt((u1 - p1)² + (p2 - l2)²)
"""

from __future__ import annotations

import math
from statistics import NormalDist

Z_95 = NormalDist().inv_cdf(0.975)
"""The normal quantile of a two-sided 95 % interval (1.95996…)."""

Interval = tuple[float, float]
"""A closed interval ``(lower, upper)``."""


def standard_error(successes: int, trials: int) -> float | None:
    """``sqrt(p(1 - p)/n)`` of the proportion ``successes / trials``; None without trials.

    It is 0 when every trial passed or every one failed: use :func:`wilson_interval` for how
    uncertain such a proportion still is.
    """
    _check(successes, trials)
    if trials == 0:
        return None
    p = successes / trials
    return math.sqrt(p * (1 - p) / trials)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval | None:
    """The Wilson score interval of ``successes / trials``; None without trials."""
    _check(successes, trials)
    if trials == 0:
        return None
    p, n = successes / trials, trials
    shrink = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # Exact at the edges: rounding must not put 0/n above 0 or n/n below 1.
    lower = 0.0 if successes == 0 else max(centre - half, 0.0)
    upper = 1.0 if successes == trials else min(centre + half, 1.0)
    return lower, upper


def difference_interval(
    successes_1: int, trials_1: int, successes_2: int, trials_2: int, z: float = Z_95
) -> Interval | None:
    """Newcombe's hybrid score interval of ``p1 - p2`` (independent samples); None when
    either sample has no trials."""
    first = wilson_interval(successes_1, trials_1, z)
    second = wilson_interval(successes_2, trials_2, z)
    if first is None or second is None:
        return None
    p1, p2 = successes_1 / trials_1, successes_2 / trials_2
    (l1, u1), (l2, u2) = first, second
    lower = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(lower, -1.0), min(upper, 1.0)


def _check(successes: int, trials: int) -> None:
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes in {trials} trials is not a proportion")
