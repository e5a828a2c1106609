"""What ``batch run`` shows while it works: counts, cost and time left."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from rich.progress import Progress

from phasegate._cli.batch import _LiveDisplay, status_text
from phasegate.batches.progress import BatchCounts, BatchUpdate, counted
from phasegate.batches.unit_run import failed_outcome
from tests.helpers.batch_dirs import make_unit


def test_the_status_counts_verdicts_cost_and_time_left() -> None:
    counts = BatchCounts(total=10, to_run=8, done=4, running=2, accepted=3, rejected=1,
                         cost_usd=0.05, costed=4, unit_ms=8000)  # fmt: skip
    # Four units left at 2 s each, two at a time: 4 s.
    assert status_text(counts, concurrency=2) == (
        "3 accepted · 1 rejected · 0 error · 2 running · $0.0500 · ETA 4 s"
    )


def test_units_that_recorded_no_cost_show_an_unknown_cost_not_zero_dollars() -> None:
    """batch run said $0.0000 (and cost_usd 0.0 in --json) where batch report over the same
    results said null: finished units whose agent reported no cost cost an unknown amount."""
    unpaid = failed_outcome(make_unit("fix", "gate", 1), "the agent failed before a cost")
    counts = counted(counted(BatchCounts(to_run=2, running=2), unpaid), unpaid)

    assert (counts.done, counts.known_cost_usd) == (2, None)
    assert " · – · " in status_text(counts, concurrency=1)
    assert BatchCounts().known_cost_usd == 0.0  # nothing finished: nothing spent
    paid = counted(counts, dataclasses.replace(unpaid, cost_usd=0.25))
    assert paid.known_cost_usd == 0.25


def test_no_time_left_is_guessed_before_a_unit_finishes() -> None:
    assert "ETA" not in status_text(BatchCounts(to_run=3, running=1), concurrency=1)


def test_the_live_display_shows_done_of_total_and_the_stop() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    with Progress(console=console, auto_refresh=False) as progress:
        display = _LiveDisplay(progress, progress.add_task("units", status=""), concurrency=1)
        display(BatchUpdate("finished", BatchCounts(to_run=4, done=1, accepted=1, unit_ms=10)))
        display(BatchUpdate("stopping", BatchCounts(to_run=4, done=1), reason="max_cost"))
        progress.refresh()
    text = screen.getvalue()
    assert "stopping: the cost cap is reached; no new units start" in text
    assert progress.tasks[0].completed == 1 and progress.tasks[0].total == 4
