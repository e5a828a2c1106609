"""What a starting service makes of the runs a previous instance left on disk.

A run whose record says it ended but whose log lacks the closing ``done`` (the service died
between the two writes) gets its ``done``, so its streams close. A run still ``running``
whose process wrote its report before the service died ended: it is ``finished``. Any other
run still ``queued`` or ``running`` is ``interrupted``; a pipeline, or a run that never
started, can be resumed.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._server.event_files import last_event
from phasegate._server.lifecycle import ENDED, Ending, interrupted
from phasegate._server.records import EVENTS, RunRecord, load_report, outcome_of, run_dir

DONE_ONLY = "done only"


def repair(root: Path, record: RunRecord) -> Ending | str | None:
    """How to end ``record``'s run now: an :class:`Ending`, :data:`DONE_ONLY` (its record
    ended, its log did not), or None (nothing to do)."""
    if record.status in ENDED:
        ended = last_event(run_dir(root, record.id) / EVENTS) == "done"
        return None if ended else DONE_ONLY
    report = load_report(root, record.id) if record.status == "running" else None
    if report is not None:
        return Ending("finished", changes=outcome_of(report))
    return interrupted(record, "the service stopped before the run finished")
