"""A recorded task run whose agent crashes (not an agent failure the run reports, but an
exception out of the agent): the exception goes on, and the recording of what was seen is
written first."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate import Runner, Task
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.evidence.transcript import AssistantText, SessionStart
from tests.helpers.recordings import read_recording
from tests.helpers.scenarios import BUGGY_LINE

FIXED = BUGGY_LINE.replace("eval(expression)", "float(expression)")


class _Crashing:
    """Fixes app.py, says so, then crashes with a bug of its own."""

    name = "crashing"

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        observer.on_entry(SessionStart(session_id="s1"))
        app = request.workdir / "app.py"
        app.write_text(app.read_text().replace(BUGGY_LINE, FIXED))
        observer.on_entry(AssistantText(text="Fixed app.py <b>really</b>."))
        raise KeyError("a bug in the agent")


def test_a_crashed_run_leaves_a_recording_of_what_was_seen_and_the_exception_goes_on(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """No report exists, so report.json is absent and files.report null; the error names
    the exception; the transcript and phase 1's diff are there."""
    folder = tmp_path / "recording"

    with pytest.raises(KeyError):
        Runner(_Crashing()).run_sync(task, project, record=folder)

    recording = read_recording(folder)
    manifest = recording.manifest
    assert (manifest["verdict"], manifest["files"]["report"]) == ("error", None)
    assert not (folder / "report.json").exists()
    assert manifest["error"] == "KeyError: 'a bug in the agent'"
    assert [e["kind"] for e in recording.transcript] == ["user", "session", "assistant"]
    changed = [line for line in recording.diff(0).splitlines() if line.startswith(("-", "+"))]
    assert changed == [
        "--- a/app.py", "+++ b/app.py", "-" + BUGGY_LINE.rstrip("\n"), "+" + FIXED.rstrip("\n"),
    ]  # fmt: skip
