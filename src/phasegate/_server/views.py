"""A run as responses show it: its record, its links, its report, with secrets hidden."""

from __future__ import annotations

from typing import Any

from phasegate._secrets import redact
from phasegate._server.lifecycle import ENDED
from phasegate._server.live import LiveRun
from phasegate._server.records import RunRecord, load_report
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
        ),
        report=hidden(service, report),
    )


def hidden(service: RunService, value: Any) -> Any:
    """``value`` with the service's token and the environment's secrets redacted."""
    if value is None:
        return None
    return redact(value, service.hidden_text)
