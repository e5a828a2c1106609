"""How numbers, names and the shared table rows read in every rendering of a report
(terminal, Markdown, HTML)."""

from __future__ import annotations

from typing import Any

from phasegate.modes import MODES

MISSING = "–"
PHASE_COLUMNS = ("phase", "runs", "completed", "1st attempt", "mean attempts",
                 "p50 to complete", "p95 to complete", "tool errors")  # fmt: skip
MODE_COLUMNS = ("task", *MODES, "gate − single-query", "gate − unstructured")


def quantity(amount: int, noun: str, plural: str | None = None) -> str:
    """``1 run``, ``3 runs``, ``0 runs``: a number and its noun, singular only for one."""
    return f"{amount} {noun if amount == 1 else plural or f'{noun}s'}"


def usd(value: float | None) -> str:
    """``0.5`` → ``$0.5000``; an unknown cost (no line recorded one) is not ``$0.0000``."""
    return MISSING if value is None else f"${value:.4f}"


def percent(value: float | None) -> str:
    """``0.8333`` → ``83 %``."""
    return MISSING if value is None else f"{value * 100:.0f} %"


def points(value: float | None) -> str:
    """A difference of rates: ``0.25`` → ``+25 pts``."""
    return MISSING if value is None else f"{value * 100:+.0f} pts"


def number(value: float | None) -> str:
    """A mean: two decimals."""
    return MISSING if value is None else f"{value:.2f}"


def duration(ms: float | None) -> str:
    """``850`` → ``850 ms``, ``12_300`` → ``12.3 s``, ``90_000`` → ``1.5 min``."""
    if ms is None:
        return MISSING
    if ms >= 60_000:
        return f"{ms / 60_000:.3g} min"
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.0f} ms"


def group_label(group: dict[str, Any]) -> str:
    """``task / mode`` of a summary group, without the part its grouping merged away."""
    return " / ".join(str(part) for part in (group["task"], group["mode"]) if part is not None)


def phase_name(phase: dict[str, Any]) -> str:
    """A phase row's name, or ``phase N`` when the log never named it."""
    return str(phase["name"]) if phase["name"] is not None else f"phase {phase['index']}"


def phase_label(phase: dict[str, Any]) -> str:
    """``1. edit``."""
    return f"{phase['index']}. {phase_name(phase)}"


def outcome_cells(row: dict[str, Any], rate: str) -> list[str]:
    """Runs, the accepted share (``rate``), first-attempt share and mean attempts of a group
    or phase row."""
    return [
        str(row["runs"]),
        percent(row[rate]),
        percent(row["first_attempt_rate"]),
        number(row["mean_attempts"]),
    ]


def phase_cells(phase: dict[str, Any]) -> list[str]:
    """A phase row under :data:`PHASE_COLUMNS`."""
    times = phase["time_to_completion_ms"]
    return [
        phase_label(phase),
        *outcome_cells(phase, "completion_rate"),
        duration(times["p50"]),
        duration(times["p95"]),
        str(phase["tool_errors"]),
    ]


def comparison_cells(row: dict[str, Any]) -> list[str]:
    """A mode-comparison row under :data:`MODE_COLUMNS`."""
    rates = row["success_rate"]
    return [
        str(row["task"]),
        *(percent(rates.get(mode)) for mode in MODES),
        points(row["gate_minus_single_query"]),
        points(row["gate_minus_unstructured"]),
    ]
