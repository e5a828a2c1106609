"""The grader in the GitHub step: its tokens and cost as outputs and in the job summary, apart
and adding up to the run's; each criterion's verdict and reason in the summary, as inert code;
a reason that holds HTML, workflow commands and line breaks stays data everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate._github.annotations import annotations_of
from phasegate._github.outputs import step_outputs
from phasegate._github.summary import job_summary
from phasegate._github.view import ReportView, read_report_view
from phasegate._github.workflow_commands import inert_lines
from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import PipelineReport
from phasegate.tasks.report import RunReport
from tests.helpers.github_reports import write_report
from tests.helpers.github_runner import as_shown, command_like_lines, commands_in
from tests.helpers.graded import GRADER_SESSION, HOSTILE_REASON, graded_pipeline, graded_task
from tests.helpers.summary_html import ALLOWED_TAGS, rendered

FOUR = Usage(
    input_tokens=4 * GRADER_SESSION.input_tokens,
    output_tokens=4 * GRADER_SESSION.output_tokens,
    cache_read_input_tokens=4 * GRADER_SESSION.cache_read_input_tokens,
)


def _view(report: RunReport | PipelineReport, tmp_path: Path) -> ReportView:
    """The view the step reads from ``report``'s file."""
    return read_report_view(write_report(tmp_path / "report.json", report))


def test_the_rows_own_figures_their_graders_and_no_phases_add_up_to_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts give the run's totals and the grader's part of them; each row its own
    tokens and cost and its grader's, in two more columns."""
    view = _view(graded_task(tmp_path, monkeypatch).report, tmp_path)

    rows = view.rows
    for name in ("input_tokens", "output_tokens", "cache_read_input_tokens"):
        own = sum(getattr(row.usage, name) for row in rows)
        graders = sum(getattr(row.grader_usage, name) for row in rows)
        assert graders == getattr(view.grader_usage, name) == getattr(FOUR, name)
        assert own + graders + getattr(view.unattributed_usage, name) == getattr(view.usage, name)
    summary = job_summary(view, omitted_annotations={})

    graded = "of it the grader: 1,200 in, 160 out, 28 cache read, 0 cache written, cost $0.048000"
    assert graded in summary
    assert "| grader tokens in / out | grader cost |" in summary
    assert "| 600 / 80 | $0.024000 |" in summary  # each phase: two sessions
    assert "tokens: 4,230 in, 290 out" in summary


def test_a_run_without_a_grader_shows_no_grader_columns() -> None:
    view = ReportView(kind="task", name="t", verdict="accepted", exit_code=0)

    summary = job_summary(view, omitted_annotations={})

    assert "grader" not in summary


def test_each_criterion_of_a_task_and_a_pipeline_is_a_row_with_its_verdict_and_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's graded checks (a phase's, the task's own) and a pipeline's stages' as they
    last ran: where, the check, the criterion, what it asks, the verdict and the reason."""
    (tmp_path / "t").mkdir()
    (tmp_path / "p").mkdir()
    task = job_summary(_view(graded_task(tmp_path / "t", monkeypatch, "too long", "not_met")
                             .report, tmp_path / "t"), omitted_annotations={})  # fmt: skip
    pipeline = job_summary(_view(graded_pipeline(tmp_path / "p", monkeypatch).report,
                                 tmp_path / "p"), omitted_annotations={})  # fmt: skip

    assert "**The grader's verdicts** (only met counts; cannot tell is not met)" in task
    assert ("| ` phase 2 (build) ` | ` a grader finds met: (c1) it builds; (c2) it is short ` "
            "| ` c2 ` | ` it is short ` | ❌ not met | ` too long ` |") in task  # fmt: skip
    assert "| ` phase 1 (design) ` | ` a grader finds met: it names every endpoint ` " in task
    assert "| ` stage 1 (design) ` |" in pipeline and "| ` stage 2 (build) ` |" in pipeline
    assert "| ` c2 ` | ` it is short ` | ✅ met | ` as it should ` |" in pipeline


def test_a_hostile_reason_stays_data_in_the_summary_the_printed_lines_and_the_annotations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason holds HTML, a script, ``::error`` and ``##[`` commands, a table row, a
    fence, a mention and line breaks of every kind: in the summary it is one inert code span
    (no tag but the summary's own, none of it outside code); printed, no line of the summary
    is a command; its annotation (a criterion not met is an issue) is one command whose
    message is the reason, escaped."""
    run = graded_task(tmp_path, monkeypatch, HOSTILE_REASON, "not_met")
    view = _view(run.report, tmp_path)

    summary = job_summary(view, omitted_annotations={})
    page = rendered(summary)
    assert "injected by a reason" in summary  # shown, as code
    assert page.tags <= ALLOWED_TAGS
    outside = "".join(page.outside)
    for piece in ("alert", "onerror", "injected", "legacy command", "javascript", "@someone"):
        assert piece not in outside, piece
    assert (
        commands_in(inert_lines(summary)) == [] and command_like_lines(inert_lines(summary)) == []
    )
    shown, _ = annotations_of(view, workdir=tmp_path / "project", workspace=tmp_path)
    commands = commands_in("".join(f"{a.command()}\n" for a in shown))
    assert len(commands) == len(shown)
    (unmet,) = [c for c in commands if c.properties["title"] == "phasegate criterion_not_met"]
    assert as_shown(HOSTILE_REASON) in unmet.data and unmet.name == "error"


def test_the_outputs_give_the_graders_cost_and_tokens_part_of_the_totals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = _view(graded_task(tmp_path, monkeypatch).report, tmp_path)

    outputs = step_outputs(view, report_file=tmp_path / "r", log_file=None, html_report=None)

    assert (outputs["grader_cost_usd"], outputs["total_cost_usd"]) == ("0.048", "0.448")
    assert (outputs["grader_input_tokens"], outputs["grader_output_tokens"]) == ("1200", "160")
    assert outputs["input_tokens"] == "4230"
    nothing = step_outputs(ReportView(kind="task", name="t", verdict="error", exit_code=3),
                           report_file=tmp_path / "r", log_file=None, html_report=None)  # fmt: skip
    assert (nothing["grader_cost_usd"], nothing["grader_input_tokens"]) == ("0", "0")
