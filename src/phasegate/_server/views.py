"""A run as responses show it: its record, its links, its report, with secrets hidden."""

from __future__ import annotations

from typing import Any

from phasegate._secrets import redact
from phasegate._server.lifecycle import ENDED
from phasegate._server.live import LiveRun
from phasegate._server.problems import RequestProblem, root_relative
from phasegate._server.records import RECORDING, RunRecord, load_report, run_dir
from phasegate._server.service import RunService
from phasegate.client.schema import API_VERSION, RunInfo, RunLinks

_AS_RECORDED = (set(RunInfo.model_fields) & set(RunRecord.model_fields)) - {"error", "inputs"}
"""The fields a run's answer takes from its record unchanged (those two are redacted)."""


def run_info(service: RunService, live: LiveRun, *, with_report: bool = True) -> RunInfo:
    """``live`` as ``RunInfo``; its report once it ended with one (``with_report``)."""
    record = live.record
    base = f"/{API_VERSION}/runs/{record.id}"
    report = (
        load_report(service.root, record.id) if with_report and record.status in ENDED else None
    )
    return RunInfo(
        **record.model_dump(include=_AS_RECORDED),
        error=hidden(service, record.error),
        resumable=record.resumable,
        inputs=hidden(service, record.inputs),
        links=RunLinks(
            self=base,
            events=f"{base}/events",
            cancel=f"{base}/cancel",
            resume=f"{base}/resume" if record.resumable else None,
            view=f"{base}/view" if has_recording(service, record.id) else None,
        ),
        report=hidden(service, report),
    )


def hidden(service: RunService, value: Any) -> Any:
    """``value`` with the service's token and the environment's secrets redacted."""
    if value is None:
        return None
    return redact(value, service.hidden_text)


PAGE_BYTES = 64 * 1024 * 1024
"""The largest page of a recorded run the service sends."""


def has_recording(service: RunService, run_id: str) -> bool:
    """Whether the run recorded itself: a real ``recording/`` folder with its manifest."""
    from phasegate.recording.reading import is_recording

    folder = run_dir(service.root, run_id) / RECORDING
    return not folder.is_symlink() and is_recording(folder)


def recorded_page(service: RunService, run_id: str) -> bytes:
    """The page of a run's recording (``recording/index.html``), written first when missing.

    A 404 ``no_recording`` when the run has none, a 409 ``recording_unreadable`` when it is
    damaged (the message names the file, relative to the root). Blocking: call it in a thread.
    """
    from phasegate._files.limits import FileTooLargeError, read_bounded
    from phasegate.errors import RecordingError
    from phasegate.modes import RECORDING_PAGE
    from phasegate.recording.page import write_page

    if not has_recording(service, run_id):
        raise RequestProblem(404, "no_recording", f"the run {run_id} has no recording; start "
                             "it with record set to keep one")  # fmt: skip
    folder = run_dir(service.root, run_id) / RECORDING
    page = folder / RECORDING_PAGE
    try:
        if not page.is_file() or page.is_symlink():
            write_page(folder)
        return read_bounded(page, PAGE_BYTES, follow_links=False)
    except RecordingError as exc:
        message = root_relative(str(exc), service.root)
        raise RequestProblem(409, "recording_unreadable", message) from None
    except FileTooLargeError as exc:
        raise RequestProblem(409, "recording_unreadable", f"the page {exc}") from None
