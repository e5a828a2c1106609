"""phasegate's own outputs in the work directory are never the agent's work.

An event log kept in the work directory grows while the agent works; the runner must not see
it as a changed file (``changed_not_claimed`` fed back to the agent), nor revert it away.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate import EventLog, Runner, Task
from phasegate.evidence.transcript import UserText
from phasegate.telemetry.events import EventSink, RunEvent, fan_out
from phasegate.testing import Script, ScriptedAgent, load_script
from tests.helpers.scenarios import BUGGY_LINE, EDIT, EXAMPLE, GOOD_JSON, MARKER


def _log_in_place(project: Path) -> Path:
    return project / "runs.jsonl"


def _log_in_a_subdirectory(project: Path) -> Path:
    (project / "logs").mkdir()
    return project / "logs" / "runs.jsonl"


def _log_through_a_link(project: Path) -> Path:
    link = project.parent / "link-to-project"
    link.symlink_to(project, target_is_directory=True)
    return link / "runs.jsonl"


@pytest.mark.parametrize(
    "where",
    [_log_in_place, _log_in_a_subdirectory, _log_through_a_link],
    ids=["in-place", "subdirectory", "through-a-link"],
)
@pytest.mark.parametrize("combined", [False, True], ids=["alone", "fanned-out"])
def test_an_event_log_in_the_work_directory_is_not_counted_as_changed(
    task: Task, project: Path, where: Callable[[Path], Path], combined: bool
) -> None:
    """The example's lazy model, logging into the work dir: accepted, and no feedback or
    report names the log file."""
    events: list[RunEvent] = []
    path = where(project)
    with EventLog(file=path) as log:
        sink: EventSink | None = fan_out([events.append, log]) if combined else log
        runner = Runner(ScriptedAgent(load_script(EXAMPLE / "model.yaml")), on_event=sink)
        report = runner.run_sync(task, project)

    assert report.verdict == "accepted", report.issues
    assert report.files_changed == ["app.py"]
    assert report.reconciliation is not None and report.transcript is not None
    assert report.reconciliation.change_without_tool == []
    prompts = [e.text for e in report.transcript.entries if isinstance(e, UserText)]
    assert not any("runs.jsonl" in text for text in prompts)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[-1]["event"] == "run.completed" and lines[-1]["verdict"] == "accepted"


def test_a_reverted_run_keeps_every_line_of_its_event_log(task: Task, project: Path) -> None:
    """on_reject: revert puts the agent's work back, never phasegate's log: the log keeps every
    line of the run, the closing ones included."""
    reverting = task.model_copy(update={"on_reject": "revert"})
    script = load_script(EXAMPLE / "model.yaml")
    with EventLog(file=project / "runs.jsonl") as log:
        report = Runner(ScriptedAgent(script), mode="single-query", on_event=log).run_sync(
            reverting, project
        )

    assert report.verdict == "rejected"
    assert report.reverted is not None
    assert "runs.jsonl" not in [*report.reverted.restored, *report.reverted.removed]
    lines = [json.loads(line) for line in (project / "runs.jsonl").read_text().splitlines()]
    assert lines[0]["event"] == "run.started"
    assert lines[-1]["event"] == "run.completed"
    assert BUGGY_LINE in (project / "app.py").read_text()


def test_only_the_file_phasegate_writes_is_left_out_not_every_file_of_its_name(
    task: Task, project: Path
) -> None:
    """With the log elsewhere, a runs.jsonl the agent writes in the work dir is its work."""
    write = {"Write": {"file_path": "runs.jsonl", "content": "the agent's file\n"}}
    replies = [
        {"tools": [EDIT, write]},
        {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"},
    ]
    script = Script.model_validate({"replies": replies})
    with EventLog(file=project.parent / "runs.jsonl") as log:
        report = Runner(ScriptedAgent(script), mode="single-query", on_event=log).run_sync(
            task, project
        )

    assert report.files_changed == ["app.py", "runs.jsonl"]
    assert report.reconciliation is not None
    assert report.reconciliation.changed_not_claimed == ["runs.jsonl"]
