"""The run's page shows the grader: each criterion's verdict and reason under its check (a
phase's, the task's own, a stage's exit checks on its last visit), as text, never markup; its
tokens and cost beside the agent's, in the header (part of the run's) and in each phase's or
stage's section. A report whose criteria are not of the expected shape adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.recording.page import render_page
from tests.helpers.graded import HOSTILE_REASON, graded_pipeline, graded_task
from tests.helpers.page_html import Elements, section

PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "div",
    "span", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td", "a", "p",
    "section", "details", "summary", "pre", "mark", "ul", "li", "code", "b",
}  # fmt: skip
"""Every element a page may have (tests/recording/test_page.py)."""


def test_a_hostile_reason_is_text_under_its_check_with_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason holds a closing ``</pre>``, a script, an image with an event handler, and
    workflow-command and Markdown text over several lines: on the page it is text in its
    criterion's row, lines kept, and no element or attribute comes of it."""
    run = graded_task(tmp_path, monkeypatch, HOSTILE_REASON, "not_met")

    page = render_page(run.recording)

    elements = Elements(page)
    assert {tag for tag, _ in elements.tags} <= PAGE_TAGS
    assert not any(name.startswith("on") for _, attrs in elements.tags for name in attrs)
    assert "<script" not in page and "<img" not in page
    build = section(page, 1)
    row = build[build.index('<tr data-criterion="c2">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="status rejected">not met</td>' in row
    assert "&lt;/pre&gt;&lt;script&gt;alert(&quot;reason&quot;)&lt;/script&gt;" in row
    assert "::error file=a.py::injected by a reason\n##[warning]legacy command" in row
    assert HOSTILE_REASON.replace("<", "&lt;").split("\n")[0] not in row  # quotes escaped too
    text = "".join(elements.text)
    assert HOSTILE_REASON.replace("\r\n", "\n") in text or HOSTILE_REASON in text


def test_each_phase_shows_its_graders_figures_and_the_header_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header's tokens and cost are the run's (the agent's and the grader's), the
    grader's part in a box of its own; a phase's section says what its grader spent; the
    task's own rubric shows its verdicts in the task's checks."""
    run = graded_task(tmp_path, monkeypatch)
    usage = run.report.usage

    page = render_page(run.recording)
    text = "".join(Elements(page).text)

    assert f"tokens in / out{usage.input_tokens} / {usage.output_tokens}" in text
    assert "cost$0.4480" in text
    assert "of it the grader1200 / 160 tokens · $0.0480" in text
    assert "its grader: 600 / 80 tokens · $0.0240" in "".join(Elements(section(page, 0)).text)
    own = page[page.index('id="task-checks"') :]
    assert '<tr data-criterion="c1">' in own and "the whole is coherent" in own


def test_a_stages_last_visit_shows_its_exit_checks_with_the_graders_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage's exit checks have no check of the task's shape: its last visit shows them as
    the report keeps them, a rubric's criteria under it, and the stage's grader figures."""
    run = graded_pipeline(tmp_path, monkeypatch, HOSTILE_REASON)

    page = render_page(run.recording)

    design = section(page, 0)
    exits = design[design.index("<h3>Exit checks, as they last ran</h3>") :]
    assert '<b>design.md exists</b> · <span class="status accepted">held</span>' in exits
    assert '<tr data-criterion="c2">' in exits and "&lt;script&gt;" in exits
    assert "its grader, every visit: 300 / 40 tokens · $0.0120" in "".join(Elements(design).text)
    assert "<script" not in page


def test_criteria_not_of_the_expected_shape_add_nothing_and_break_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report file anything may have replaced: criteria that are no list, items that are
    no object or have no known verdict, a grader_usage that is no object."""
    run = graded_task(tmp_path, monkeypatch)
    path = run.recording / "report.json"
    report = json.loads(path.read_text())
    report["grader_usage"] = "lots"
    report["phases"][0]["checks"][1]["criteria"] = "c1 met"
    report["phases"][1]["checks"][0]["criteria"] = [
        1,
        {"id": "c1", "criterion": "x", "verdict": "<b>yes</b>", "reason": "r"},
        {"id": "c2", "criterion": "x", "verdict": "met", "reason": 5},
    ]
    path.write_text(json.dumps(report))

    page = render_page(run.recording)

    assert "of it the grader" not in page
    assert 'data-criterion="c1"' not in section(page, 0)
    assert "data-criterion" not in section(page, 1)
