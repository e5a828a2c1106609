"""Service runs and their recordings: recorded into the run's folder unless the request says
``record: false``; the closing event names the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.recordings import assert_adds_up, read_recording
from tests.helpers.service import running_service

pytestmark = pytest.mark.cli


def test_a_service_run_is_recorded_in_its_folder_unless_its_request_says_not(
    root: Path,
) -> None:
    """The first run (default) has ROOT/.phasegate/runs/<id>/recording/ with the report the
    service serves, and run.completed names it; the second (record false) has none, and
    its run.completed has no recording field."""
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        recorded = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        finished = service.wait(client, recorded["id"])
        plain = service.start_run(
            client, task="task.yaml", workdir="project", copy_workdir=True, record=False
        )
        service.wait(client, plain["id"])
        logs = {run["id"]: service.log_lines(run["id"]) for run in (recorded, plain)}

    folder = root / ".phasegate" / "runs" / recorded["id"] / "recording"
    recording = read_recording(folder)
    assert recording.report == finished["report"]
    assert recording.manifest["run_id"] == recorded["id"]
    assert_adds_up(recording)
    closing = {
        run_id: next(json.loads(line) for line in lines if '"run.completed"' in line)
        for run_id, lines in logs.items()
    }
    assert closing[recorded["id"]]["recording"] == str(folder)
    assert "recording" not in closing[plain["id"]]
    assert not (root / ".phasegate" / "runs" / plain["id"] / "recording").exists()
