"""What a starting service makes of the runs a previous instance left on disk.

A run whose record says it ended but whose log lacks the closing ``done`` (the service died
between the two writes) gets its ``done``, so its streams close. A run still ``queued`` or
``running`` whose log ends with ``done`` ended, but its record could not say so (a full
disk): the ``done`` tells how. A run still ``running`` whose process wrote its report before
the service died ended: it is ``finished``; so is one whose log holds its verdict (the
``run.completed`` or ``pipeline.completed`` of its judging) although its report was lost.
Any other run still ``queued`` or ``running`` is ``interrupted``; a pipeline, or a run that
never started, can be resumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate._server.event_files import tail_events
from phasegate._server.lifecycle import ENDED, TRANSITIONS, Ending, interrupted
from phasegate._server.records import EVENTS, RunRecord, load_report, outcome_of, run_dir
from phasegate.modes import RunStatus

DONE_ONLY = "done only"
_COMPLETED = ("run.completed", "pipeline.completed")
_NOT_SAVED = "the service could not save this run's end before it stopped"


@dataclass(frozen=True, slots=True)
class RecordOnly:
    """The run's log says how it ended (its ``done``); only its record is to be written."""

    status: RunStatus
    changes: dict[str, object]


def repair(root: Path, record: RunRecord) -> Ending | RecordOnly | str | None:
    """How to end ``record``'s run now: an :class:`Ending`, a :class:`RecordOnly`,
    :data:`DONE_ONLY` (its record ended, its log did not), or None (nothing to do)."""
    events = tail_events(run_dir(root, record.id) / EVENTS)
    last = events[-1] if events else {}
    if record.status in ENDED:
        return None if last.get("event") == "done" else DONE_ONLY
    # The status its done names, when the record's status may move there.
    status = next((s for s in TRANSITIONS[record.status] if s == last.get("status")), None)
    if last.get("event") == "done" and status is not None:
        verdict = last.get("verdict")
        changes: dict[str, object] = {
            "verdict": verdict if isinstance(verdict, str) else None,
            "error": _NOT_SAVED,
        }
        return RecordOnly(status, changes)
    report = load_report(root, record.id) if record.status == "running" else None
    if report is not None:
        return Ending("finished", changes=outcome_of(report))
    judged = [e for e in events if e.get("event") in _COMPLETED and e.get("run_id") == record.id]
    if record.status == "running" and judged and isinstance(judged[-1].get("verdict"), str):
        error = "the run was judged, but its report was not saved before the service stopped"
        return Ending("finished", changes={"verdict": judged[-1]["verdict"], "error": error})
    return interrupted(record, "the service stopped before the run finished")
