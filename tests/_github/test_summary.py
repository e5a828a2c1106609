"""The job summary: the facts a reader needs, and nothing from the report as live Markdown.

The summary is rendered by a CommonMark parser with GitHub's tables; every string from the
report carries ``PAYLOAD``, and no ``PAYLOAD`` may appear outside a ``<code>`` element:
there it could be a link, an image, raw HTML, a heading or a mention.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._github.markdown import inline
from phasegate._github.summary import CHECK_OUTPUT_SHOWN, SUMMARY_LIMIT, RecordingLink, job_summary
from phasegate._github.view import (
    CheckLine,
    Problem,
    ReportView,
    Row,
    SubagentLine,
    VerdictsLine,
    read_report_view,
)
from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.tasks.report import CriterionReport, RefusedCall
from phasegate.validators.reconcile import FileReconciliation
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_reports import hostile_pipeline_report, hostile_run_report, write_report
from tests.helpers.summary_html import ALLOWED_TAGS, rendered

ATTACKS = [
    "<script>alert(1)</script>",
    "![x](https://evil.example/PAYLOAD.png)",
    "[click](https://evil.example)",
    "https://evil.example/PAYLOAD",
    "@attacker",
    "# heading",
    "`code` `` ``` ````",
    "a | b \\| c \\",
    "line\n# heading\n<img src=x>",
    "<details><summary>x</summary>",
    "**bold** _it_ ~~s~~",
]


def hostile_view(text: str) -> ReportView:
    """A report whose every string is ``text``."""
    graded = Usage(input_tokens=3, output_tokens=1, cost_usd=0.01)
    row = Row(1, text, "rejected", 2, "", (text, "ok.py"), grader_usage=graded)
    verdict = CriterionReport(id=text, criterion=text, verdict="not_met", reason=text)
    problem = Problem("no_changes", text, text, requirement=text, path=text)
    files = FileReconciliation(
        tool_reported=[text], disk_changed=[text], claimed=[text], changed_not_claimed=[text]
    )
    return ReportView(
        kind="task",
        name=text,
        verdict="rejected",
        exit_code=1,
        rows=(row,),
        problems=(problem, Problem("changed_not_claimed", text, text, finding=True)),
        reconciliation=files,
        usage=Usage(cost_usd=0.5),
        grader_usage=graded,
        final_message=text,
        mode="gate",
        error=text,
        sandbox=SandboxOutcome(mode="optional", confined=False, unavailable=text),
        blocked=(Blocked(kind="host", tool=text, tool_use_id=text, detail=text),),
        subagents=(SubagentLine(text, text, text),),
        checks=(CheckLine(text, text, text, False, 1, 20, 1, text),),
        check_ms=20,
        verdicts=(VerdictsLine(text, text, (verdict,)),),
    )


@pytest.mark.parametrize("attack", ATTACKS)
def test_report_text_is_shown_only_as_code(attack: str) -> None:
    summary = job_summary(hostile_view(f"{attack} PAYLOAD"), omitted_annotations={})

    page = rendered(summary)

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


@pytest.mark.fuzz
@given(text=st.one_of(hostile_text, st.lists(st.sampled_from(ATTACKS)).map("".join)))
def test_no_text_escapes_its_code_span(text: str) -> None:
    with bounded_memory():
        summary = job_summary(hostile_view(f"{text}PAYLOAD"), omitted_annotations={})
        page = rendered(summary)

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


def test_the_summary_states_verdict_phases_issues_files_cost_and_tokens() -> None:
    view = hostile_view("fix")

    summary = job_summary(view, omitted_annotations={"error": 3, "warning": 0})

    assert summary.startswith("### ❌ phasegate: rejected · task ` fix `")
    assert "0 of 1 phase accepted" in summary
    assert "cost $0.5000" in summary
    assert "| 1 | ` fix ` | ❌ rejected | 2 |" in summary
    assert "- ` no_changes ` in ` fix `: ` fix ` Requirement: ` fix `" in summary
    assert "**Files** (they disagree)" in summary
    assert "| changed on disk, not claimed | ` fix ` |" in summary
    assert "3 errors not shown as annotations" in summary


def test_the_summary_shows_each_subagents_work_in_its_phase() -> None:
    view = ReportView(
        kind="task", name="t", verdict="accepted", exit_code=0,
        subagents=(SubagentLine("phase 1 (edit)", "general-purpose a3f9", "Edit×1; files: a.md"),),
    )  # fmt: skip

    summary = job_summary(view, omitted_annotations={})

    assert "**Subagents** (their work counts in the phase's figures)" in summary
    assert "| ` phase 1 (edit) ` | ` general-purpose a3f9 ` | ` Edit×1; files: a.md ` |" in summary


def test_the_rows_tokens_and_costs_and_the_part_in_no_phase_add_up_to_the_run(
    tmp_path: Path,
) -> None:
    """Each row shows its tokens and its cost to the millionth, and what no phase owns is a
    fact of its own: a reader adding them gets the run's figures."""
    report = hostile_run_report("fix")
    first = report.phases[0].model_copy(
        update={"usage": Usage(input_tokens=300, output_tokens=400, cost_usd=0.010301)}
    )
    second = first.model_copy(
        update={"index": 2, "usage": Usage(input_tokens=100, output_tokens=129, cost_usd=0.002)}
    )
    report = report.model_copy(
        update={
            "phases": [first, second],
            "usage": Usage(input_tokens=450, output_tokens=539, cost_usd=0.012421),
            "unattributed_usage": Usage(input_tokens=50, output_tokens=10, cost_usd=0.00012),
        }
    )
    view = read_report_view(write_report(tmp_path / "r.json", report))

    summary = job_summary(view, omitted_annotations={})

    assert "| 300 / 400 | $0.010301 |" in summary
    assert "| 100 / 129 | $0.002000 |" in summary
    assert "cost $0.012421" in summary
    assert "tokens: 450 in, 539 out" in summary
    assert "in no phase: 50 in, 10 out, 0 cache read, 0 cache written, cost $0.000120" in summary
    assert "input carried" not in summary  # a report without requests counted says nothing


def test_the_summary_says_what_input_the_run_carried_and_the_gates_share(
    tmp_path: Path,
) -> None:
    overhead = GateOverhead(
        requests=5,
        input_tokens=12_000,
        tool_characters=6_680,
        text_characters=6_981,
        tool_tokens=1_670,
        text_tokens=1_747,
    )
    report = hostile_run_report("fix").model_copy(update={"overhead": overhead})
    view = read_report_view(write_report(tmp_path / "r.json", report))

    summary = job_summary(view, omitted_annotations={})

    assert (
        "input carried: 12,000 tokens, the gate's ≈3,417 (tool definitions ≈1,670, text ≈1,747)"
        in summary
    )


@pytest.mark.parametrize("make", [hostile_run_report, hostile_pipeline_report])
@pytest.mark.parametrize("attack", ATTACKS)
def test_every_string_of_a_report_file_is_shown_only_as_code(
    tmp_path: Path, make: Callable[[str], Any], attack: str
) -> None:
    """How a phase completed and the kind of a pipeline check come from the file too."""
    report = write_report(tmp_path / "report.json", make(f"{attack} PAYLOAD"))

    page = rendered(job_summary(read_report_view(report), omitted_annotations={}))

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


def huge_view(letter: str) -> ReportView:
    """A report with more of everything than the summary shows, every text of ``letter``."""
    files = tuple(letter * 290 + str(i) for i in range(40))
    rows = tuple(Row(i, letter * 300, "rejected", 1, "", files) for i in range(1, 2001))
    problem = Problem("no_changes", letter * 400, letter * 400, letter * 400)
    every = list(files)
    reconciliation = FileReconciliation(
        tool_reported=every, disk_changed=every, claimed=every, changed_not_claimed=every,
        claimed_not_changed=every, edit_not_on_disk=every, change_without_tool=every,
    )  # fmt: skip
    return ReportView(
        kind="task", name="big", verdict="rejected", exit_code=1, rows=rows,
        problems=(problem,) * 99, reconciliation=reconciliation, final_message=letter * 10**6,
    )  # fmt: skip


def test_a_long_report_is_summarized_with_what_was_left_out_counted() -> None:
    summary = job_summary(huge_view("f"), omitted_annotations={})

    assert len(summary.encode("utf-8")) <= SUMMARY_LIMIT
    assert summary.startswith("### ❌ phasegate: rejected · task ` big `\n\n0 of 2000 phases")
    assert "1900 more phases left out" in summary
    assert "and 49 more (see the JSON report)" in summary
    assert "[… cut at 4000 characters]" in summary


def test_a_summary_never_passes_the_size_github_accepts() -> None:
    """GitHub refuses a step summary over 1 MiB: four-byte characters in every field make
    sections too long, and they are left out, the verdict and the facts kept."""
    summary = job_summary(huge_view("😀"), omitted_annotations={})

    assert len(summary.encode("utf-8")) <= SUMMARY_LIMIT
    assert summary.startswith("### ❌ phasegate: rejected · task ` big `\n\n0 of 2000 phases")
    assert "A section is left out here: too long for a job summary" in summary


@pytest.mark.fuzz
@given(
    text=st.one_of(hostile_text, st.lists(st.sampled_from(ATTACKS)).map("".join)),
    make=st.sampled_from([hostile_run_report, hostile_pipeline_report]),
)
def test_no_string_of_a_report_file_escapes_its_code_span(
    tmp_path_factory: pytest.TempPathFactory, text: str, make: Callable[[str], Any]
) -> None:
    path = write_report(
        tmp_path_factory.getbasetemp() / "fuzz-summary.json", make(f"{text}PAYLOAD")
    )

    with bounded_memory():
        page = rendered(job_summary(read_report_view(path), omitted_annotations={}))

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


def test_the_calls_refused_before_they_ran_are_listed_as_inert_text(tmp_path: Path) -> None:
    """Their input came from the model: a command full of markup stays code."""
    hostile = "echo '<script>alert(1)</script>' | tee `x` ::error::boom"
    refused = RefusedCall(tool="Bash", tool_use_id="t1", input=hostile, reason="not allowed")
    report = hostile_run_report("fix")
    phase = report.phases[0].model_copy(update={"refusals": [refused]})
    report = report.model_copy(update={"phases": [phase, *report.phases[1:]]})
    view = read_report_view(write_report(tmp_path / "r.json", report))

    summary = job_summary(view, omitted_annotations={})

    assert "**Refused before they ran**" in summary
    where = inline(f"phase {phase.index} ({phase.name})")
    line = f"- {inline('Bash')} {inline(hostile)} in {where}: {inline('not allowed')}"
    assert line in summary
    assert "<script>" not in summary.replace(inline(hostile), "")


def test_a_recorded_run_links_its_artifact_and_names_its_page_as_code() -> None:
    url = "https://github.com/o/r/actions/runs/1/artifacts/2"
    link = RecordingLink(page="/tmp/rec/index.html", url=url)
    summary = job_summary(hostile_view("x"), omitted_annotations={}, recording=link)

    assert f"[download the recording]({url})" in summary
    assert "` /tmp/rec/index.html `" in summary


@pytest.mark.parametrize("url", [
    "https://evil.example/a) ![x](https://evil.example/p.png", "javascript:alert(1)",
    "http://github.com/x", "https://github.com/x\n::error::FORGED", None,
])  # fmt: skip
def test_a_recording_url_that_is_not_a_plain_https_url_is_not_linked(url: str | None) -> None:
    hostile = "<img src=x> PAYLOAD ::error::x"
    link = RecordingLink(page=hostile, url=url)
    summary = job_summary(hostile_view("x"), omitted_annotations={}, recording=link)
    page = rendered(summary)

    assert "(not uploaded)" in summary
    assert "a" not in page.tags and "img" not in page.tags
    assert "PAYLOAD" not in "".join(page.outside)


def test_the_checks_of_each_phase_are_listed_with_result_exit_code_time_and_output(
    tmp_path: Path,
) -> None:
    """The phase's check failed (exit 1, 1.5 s), the task's own passed: a row each, in that
    order, then what each found as a code block, the failed one first."""
    view = read_report_view(write_report(tmp_path / "r.json", hostile_run_report("fix")))

    summary = job_summary(view, omitted_annotations={})

    assert "of it in checks 1.53 s" in summary
    assert "**Checks** (as the gate last ran them; 1.53 s in checks in all)" in summary
    assert "| ` phase 1 (fix) ` | ` fix ` | ❌ failed | ` fix ` | 1 | 1.5 s | 2 |" in summary
    assert "| ` task ` | ` fix ` | ✅ passed | ` fix ` | – | 30 ms | 2 |" in summary
    failed = "❌ ` fix ` in ` phase 1 (fix) ` found:\n\n```text\nfix\n```"
    passed = "✅ ` fix ` in ` task ` found:\n\n```text\nfix\n```"
    assert summary.index(failed) < summary.index(passed)


def test_a_checks_output_keeps_its_lines_in_a_fence_longer_than_any_it_holds() -> None:
    output = "exited with 1\nlast output:\n```\n# FAILED <b>x</b> @attacker\n::error::FORGED"
    check = CheckLine("phase 1 (fix)", "command", "`pytest` exits with 0", False, 1, 900, 1,
                      output)  # fmt: skip
    view = ReportView(kind="task", name="t", verdict="rejected", exit_code=1, checks=(check,))

    summary = job_summary(view, omitted_annotations={})

    assert f"````text\n{output}\n````" in summary
    page = rendered(summary)
    assert page.tags <= ALLOWED_TAGS and "FORGED" not in "".join(page.outside)


def test_a_long_output_is_cut_and_checks_past_fifty_are_counted() -> None:
    checks = tuple(
        CheckLine("phase 1 (fix)", "command", f"check {n}", True, 0, 5, 1, "x" * 10_000)
        for n in range(60)
    )
    view = ReportView(kind="task", name="t", verdict="accepted", exit_code=0, checks=checks)

    summary = job_summary(view, omitted_annotations={})

    assert f"[… cut at {CHECK_OUTPUT_SHOWN} characters]" in summary
    assert "` check 49 `" in summary and "` check 50 `" not in summary
    assert "… 10 more checks left out (see the JSON report)" in summary
    assert len(summary.encode()) <= SUMMARY_LIMIT


def test_a_report_without_checks_says_nothing_of_them() -> None:
    view = ReportView(kind="task", name="t", verdict="accepted", exit_code=0)

    summary = job_summary(view, omitted_annotations={})

    assert "Checks" not in summary and "in checks" not in summary
