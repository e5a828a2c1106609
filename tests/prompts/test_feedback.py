"""Structured validation feedback, ADR-007 shape (phasegate.prompts.feedback)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phasegate.phases.markers import marker_line
from phasegate.phases.model import Task
from phasegate.prompts.feedback import FeedbackPrompt, next_action
from phasegate.prompts.templates import PromptTemplates
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.output import check_schema

pytestmark = pytest.mark.usefixtures("bundled_prompts")

MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"


def marker_missing(phase: int = 1) -> Issue:
    """A marker_missing issue for ``phase`` (group: missing)."""
    return Issue.of(
        IssueCode.MARKER_MISSING,
        f"Phase {phase} was never marked complete.",
        phase=phase,
        field="marker",
        requirement=f"Print the line: {MARKER_1}",
    )


def schema_issues(task: Task) -> list[Issue]:
    """A wrong type, a missing field and an extra field in the output JSON of ``task``."""
    assert task.output_phase is not None
    assert task.output_phase.output_schema is not None
    value = {"files_changed": "app.py", "notes": "x"}
    return check_schema(task.index_of(task.output_phase), value, task.output_phase.output_schema)


def test_feedback_has_the_adr_007_keys_in_order_with_action_last(fix_task: Task) -> None:
    """result, issues, issue_count, action: in that order, the action at the end."""
    data = FeedbackPrompt.build(fix_task, [marker_missing()], attempts_left=2).data

    assert list(data) == ["result", "issues", "issue_count", "action"]
    assert data["result"] == "validation_failed"


def test_issues_are_grouped_into_invalid_missing_and_unknown(fix_task: Task) -> None:
    """Wrong values are invalid items, absent ones missing items, extra fields unknown names."""
    issues = [marker_missing(), *schema_issues(fix_task)]

    grouped: dict[str, Any] = FeedbackPrompt.build(fix_task, issues, attempts_left=1).data["issues"]

    assert list(grouped) == ["invalid", "missing", "unknown"]
    (invalid,) = grouped["invalid"]
    assert list(invalid) == ["phase", "code", "field", "provided", "problem", "requirement"]
    assert (invalid["phase"], invalid["code"], invalid["field"]) == (
        2,
        "schema_violation",
        "$.files_changed",
    )
    assert invalid["provided"] == '"app.py"'
    assert [(m["code"], m["field"]) for m in grouped["missing"]] == [
        ("marker_missing", "marker"),
        ("schema_violation", "$.description"),
    ]
    assert all("provided" not in item for item in grouped["missing"])
    assert grouped["unknown"] == ["$.notes"]


def test_empty_groups_are_left_out(fix_task: Task) -> None:
    """Only groups with something in them appear."""
    data = FeedbackPrompt.build(fix_task, [marker_missing()], attempts_left=1).data

    assert list(data["issues"]) == ["missing"]


@pytest.mark.parametrize("count", [1, 2, 5])
def test_issue_count_is_the_number_of_issues(fix_task: Task, count: int) -> None:
    """issue_count equals the issues given and the items across the groups."""
    issues = ([marker_missing(), *schema_issues(fix_task)] * 2)[:count]

    data = FeedbackPrompt.build(fix_task, issues, attempts_left=1).data

    assert data["issue_count"] == count
    assert sum(len(items) for items in data["issues"].values()) == count


def test_the_action_points_at_the_first_failing_phase_and_what_follows(fix_task: Task) -> None:
    """Issues in phases 2 and 1: continue with phase 1, print its marker, then the JSON."""
    issues = [*schema_issues(fix_task), marker_missing()]

    action = FeedbackPrompt.build(fix_task, issues, attempts_left=2).data["action"]

    assert action.startswith("Continue with phase 1 (edit)")
    assert f"then call phase_complete(phase=1, note=...) (or print '{MARKER_1}')" in action
    assert action.endswith(
        "then give the answer of phase 2 (summary): call submit_summary(summary=...) with the "
        "object or print the object in a ```json block."
    )


@pytest.mark.parametrize(
    ("completion", "complete", "answer"),
    [
        ("marker", f"then print '{MARKER_1}'", "print the object in a ```json block."),
        (
            "tool",
            "then call phase_complete(phase=1, note=...);",
            "call submit_summary(summary=...) with the object.",
        ),
    ],
)
def test_the_action_names_only_the_completion_way_the_task_counts(
    fix_task: Task, completion: str, complete: str, answer: str
) -> None:
    """In marker mode the action never mentions the tools; in tool mode never the marker."""
    task = fix_task.model_copy(update={"completion": completion})

    action = next_action(task, [marker_missing()])

    assert complete in action
    assert action.endswith(answer)
    assert ("phase_complete" in action) == (completion == "tool")
    assert ("PHASE 1 COMPLETE" in action) == (completion == "marker")


def test_a_failing_middle_phase_lists_the_later_work_phases(three_phase_task: Task) -> None:
    """From phase 2 on: its marker, then each later work phase, then the JSON."""
    action = next_action(three_phase_task, [marker_missing(2)])

    assert action.startswith("Continue with phase 2 (verify)")
    assert f"(or print '{marker_line(2, 'Tests pass')}')" in action
    assert "phase 1" not in action


def test_the_action_for_an_earlier_phase_lists_the_later_work_phases(
    three_phase_task: Task,
) -> None:
    """From phase 1: after its marker, phase 2 in order with its marker, then the JSON."""
    action = next_action(three_phase_task, [marker_missing(1)])

    assert "then do phase(s) 2 (verify) in order, completing each the same way" in action
    assert "then give the answer of phase 3 (summary)" in action


def test_when_only_the_json_fails_the_action_asks_for_corrected_json(fix_task: Task) -> None:
    """Output-phase issues alone: print a corrected object, nothing after it."""
    action = FeedbackPrompt.build(fix_task, schema_issues(fix_task), attempts_left=1).data["action"]

    assert action.startswith("Give a corrected answer for phase 2 (summary)")
    assert "```json" in action
    assert "submit_summary" in action


def test_issues_without_a_phase_still_get_a_forward_action(fix_task: Task) -> None:
    """An issue not tied to a phase gets a generic, forward-pointing action."""
    issue = Issue.of(IssueCode.EXIT_CONDITION_FAILED, "The exit condition did not hold.")

    action = next_action(fix_task, [issue])

    assert action == "Fix the issues listed above, then finish the remaining phases in order."


ISSUES = st.builds(
    Issue.of,
    st.sampled_from(list(IssueCode)),
    st.text(max_size=30),
    phase=st.none() | st.integers(min_value=1, max_value=3),
    field=st.none() | st.text(max_size=10),
    provided=st.none() | st.text(max_size=10),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(ISSUES, max_size=6))
def test_the_action_never_says_try_again_and_always_names_the_first_failing_phase(
    issues: list[Issue],
) -> None:
    """For any issues, the action points forward at the lowest failing phase."""
    task = Task.model_validate(
        {
            "name": "t",
            "phases": [
                {"name": "edit", "instructions": "Edit."},
                {"name": "verify", "instructions": "Verify."},
                {"name": "summary", "instructions": "Sum.", "output_schema": {"type": "object"}},
            ],
        }
    )

    data = FeedbackPrompt.build(task, issues, attempts_left=1).data

    assert list(data)[-1] == "action"
    assert data["issue_count"] == len(issues)
    assert not re.search(r"try\s+again", data["action"], re.IGNORECASE)
    phases = sorted({i.phase for i in issues if i.phase is not None})
    if phases:
        assert f"phase {phases[0]} (" in data["action"]


def test_the_rendered_feedback_carries_the_json_and_the_attempts_left(fix_task: Task) -> None:
    """The text the agent gets holds the same JSON, action last, and the attempts left."""
    feedback = FeedbackPrompt.build(fix_task, [marker_missing()], attempts_left=2)

    text = feedback.render()

    assert "(2 attempt(s) left)" in text
    block = re.search(r"```json\n(.*)\n```", text, re.DOTALL)
    assert block is not None
    rendered = json.loads(block.group(1))
    assert rendered == feedback.data
    assert list(rendered)[-1] == "action"
    assert "try again" not in text.lower()


def test_the_feedback_template_can_be_overridden(fix_task: Task, tmp_path: Path) -> None:
    """A prompts dir changes the wording around the JSON, not the JSON itself."""
    (tmp_path / "feedback.md").write_text("Gate says ($attempts_left):\n$feedback_json\n")
    feedback = FeedbackPrompt.build(fix_task, [marker_missing()], attempts_left=1)

    text = feedback.render(PromptTemplates(tmp_path))

    assert text.startswith("Gate says (1):\n{")
    assert json.loads(text.split("\n", 1)[1]) == feedback.data
