"""Splitting a run's tokens and cost among its parts (phases, stages), so that they add up.

The rule, in one place (``docs/events.md`` and ``docs/reports.md`` say the same):

* **Tokens.** Every model response of the transcript (:meth:`Transcript.responses`) belongs
  to exactly one part: the one that owned the entry where the response started. Its final
  usage (input, output, cache write, cache read) counts there and nowhere else.
* **The run's tokens** are, count by count, the larger of what the runtime's results say
  (:meth:`Transcript.result_usage`) and the sum of the responses: the results also count
  requests that are not responses of the conversation (Claude Code's side requests), and a
  session that died before its result still used what its responses used.
* **Unattributed** is what no part owns: the run's tokens minus the responses' (those side
  requests), plus responses no part owned (when the parts do not cut the run apart, as in the
  unstructured mode, where phases have no boundaries).
* **Cost.** The runtime reports one cost for the run, not one per response. It is split in
  proportion to each share's tokens weighted by Anthropic's price ratios, which are the same
  for every current Claude model (:data:`PRICE_WEIGHTS`: an output token costs five input
  tokens, a cache write 1.25, a cache read 0.1). The shares are whole millionths of a US
  dollar, rounded by the largest-remainder method, so they sum to the run's cost rounded to
  a millionth. With no cost reported, every share's cost is None.

So for every transcript: the parts plus the unattributed share equal the run's total, count
by count, and in cost within a millionth of a dollar.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from phasegate.evidence.transcript import TOKEN_COUNTS, Transcript, Usage

PRICE_WEIGHTS = {
    "input_tokens": 1.0,
    "output_tokens": 5.0,
    "cache_creation_input_tokens": 1.25,
    "cache_read_input_tokens": 0.1,
}
"""What one token of each count costs, in input tokens (Anthropic's list-price ratios)."""

_MICRO = 1_000_000
"""Cost shares are whole millionths of a US dollar."""


@dataclass(frozen=True, slots=True)
class UsageSplit:
    """A run's tokens and cost, split: ``parts`` (one per part) plus ``unattributed`` is
    ``total``."""

    parts: tuple[Usage, ...]
    unattributed: Usage
    """What no part owns: the runtime's side requests, or responses outside every part."""
    total: Usage
    exact: bool
    """True when every response's final usage was seen (see :class:`ModelResponse`)."""


def split_usage(
    transcript: Transcript, owner: Callable[[int], int | None], parts: int
) -> UsageSplit:
    """The split of ``transcript``'s usage among ``parts`` parts; ``owner(position)`` names
    the part (0-based) that owns the transcript entry at ``position``, or None."""
    responses = transcript.responses()
    owned = [Usage() for _ in range(parts)]
    unowned = Usage()
    for response in responses:
        part = owner(response.position)
        tokens = _tokens(response.usage)
        if part is not None and 0 <= part < parts:
            owned[part] = owned[part] + tokens
        else:
            unowned = unowned + tokens
    seen = sum((_tokens(r.usage) for r in responses), Usage())
    results = transcript.result_usage()
    total = _tokens(
        Usage(**{name: max(getattr(results, name), getattr(seen, name)) for name in TOKEN_COUNTS})
    )
    side = Usage(**{name: getattr(total, name) - getattr(seen, name) for name in TOKEN_COUNTS})
    unattributed = unowned + side
    costs = split_cost(results.cost_usd, [*owned, unattributed])
    return UsageSplit(
        parts=tuple(
            usage.model_copy(update={"cost_usd": cost})
            for usage, cost in zip(owned, costs, strict=False)
        ),
        unattributed=unattributed.model_copy(update={"cost_usd": costs[-1]}),
        total=total.model_copy(update={"cost_usd": results.cost_usd}),
        exact=all(r.exact for r in responses),
    )


def split_cost(cost: float | None, shares: Sequence[Usage]) -> list[float | None]:
    """``cost`` split among ``shares`` by their price-weighted tokens, in whole millionths
    of a dollar that sum to ``cost`` rounded to a millionth; all to the last share when no
    share has tokens (a cost reported without usage)."""
    if cost is None:
        return [None] * len(shares)
    weights = [price_weight(share) for share in shares]
    if sum(weights) == 0:
        weights = [0.0] * (len(shares) - 1) + [1.0]
    micro = round(cost * _MICRO)
    exact = [micro * weight / sum(weights) for weight in weights]
    floors = [math.floor(value) for value in exact]
    # Largest remainder: the millionths lost to the floors go to the largest fractions.
    by_fraction = sorted(range(len(shares)), key=lambda i: exact[i] - floors[i], reverse=True)
    for index in by_fraction[: micro - sum(floors)]:
        floors[index] += 1
    return [value / _MICRO for value in floors]


def price_weight(usage: Usage) -> float:
    """``usage``'s tokens in input-token equivalents (:data:`PRICE_WEIGHTS`)."""
    return sum(
        (float(getattr(usage, name)) * weight for name, weight in PRICE_WEIGHTS.items()), 0.0
    )


def _tokens(usage: Usage) -> Usage:
    return usage.model_copy(update={"cost_usd": None})
