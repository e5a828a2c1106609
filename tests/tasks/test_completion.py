"""Structured completion through the runner, with both agents (the real CLI via the model
server, and the in-process scripted agent): completion tools judged at call time, structured
output and its failure modes, revert on reject, and the reconciliation section."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasegate import RunReport, Task
from phasegate.evidence.transcript import ToolCall, ToolResult, UserText
from phasegate.phases.completion import full_tool_name
from phasegate.phases.loading import load_task
from tests.helpers.scenarios import BUGGY_LINE, EDIT, FIXED_LINE, GOOD_JSON, MARKER, codes

RunScript = Callable[..., RunReport]

GOOD: dict[str, Any] = {"files_changed": ["app.py"], "description": "Replaced eval with float."}
COMPLETE_1: dict[str, Any] = {"phase_complete": {"phase": 1, "note": "eval replaced"}}
SUBMIT_GOOD: dict[str, Any] = {"submit_summary": {"summary": GOOD}}


def answers(report: RunReport, tool: str) -> list[dict[str, Any]]:
    """The JSON answers the completion tool ``tool`` gave, in order (a call refused before it
    ran got the refusal, not an answer)."""
    assert report.transcript is not None
    transcript = report.transcript
    results, refused = transcript.results_by_call(), transcript.refused_calls()
    return [
        json.loads(results[e.id].content)
        for e in transcript.entries
        if isinstance(e, ToolCall)
        and e.name == full_tool_name(tool)
        and e.id in results
        and e.id not in refused
    ]


def structured(task: Task) -> Task:
    """``task`` with its output phase asking for schema-constrained output."""
    output = task.phases[-1].model_copy(update={"structured_output": True})
    return task.model_copy(update={"phases": (*task.phases[:-1], output)})


# ---- completion tools ------------------------------------------------------------------------


def test_phases_completed_by_tools_are_accepted_and_say_how(run_script: RunScript) -> None:
    """phase_complete and submit_summary each answer success; the report names the tools."""
    report = run_script([
        {"text": "Fixing app.py.", "tools": [EDIT]},
        {"when": "tool_result", "tools": [COMPLETE_1]},
        {"when": "tool_result", "tools": [SUBMIT_GOOD]},
        {"when": "tool_result", "text": "Done."},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    assert [p.completed_by for p in report.phases] == ["tool", "submit_summary"]
    assert report.summary == GOOD
    (complete,) = answers(report, "phase_complete")
    assert complete["result"] == "success"
    assert complete["attempted"] == {"tool": "phase_complete", "phase": 1, "note": "eval replaced"}
    assert list(complete)[-1] == "action"
    assert "phase 2 (summary)" in complete["action"]
    (submitted,) = answers(report, "submit_summary")
    assert submitted["result"] == "success"
    assert report.attempts == 1  # the stop at the end; the tool checks are not stop checks


def test_a_summary_breaking_the_schema_is_rejected_at_once_and_resubmitted(
    run_script: RunScript,
) -> None:
    """The first submit_summary answers validation_failed with the schema issue; the model
    corrects itself in the same turn and the run is accepted without stop feedback."""
    short = {"files_changed": ["app.py"], "description": "fixed"}
    report = run_script([
        {"tools": [EDIT]},
        {"when": "tool_result", "tools": [COMPLETE_1]},
        {"when": "tool_result", "tools": [{"submit_summary": {"summary": short}}]},
        {"when": "tool_error", "contains": "schema_violation", "tools": [SUBMIT_GOOD]},
        {"when": "tool_result", "text": "Done."},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    first, second = answers(report, "submit_summary")
    assert first["result"] == "validation_failed"
    (invalid,) = first["issues"]["invalid"]
    assert (invalid["code"], invalid["field"]) == ("schema_violation", "$.description")
    assert first["attempted"] == {
        "tool": "submit_summary",
        "summary_fields": ["description", "files_changed"],
    }
    assert list(first)[-1] == "action"
    assert second["result"] == "success"
    assert report.phases[1].attempts == 2  # one rejected call, one accepted
    assert report.attempts == 1


def test_a_summary_submitted_before_the_work_is_refused_and_accepted_after_it(
    run_script: RunScript,
) -> None:
    """A summary first: refused before it runs, naming the phase still to do (no gate check
    spent on it); after the edit and the phase's claim it passes."""
    report = run_script([
        {"tools": [SUBMIT_GOOD]},
        {"when": "tool_error", "contains": "phase 1 (edit) is not complete", "tools": [EDIT]},
        {"when": "tool_result", "tools": [COMPLETE_1]},
        {"when": "tool_result", "tools": [SUBMIT_GOOD]},
        {"when": "tool_result", "text": "Done."},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    (refused,) = report.phases[0].refusals
    assert refused.tool == "mcp__phasegate__submit_summary"
    assert "phase 1 (edit) is not complete" in refused.reason
    (answer,) = answers(report, "submit_summary")  # only the call that ran was answered
    assert answer["result"] == "success"


def test_phase_complete_for_a_phase_that_is_not_there_is_an_error_answer(
    run_script: RunScript,
) -> None:
    """A wrong phase number is answered result=error, with the phases that exist."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "tools": [{"phase_complete": {"phase": 7}}]}],
        max_attempts=1,
    )

    (answer,) = answers(report, "phase_complete")
    assert answer["result"] == "error"
    assert "work phase (1); got 7" in answer["error"]
    assert report.verdict == "rejected"


def test_in_tool_mode_a_typed_marker_and_printed_json_complete_nothing(
    run_script: RunScript, task: Task
) -> None:
    """completion: tool ignores the marker line and the printed JSON."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"}],
        on=task.model_copy(update={"completion": "tool"}),
        max_attempts=1,
    )

    assert report.verdict == "rejected"
    assert {"marker_missing", "json_missing"} <= codes(report)
    assert report.phases[0].marker_seen is False


def test_in_marker_mode_no_completion_tool_is_offered(run_script: RunScript, task: Task) -> None:
    """completion: marker: a phase_complete call is an unknown tool and completes nothing."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "tools": [COMPLETE_1]}],
        on=task.model_copy(update={"completion": "marker"}),
        max_attempts=1,
    )

    assert report.transcript is not None
    (result,) = [e for e in report.transcript.entries if isinstance(e, ToolResult) and not e.ok]
    assert "No such tool available" in result.content
    assert "marker_missing" in codes(report)


# ---- structured output -----------------------------------------------------------------------


def test_a_structured_output_answers_the_output_phase(run_script: RunScript, task: Task) -> None:
    """The StructuredOutput call is the answer; the report says so."""
    report = run_script(
        [
            {"tools": [EDIT]},
            {"when": "tool_result", "text": MARKER, "tools": [{"StructuredOutput": GOOD}]},
        ],
        on=structured(task),
    )

    assert report.verdict == "accepted", report.issues
    assert report.phases[1].completed_by == "structured_output"
    assert report.summary == GOOD


def test_a_schema_built_from_ref_files_constrains_the_structured_output(
    run_script: RunScript, task: Task, tmp_path: Path
) -> None:
    """A summary schema kept in its own file (``$ref``) is embedded at load time; the runtime
    takes that self-contained schema as its output format and the answer is judged by it."""
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "summary.schema.json").write_text(json.dumps(task.phases[-1].output_schema))
    data = task.model_dump(mode="json", exclude_defaults=True)
    data["phases"][-1] |= {"output_schema": {"$ref": "summary.schema.json"}}
    (folder / "task.json").write_text(json.dumps(data))
    from_files = structured(load_task(folder / "task.json"))
    (folder / "summary.schema.json").unlink()  # nothing is read from disk after loading
    assert '"$ref"' in json.dumps(from_files.phases[-1].output_schema)  # the bundled form

    report = run_script(
        [
            {"tools": [EDIT]},
            {"when": "tool_result", "text": MARKER, "tools": [{"StructuredOutput": GOOD}]},
        ],
        on=from_files,
    )

    assert report.verdict == "accepted", report.issues
    assert report.phases[1].completed_by == "structured_output"
    assert report.summary == GOOD


def test_success_without_any_structured_output_is_json_missing(
    run_script: RunScript, task: Task
) -> None:
    """The session ends 'successfully' with no StructuredOutput call: json_missing, explained."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "text": f"{MARKER}\nAll fixed."}],
        on=structured(task),
        max_attempts=1,
    )

    assert report.verdict == "rejected"
    (issue,) = report.phases[1].issues
    assert issue.code.value == "json_missing"
    assert "asked for structured output" in issue.message


def test_a_wrapped_structured_output_is_a_schema_violation_with_a_hint_then_fixed(
    run_script: RunScript, task: Task
) -> None:
    """{"output": {...}} is refused by the runtime until it gives up; the gate says "remove the
    wrapper", resumes the ended session with that, and the unwrapped answer is accepted."""
    wrapped = {"StructuredOutput": {"output": GOOD}}
    report = run_script(
        [
            {"tools": [EDIT]},
            {"when": "tool_result", "text": MARKER, "tools": [wrapped]},
            *[{"when": "tool_error", "tools": [wrapped]}] * 4,
            {"when": "user", "contains": "wrapper", "tools": [{"StructuredOutput": GOOD}]},
        ],
        on=structured(task),
    )

    assert report.verdict == "accepted", report.issues
    assert report.attempts == 2
    assert report.transcript is not None
    feedback = [e for e in report.transcript.entries if isinstance(e, UserText)][1]
    assert 'Remove the \\"output\\" wrapper' in feedback.text


def test_placeholders_left_when_the_runtime_gave_up_are_never_accepted(
    run_script: RunScript, task: Task
) -> None:
    """Every structured output refused, the last one full of TBD: rejected, placeholder named."""
    lazy = {"StructuredOutput": {"files_changed": ["TBD"], "description": "TBD"}}
    report = run_script(
        [
            {"tools": [EDIT]},
            {"when": "tool_result", "text": MARKER, "tools": [lazy]},
            *[{"when": "tool_error", "tools": [lazy]}] * 4,
        ],
        on=structured(task),
        max_attempts=1,
    )

    assert report.verdict == "rejected"
    assert report.summary is None
    assert {"placeholder_value", "schema_violation"} <= codes(report)


def test_a_placeholder_the_runtime_accepted_is_still_rejected(
    run_script: RunScript, task: Task
) -> None:
    """Schema-valid but 'TODO: describe': the runtime takes it, the gate does not."""
    todo = {"files_changed": ["app.py"], "description": "TODO: describe the fix"}
    report = run_script(
        [
            {"tools": [EDIT]},
            {"when": "tool_result", "text": MARKER, "tools": [{"StructuredOutput": todo}]},
        ],
        on=structured(task),
        max_attempts=1,
    )

    assert report.verdict == "rejected"
    assert codes(report) == {"placeholder_value"}


# ---- revert on reject ------------------------------------------------------------------------


def test_a_rejected_run_with_revert_restores_both_edited_files(
    run_script: RunScript, task: Task, project: Path
) -> None:
    """Two files edited, one added, run rejected: all put back, the report lists them."""
    (project / "util.py").write_text("VALUE = 1\n")
    report = run_script(
        [
            {"tools": [
                EDIT,
                {"Edit": {"file_path": "util.py", "old_string": "= 1", "new_string": "= 2"}},
                {"Write": {"file_path": "notes/new.md", "content": "scratch\n"}},
            ]},
            {"when": "tool_result", "text": f"{MARKER}\n\n```json\n{{\"files_changed\": []}}\n```"},
        ],
        on=task.model_copy(update={"on_reject": "revert"}),
        max_attempts=1,
    )  # fmt: skip

    assert report.verdict == "rejected"
    assert (project / "app.py").read_text().count(BUGGY_LINE) == 1
    assert FIXED_LINE not in (project / "app.py").read_text()
    assert (project / "util.py").read_text() == "VALUE = 1\n"
    assert not (project / "notes").exists()
    assert report.reverted is not None
    assert report.reverted.restored == ["app.py", "util.py"]
    assert report.reverted.removed == ["notes/new.md"]
    assert report.reverted.failed == []
    assert set(report.files_changed) == {"app.py", "notes/new.md", "util.py"}


def test_an_accepted_run_with_revert_keeps_its_work(
    run_script: RunScript, task: Task, project: Path
) -> None:
    """Revert only happens on reject."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"}],
        on=task.model_copy(update={"on_reject": "revert"}),
    )

    assert report.verdict == "accepted", report.issues
    assert report.reverted is None
    assert FIXED_LINE in (project / "app.py").read_text()


# ---- reconciliation --------------------------------------------------------------------------


def test_the_report_reconciles_tools_disk_and_claims(run_script: RunScript) -> None:
    """An honest run: the three sets agree, per phase and overall, and there is no finding."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"}]
    )

    overall = report.reconciliation
    assert overall is not None
    assert (overall.tool_reported, overall.disk_changed, overall.claimed) == (
        ["app.py"], ["app.py"], ["app.py"],
    )  # fmt: skip
    assert overall.consistent and report.findings == []
    edit = report.phases[0].reconciliation
    assert edit is not None and edit.claimed is None
    assert (edit.tool_reported, edit.disk_changed) == (["app.py"], ["app.py"])


def test_an_accepted_runs_phases_show_no_mismatch_the_run_does_not_show(
    run_script: RunScript,
) -> None:
    """The summary phase's claims are about the run's changes: compared with that phase's
    own (none), every accepted run used to show claimed_not_changed there."""
    report = run_script(
        [{"tools": [EDIT]}, {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"}]
    )
    assert report.verdict == "accepted", report.issues
    summary = report.phases[-1].reconciliation
    assert summary is not None and summary.claimed == ["app.py"]
    assert (summary.claimed_not_changed, summary.changed_not_claimed) == ([], [])
    for phase in report.phases:
        assert phase.reconciliation is not None
        assert phase.reconciliation.claimed_not_changed == []
        assert phase.reconciliation.changed_not_claimed == []


def test_a_claim_without_a_change_shows_in_the_reconciliation_and_findings(
    run_script: RunScript,
) -> None:
    """The lazy model of seed 002: claimed app.py, changed nothing."""
    report = run_script([{"text": f"{MARKER}\n\n{GOOD_JSON}"}], max_attempts=1)

    overall = report.reconciliation
    assert overall is not None
    assert overall.claimed == ["app.py"] and overall.disk_changed == []
    assert overall.claimed_not_changed == ["app.py"]
    assert [f.code.value for f in report.findings] == ["claimed_not_changed"]
