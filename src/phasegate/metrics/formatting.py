"""How numbers read in every rendering of a report (terminal, Markdown, HTML)."""

from __future__ import annotations

MISSING = "–"


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
