"""Runner scenarios with the scripted agent: what a model does, and what the gate decides."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate import AgentObserver, AgentRequest, RunEvent, Runner, RunReport, Task, UsageError
from phasegate.evidence.transcript import AssistantText, RunResult, SessionStart, UserText
from phasegate.agents.retry import RetryPolicy
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.scenarios import (
    BUGGY_LINE,
    EDIT,
    FIXED_LINE,
    GOOD_JSON,
    MARKER,
    NO_RETRIES,
    READ,
    codes,
)

RunScript = Callable[..., RunReport]


def test_a_model_that_edits_then_marks_then_reports_is_accepted_on_the_first_check(
    run_script: RunScript, project: Path
) -> None:
    """The good run: edit, marker, JSON → accepted, one check, summary returned."""
    report = run_script(
        [{"tools": [READ]}, {"tools": [EDIT]}, {"text": f"{MARKER}\n\n{GOOD_JSON}"}]
    )
    assert report.verdict == "accepted"
    assert report.success and report.exit_code == 0
    assert report.attempts == 1
    assert [p.status for p in report.phases] == ["accepted", "accepted"]
    assert report.phases[0].tools == {"Read": 1, "Edit": 1}
    assert report.phases[0].files_changed == ["app.py"]
    assert report.summary == {
        "files_changed": ["app.py"],
        "description": "Replaced eval with float parsing.",
    }
    assert report.files_changed == ["app.py"] == report.files_claimed
    assert FIXED_LINE in (project / "app.py").read_text()


def test_json_without_an_edit_is_rejected_in_single_query_mode(run_script: RunScript) -> None:
    """Seed 002's failure: JSON claiming a change nobody made is rejected."""
    report = run_script([{"tools": [READ]}, {"text": GOOD_JSON}], mode="single-query")
    assert report.verdict == "rejected" and report.exit_code == 1
    assert report.attempts == 1
    assert {"tool_not_used", "no_changes", "marker_missing", "json_before_marker"} <= codes(report)
    assert report.summary is None


def test_a_marker_without_an_edit_is_a_false_claim(run_script: RunScript) -> None:
    """Printing the marker does not complete a phase whose required tool was never used."""
    report = run_script([{"text": f"{MARKER}\n\n{GOOD_JSON}"}], mode="single-query")
    assert report.phases[0].marker_seen
    assert report.phases[0].status == "rejected"
    assert codes(report) == {"tool_not_used", "no_changes", "claimed_not_changed"}


def test_a_failed_edit_followed_by_a_marker_is_rejected_as_tool_failed(
    run_script: RunScript,
) -> None:
    """An edit whose tool result is an error is not evidence of work."""
    bad_edit = {"Edit": {"file_path": "app.py", "old_string": "not in the file", "new_string": "x"}}
    report = run_script(
        [{"tools": [bad_edit]}, {"text": f"{MARKER}\n\n{GOOD_JSON}"}], mode="single-query"
    )
    first = report.phases[0]
    assert first.tool_errors == 1 and first.tools == {}
    assert {i.code.value for i in first.issues} == {"tool_failed", "no_changes"}


def test_a_marker_printed_before_the_edit_is_rejected_as_marker_before_work(
    run_script: RunScript,
) -> None:
    """The edit happened, but after the agent said the phase was done."""
    report = run_script(
        [{"text": MARKER, "tools": [EDIT]}, {"text": GOOD_JSON}], mode="single-query"
    )
    assert [i.code.value for i in report.phases[0].issues] == ["marker_before_work"]
    assert report.verdict == "rejected"


def test_json_printed_before_the_marker_is_rejected(run_script: RunScript) -> None:
    """The JSON summary must come after the last work phase's marker."""
    report = run_script(
        [{"tools": [EDIT]}, {"text": GOOD_JSON, "tools": [READ]}, {"text": MARKER}],
        mode="single-query",
    )
    assert report.phases[0].status == "accepted"
    assert [i.code.value for i in report.phases[1].issues] == ["json_before_marker"]


@pytest.mark.parametrize(
    ("claimed", "expected"),
    [
        ('["app.py", "db.py"]', {"claimed_not_changed"}),
        ("[]", {"changed_not_claimed", "schema_violation"}),
    ],
)
def test_claims_that_do_not_match_the_disk_are_rejected_both_ways(
    run_script: RunScript, claimed: str, expected: set[str]
) -> None:
    """Files claimed but unchanged, and files changed but unclaimed, are both issues."""
    summary = (
        f'```json\n{{"files_changed": {claimed}, "description": "Replaced eval safely."}}\n```'
    )
    report = run_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n{summary}"}], mode="single-query")
    assert {i.code.value for i in report.phases[1].issues} == expected


def test_a_placeholder_value_in_the_summary_is_rejected(run_script: RunScript) -> None:
    """'TBD' is not a description."""
    summary = '```json\n{"files_changed": ["app.py"], "description": "TBD - fill in later"}\n```'
    report = run_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n{summary}"}], mode="single-query")
    assert [i.code.value for i in report.phases[1].issues] == ["placeholder_value"]
    assert report.phases[1].issues[0].field == "$.description"


def test_an_edit_outside_the_work_directory_is_denied_and_reported(
    run_script: RunScript, project: Path
) -> None:
    """A tool call naming a path outside the work dir is an issue, and nothing is written there."""
    outside = project.parent / "elsewhere.py"
    outside.write_text("x = 1\n")
    escape = {"Edit": {"file_path": str(outside), "old_string": "x = 1", "new_string": "x = 2"}}
    report = run_script(
        [{"tools": [EDIT, escape]}, {"text": f"{MARKER}\n{GOOD_JSON}"}], mode="single-query"
    )
    assert outside.read_text() == "x = 1\n"
    assert codes(report) == {"path_outside_workdir"}
    assert report.phases[0].tool_errors == 1


def test_a_write_through_a_link_out_of_the_work_directory_is_denied_and_nothing_leaks(
    run_script: RunScript, task: Task, project: Path
) -> None:
    """``out -> ../outside``: the write is a failed tool call (as in Claude Code), no false
    edit_not_on_disk, and neither the run nor its revert touches the outside directory."""
    outside = project.parent / "outside"
    outside.mkdir()
    (project / "out").symlink_to(Path("..") / "outside", target_is_directory=True)
    escape = {"Write": {"file_path": "out/leak.txt", "content": "escaped\n"}}
    claim = GOOD_JSON.replace('["app.py"]', '["app.py", "out/leak.txt"]')
    report = run_script(
        [{"tools": [EDIT, escape]}, {"when": "tool_error", "text": f"{MARKER}\n\n{claim}"}],
        mode="single-query",
        on=task.model_copy(update={"on_reject": "revert"}),
    )
    assert list(outside.iterdir()) == []
    assert report.phases[0].tool_errors == 1
    assert report.reconciliation is not None
    assert report.reconciliation.edit_not_on_disk == []
    assert report.reconciliation.claimed_not_changed == ["out/leak.txt"]
    assert report.verdict == "rejected" and report.reverted is not None
    assert report.reverted.restored == ["app.py"] and report.reverted.failed == []
    assert BUGGY_LINE in (project / "app.py").read_text()


def test_invalid_json_fixed_after_feedback_is_accepted_on_attempt_two(
    run_script: RunScript, events: list[RunEvent]
) -> None:
    """The gate's feedback names the problem; the corrected JSON is accepted."""
    report = run_script(
        [
            {"tools": [EDIT]},
            {"text": f'{MARKER}\n```json\n{{"files_changed": ["app.py"], "description": }}\n```'},
            {"when": "user", "contains": "json_invalid", "text": GOOD_JSON},
        ]
    )
    assert report.verdict == "accepted"
    assert report.attempts == 2
    assert [p.attempts for p in report.phases] == [1, 2]
    feedback = [e for e in report.transcript.entries if isinstance(e, UserText)][1:]  # type: ignore[union-attr]
    assert len(feedback) == 1 and '"json_invalid"' in feedback[0].text
    gate_events = [e.fields for e in events if e.event == "phase.gate"]
    assert [(g["phase"], g["attempt"], g["accepted"]) for g in gate_events] == [
        (1, 1, True),
        (2, 1, False),
        (1, 2, True),
        (2, 2, True),
    ]


def test_when_the_budget_is_spent_the_run_is_rejected_with_attempts_at_the_maximum(
    run_script: RunScript,
) -> None:
    """A model that never does the work gets max_attempts checks, then a rejection."""
    lazy = {"text": f"{MARKER}\n{GOOD_JSON}"}
    report = run_script([lazy, {"when": "user", **lazy}, {"when": "user", **lazy}], max_attempts=3)
    assert report.verdict == "rejected"
    assert report.attempts == 3
    assert report.phases[0].attempts == 3
    feedback = [e for e in report.transcript.entries if isinstance(e, UserText)][1:]  # type: ignore[union-attr]
    assert len(feedback) == 2  # feedback after checks 1 and 2, none after the last


def test_the_same_bad_run_in_single_query_mode_gets_one_check_and_no_feedback(
    run_script: RunScript,
) -> None:
    """single-query judges once: no re-prompt even though the agent could have fixed it."""
    report = run_script(
        [{"text": f"{MARKER}\n{GOOD_JSON}"}, {"when": "user", "tools": [EDIT]}],
        mode="single-query",
    )
    assert report.verdict == "rejected"
    assert report.attempts == 1
    assert sum(isinstance(e, UserText) for e in report.transcript.entries) == 1  # type: ignore[union-attr]


def test_gate_mode_turns_the_lazy_model_of_the_example_into_an_accepted_run(
    task: Task, project: Path
) -> None:
    """The bundled example script: rejected alone, accepted after one round of feedback."""
    from phasegate.testing import load_script
    from tests.helpers.scenarios import EXAMPLE

    script = load_script(EXAMPLE / "model.yaml")
    report = Runner(ScriptedAgent(script)).run_sync(task, project)
    assert (report.verdict, report.attempts) == ("accepted", 2)
    assert BUGGY_LINE not in (project / "app.py").read_text()


def test_unstructured_mode_sends_no_phase_scaffolding_and_skips_marker_rules(
    run_script: RunScript,
) -> None:
    """The A/B baseline is judged on evidence alone: an edit and honest JSON pass."""
    report = run_script([{"tools": [EDIT]}, {"text": GOOD_JSON}], mode="unstructured")
    prompt = report.transcript.entries[0]  # type: ignore[union-attr]
    assert isinstance(prompt, UserText) and "PHASE" not in prompt.text
    assert report.verdict == "accepted"


def test_events_follow_the_run_in_order_with_the_run_identity(
    run_script: RunScript, events: list[RunEvent]
) -> None:
    """Every event carries run_id, task and mode; the run starts and completes exactly once."""
    report = run_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}])
    names = [e.event for e in events]
    assert names[0] == "run.started" and names[-1] == "run.completed"
    assert names.count("run.completed") == 1
    assert {"phase.started", "tool.called", "phase.marker", "phase.gate", "phase.completed"} <= set(
        names
    )
    assert {e.run_id for e in events} == {report.run_id}
    assert all(e.task == "fix-vulnerability" and e.mode == "gate" for e in events)
    tool_event = next(e for e in events if e.event == "tool.called")
    assert tool_event.fields == {
        "phase": 1,
        "tool": "Edit",
        "tool_use_id": "toolu_scripted_0001",
        "ok": True,
    }


def test_an_agent_failure_gives_an_error_report_that_keeps_what_was_done(
    run_script: RunScript,
) -> None:
    """An API failure mid-run is verdict error (exit 3), with the edit still on record."""
    report = run_script([{"tools": [EDIT]}, {"error": {"status": 529}}], retry=NO_RETRIES)
    assert report.verdict == "error" and report.exit_code == 3
    assert report.error is not None and "529" in report.error
    assert report.files_changed == ["app.py"]
    assert report.phases[0].tools == {"Edit": 1}
    assert [p.status for p in report.phases] == ["not_reached", "not_reached"]


def test_a_transient_failure_is_retried_and_the_session_continues_where_it_stopped(
    run_script: RunScript, events: list[RunEvent]
) -> None:
    """A 529 mid-run: phasegate resumes the session, which finishes the task, accepted."""
    report = run_script(
        [
            {"tools": [EDIT]},
            {"error": {"status": 529}},
            {
                "when": "user",
                "contains": "infrastructure failure",
                "text": f"{MARKER}\n{GOOD_JSON}",
            },
        ]
    )
    assert report.verdict == "accepted"
    assert (report.retries, report.attempts) == (1, 1)
    retry = next(e.fields for e in events if e.event == "retry.scheduled")
    assert retry["source"] == "phasegate" and retry["attempt"] == 1 and "529" in retry["reason"]
    assert report.phases[0].tools == {"Edit": 1}  # the edit was not made twice


def test_retries_are_bounded_and_then_the_run_is_an_error(run_script: RunScript) -> None:
    """A failure that keeps coming back ends as verdict error after the allowed retries."""
    failure = {"error": {"status": 500}}
    report = run_script([failure, {"when": "user", **failure}, {"when": "user", **failure}])
    assert report.verdict == "error" and report.retries == 2
    assert report.error is not None and "500" in report.error


def test_the_run_timeout_covers_retries_and_ends_in_an_error(
    task: Task, project: Path, events: list[RunEvent]
) -> None:
    """Retries never stretch a run past its timeout: the deadline is for the whole run."""
    failure = {"error": {"status": 503}}
    script = Script.model_validate({"replies": [failure] + [{"when": "user", **failure}] * 5})
    slow = RetryPolicy(session_retries=5, initial_delay=30.0, max_delay=30.0)
    runner = Runner(ScriptedAgent(script), retry=slow, timeout=0.5, on_event=events.append)
    report = runner.run_sync(task, project)
    assert report.verdict == "error" and report.retries == 1
    assert report.error == "the run did not finish within its timeout of 0.5 s"


def test_a_missing_work_directory_is_a_usage_error(task: Task, tmp_path: Path) -> None:
    """Bad input fails before any agent runs, naming the directory."""
    runner = Runner(ScriptedAgent(Script.model_validate({"replies": [{"text": "hi"}]})))
    with pytest.raises(UsageError, match="does-not-exist"):
        runner.run_sync(task, tmp_path / "does-not-exist")


@pytest.mark.parametrize(("option", "value"), [("mode", "sometimes"), ("max_attempts", 0)])
def test_bad_runner_options_are_usage_errors(option: str, value: object) -> None:
    """An unknown mode or a budget below one is refused up front."""
    agent = ScriptedAgent(Script.model_validate({"replies": [{"text": "hi"}]}))
    with pytest.raises(UsageError):
        Runner(agent, **{option: value})  # type: ignore[arg-type]


class _DeafAgent:
    """Asks the gate once, ignores its feedback (as Claude Code does after a structured
    output), and on resume ends at once without a word."""

    name = "deaf"

    def __init__(self) -> None:
        self.requests: list[AgentRequest] = []

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        self.requests.append(request)
        observer.on_entry(SessionStart(session_id="s1", cwd=str(request.workdir)))
        if request.resume is None:
            observer.on_entry(AssistantText(text=f"{MARKER}\n\n{GOOD_JSON}"))
            await observer.on_stop()
        observer.on_entry(RunResult(subtype="success"))


def test_feedback_the_session_never_took_is_delivered_by_resuming_it_once(
    task: Task, project: Path
) -> None:
    """The undelivered feedback goes out as the resumed session's prompt; a session that then
    does nothing ends the run instead of resuming forever."""
    agent = _DeafAgent()

    report = Runner(agent, max_attempts=3).run_sync(task, project)

    assert report.verdict == "rejected"
    assert [r.resume for r in agent.requests] == [None, "s1"]
    assert '"result": "validation_failed"' in agent.requests[1].prompt
    assert report.attempts == 1


def test_the_report_names_the_session_and_the_models_last_word(
    run_script: RunScript, agent_kind: str
) -> None:
    report = run_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n\n{GOOD_JSON}"}])

    assert report.verdict == "accepted"
    assert report.final_message == f"{MARKER}\n\n{GOOD_JSON}"
    assert report.session_id is not None
    if agent_kind == "scripted":
        assert report.session_id == "scripted"
    dumped = json.loads(report.model_dump_json())
    assert (dumped["session_id"], dumped["final_message"]) == (
        report.session_id,
        report.final_message,
    )


def test_half_a_surrogate_pair_in_the_last_word_still_gives_a_json_report(
    task: Task, project: Path
) -> None:
    """The report is written as UTF-8 JSON (``run --json``); it must not fail on the text."""
    script = Script.model_validate({"replies": [{"text": f"{MARKER}\n\ncut \ud83d here"}]})

    report = Runner(ScriptedAgent(script), retry=NO_RETRIES).run_sync(task, project)

    assert report.final_message == f"{MARKER}\n\ncut \ufffd here"
    assert json.loads(report.model_dump_json())["final_message"] == report.final_message


@pytest.mark.parametrize("max_attempts", [3, 12])
def test_a_session_may_be_blocked_as_often_as_the_gate_has_attempts(
    task: Task, tmp_path: Path, max_attempts: int
) -> None:
    """The request carries the gate's budget, so the runtime never ends the session first."""
    runner = Runner(ScriptedAgent(Script.model_validate({"replies": [{"text": "x"}]})),
                    max_attempts=max_attempts)  # fmt: skip
    assert runner.request_for(task, tmp_path).stop_blocks == max_attempts
