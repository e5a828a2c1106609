"""Reading one event's fields for the report: each of its type, finite and in range.

A log is not trusted: a field that is negative, not finite (``1e999`` parses as infinity),
too large to mean anything (a 400-digit integer) or of the wrong type makes the whole line
corrupt (:class:`CorruptLine`), so the aggregator skips it and counts it instead of letting
one bad value crash the report or skew a mean. The bounds are far past any real run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

MAX_ATTEMPTS = 1_000_000
"""The most gate checks a phase or run can report."""
MAX_PHASE = 1_000_000
"""The highest phase number."""
MAX_TOKENS = 10**13
"""The most tokens a phase or run can report."""
MAX_COST_USD = 1e7
"""The highest cost of one phase or run, in USD."""
MAX_DURATION_MS = 1e12
"""The longest duration, in milliseconds (about 31 years)."""


class CorruptLine(ValueError):
    """A field of a log line cannot be a real value: the line is skipped and counted."""


Outcome = tuple[int, int, int, float | None]
"""The numbers a ``phase.completed`` or ``run.completed`` line reports: gate checks, input
and output tokens, and the cost in USD (None when the line recorded none: unknown is not
zero). A plain tuple: one is built for most lines of a report."""


def outcome(event: dict[str, Any]) -> Outcome:
    """The gate checks, tokens and cost of a ``*.completed`` line."""
    attempts, tokens_in = event.get("attempts"), event.get("input_tokens")
    tokens_out, cost = event.get("output_tokens"), event.get("cost_usd")
    # The shape every real line has, checked inline: this runs for most lines of a report.
    if (
        type(attempts) is int
        and type(tokens_in) is int
        and type(tokens_out) is int
        and type(cost) is float
        and 0 <= attempts <= MAX_ATTEMPTS
        and 0 <= tokens_in <= MAX_TOKENS
        and 0 <= tokens_out <= MAX_TOKENS
        and 0 <= cost <= MAX_COST_USD
    ):
        return attempts, tokens_in, tokens_out, cost
    return (
        count(event, "attempts", MAX_ATTEMPTS),
        count(event, "input_tokens", MAX_TOKENS),
        count(event, "output_tokens", MAX_TOKENS),
        amount(event, "cost_usd", MAX_COST_USD),
    )


Tokens = tuple[int, int, float | None]
"""Input and output tokens and the cost in USD (None: the line recorded none) of a usage
object of a line (``unattributed_usage``, ``grader_usage``)."""
NO_TOKENS: Tokens = (0, 0, None)


def unattributed(event: dict[str, Any]) -> Tokens:
    """The input and output tokens and the cost no phase owns, from a run's closing line
    (its ``unattributed_usage``; absent before event schema version 4: nothing)."""
    return usage_object(event, "unattributed_usage")


def grader(event: dict[str, Any]) -> Tokens:
    """The input and output tokens and the cost of the grader sessions a line reports (its
    ``grader_usage``: a phase's, a run's, a check run's; absent when no grader spent
    anything, and from lines older than the field: nothing)."""
    return usage_object(event, "grader_usage")


def usage_object(event: dict[str, Any], name: str) -> Tokens:
    """The tokens and cost of the usage object ``name`` of a line; nothing when absent."""
    usage = event.get(name)
    if usage is None:
        return NO_TOKENS
    if type(usage) is not dict:
        raise CorruptLine(f"{name} is not an object")
    return (
        count(usage, "input_tokens", MAX_TOKENS),
        count(usage, "output_tokens", MAX_TOKENS),
        amount(usage, "cost_usd", MAX_COST_USD),
    )


MAX_CRITERIA = 1_000
"""The most criteria one ``check.ran`` line may list."""


def criteria(event: dict[str, Any]) -> tuple[int, int]:
    """How many criteria a ``check.ran`` line's ``criteria`` judged and how many of them were
    met (a graded rubric's; (0, 0) for every other check)."""
    value = event.get("criteria")
    if value is None:
        return 0, 0
    if type(value) is not list or len(value) > MAX_CRITERIA:
        raise CorruptLine(f"criteria is not a list of at most {MAX_CRITERIA} objects")
    met = 0
    for item in value:
        if type(item) is not dict or item.get("verdict") not in ("met", "not_met", "cannot_tell"):
            raise CorruptLine("a criterion is not an object with a verdict")
        met += item["verdict"] == "met"
    return len(value), met


Overhead = tuple[int, int, int, int]
"""The ``overhead`` a ``*.completed`` line reports: requests, input tokens carried, and the
gate's tool-definition and text tokens (estimated)."""
NO_OVERHEAD: Overhead = (0, 0, 0, 0)
OVERHEAD_FIGURES = ("requests", "input_tokens", "tool_tokens", "text_tokens")
"""The figures of an ``overhead`` object the report sums, in :data:`Overhead`'s order."""


MAX_SUBAGENTS = 10_000
"""The most subagents one phase or run line may list."""
MAX_SUBAGENT_TYPE = 200
"""The longest subagent type kept; longer ones make the line corrupt."""
UNTYPED = "untyped"
"""The type a subagent is counted under when its line names none."""


def subagents(event: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """The calls and failed calls of a line's ``subagents``, by subagent type (absent from
    lines before events version 5: none)."""
    value = event.get("subagents")
    if value is None:
        return {}
    if type(value) is not list or len(value) > MAX_SUBAGENTS:
        raise CorruptLine(f"subagents is not a list of at most {MAX_SUBAGENTS} objects")
    found: dict[str, tuple[int, int]] = {}
    for work in value:
        if type(work) is not dict:
            raise CorruptLine("a subagent is not an object")
        kind = work.get("type")
        if kind is not None and (type(kind) is not str or len(kind) > MAX_SUBAGENT_TYPE):
            raise CorruptLine("a subagent's type is not a short string")
        tools = work.get("tools")
        if type(tools) is not dict:
            raise CorruptLine("a subagent's tools are not an object")
        calls = sum(count(tools, str(name), MAX_REFUSALS) for name in tools)
        errors = count(work, "tool_errors", MAX_REFUSALS)
        key = kind or UNTYPED
        had = found.get(key, (0, 0))
        found[key] = (had[0] + calls, had[1] + errors)
    return found


def overhead(event: dict[str, Any]) -> Overhead:
    """The input a phase's or run's requests carried and the gate's share (its ``overhead``;
    absent from lines written before it was added: nothing)."""
    value = event.get("overhead")
    if value is None:
        return NO_OVERHEAD
    if type(value) is not dict:
        raise CorruptLine("overhead is not an object")
    requests, carried = value.get("requests"), value.get("input_tokens")
    tools, words = value.get("tool_tokens"), value.get("text_tokens")
    # The shape every real line has, checked inline as in outcome().
    if (
        type(requests) is int
        and type(carried) is int
        and type(tools) is int
        and type(words) is int
        and 0 <= requests <= MAX_TOKENS
        and 0 <= carried <= MAX_TOKENS
        and 0 <= tools <= MAX_TOKENS
        and 0 <= words <= MAX_TOKENS
    ):
        return requests, carried, tools, words
    requests, carried, tools, text = (count(value, name, MAX_TOKENS) for name in OVERHEAD_FIGURES)
    return requests, carried, tools, text


MAX_REFUSALS = 1_000_000
"""The most refused tool calls a phase or run can report."""


def count(event: dict[str, Any], name: str, limit: int) -> int:
    """A whole number from 0 to ``limit``; 0 when the field is absent or null."""
    value = event.get(name)
    if type(value) is int and 0 <= value <= limit:
        return value
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= limit:
        raise CorruptLine(f"{name} is not a whole number from 0 to {limit}")
    return value


def amount(event: dict[str, Any], name: str, limit: float) -> float | None:
    """A finite number from 0 to ``limit``; None when the field is absent or null."""
    value = event.get(name)
    if value is None:
        return None
    # Compared before any conversion: float() of a 400-digit integer would overflow.
    if type(value) not in (int, float) or not 0 <= value <= limit:  # NaN fails both bounds
        raise CorruptLine(f"{name} is not a number from 0 to {limit}")
    return float(value)


def phase(event: dict[str, Any]) -> int:
    """The line's phase number (required)."""
    value = event["phase"]
    if type(value) is not int or not 1 <= value <= MAX_PHASE:
        raise CorruptLine(f"phase is not a whole number from 1 to {MAX_PHASE}")
    return value


def text(event: dict[str, Any], name: str = "timestamp") -> str:
    """A string field (required); a timestamp is kept as written until it is needed."""
    value = event[name]
    if type(value) is not str:
        raise CorruptLine(f"{name} is not a string")
    return value


def moment(value: object) -> datetime:
    """A timestamp: an ISO 8601 time with its offset."""
    if not isinstance(value, str):
        raise CorruptLine("timestamp is not a string")
    at = datetime.fromisoformat(value)
    if at.tzinfo is None:
        raise CorruptLine("timestamp has no offset")
    return at


def elapsed_ms(start: datetime, end: datetime) -> float:
    """Milliseconds from ``start`` to ``end`` (0 when the clock went back)."""
    elapsed = max((end - start).total_seconds() * 1000, 0.0)
    if elapsed > MAX_DURATION_MS:
        raise CorruptLine("the time between the two events is out of range")
    return elapsed


MAX_CHECK_KIND = 100
"""The longest check kind kept (``command``, ``file_exists``, ...); longer ones make the line
corrupt."""
MAX_CHECK_DESCRIPTION = 2_000
"""Characters of a check's description kept; a longer one is cut (and ends with ``…``)."""
MAX_CHECK_POSITION = 1_000_000
"""The highest 0-based position of a check in its list."""

CheckLine = tuple[int | None, int, str, str, float, bool]
"""What a ``check.ran`` line says: its phase (None: the task's own checks), its position in
its list, its kind, its description, its duration in ms and whether it passed."""


def check_ran(event: dict[str, Any]) -> CheckLine:
    """The figures of a ``check.ran`` line, each checked."""
    phase_value = event.get("phase")
    at = None if phase_value is None else phase(event)
    position = event["check"]
    if type(position) is not int or not 0 <= position <= MAX_CHECK_POSITION:
        raise CorruptLine(f"check is not a whole number from 0 to {MAX_CHECK_POSITION}")
    kind, description = text(event, "kind"), text(event, "description")
    if len(kind) > MAX_CHECK_KIND:
        raise CorruptLine(f"kind is longer than {MAX_CHECK_KIND} characters")
    if len(description) > MAX_CHECK_DESCRIPTION:
        description = description[: MAX_CHECK_DESCRIPTION - 1] + "…"
    duration = amount(event, "duration_ms", MAX_DURATION_MS)
    if duration is None:
        raise CorruptLine("duration_ms is missing")
    passed = event["passed"]
    if type(passed) is not bool:
        raise CorruptLine("passed is not true or false")
    return at, position, kind, description, duration, passed
