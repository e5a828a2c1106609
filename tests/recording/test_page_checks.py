"""The run's page shows a task's checks as its report keeps them: each phase's checks in its
section and the task's own after the phases, each passed or failed with its exit code, time
and what was found (a command's output) as text, never markup; an earlier failed run's output
in the gate check that reported it. A report whose checks are not of the expected shape adds
nothing and breaks nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from phasegate.recording.page import render_page
from tests.helpers.checked_runs import prove_the_fix
from tests.helpers.page_html import section
from tests.helpers.recording_fixtures import gate_run

MARKUP = "<script>alert(1)</script><img src=x onerror=alert(2)></pre>"


def ran(description: str, *, passed: bool, detail: str, **more: Any) -> dict[str, Any]:
    """A check as a report holds it."""
    return {"kind": "command", "description": description, "passed": passed, "detail": detail,
            "exit_code": 0 if passed else 1, "duration_ms": 1500, "run": 2, **more}  # fmt: skip


def page_with(tmp_path: Path, phase_fields: dict[str, Any], **run_fields: Any) -> str:
    """The page of a hand-made gate run whose report's phase 1 has ``phase_fields`` and the
    run ``run_fields``."""
    folder = gate_run(tmp_path / "run")
    report = json.loads((folder / "report.json").read_text())
    phases = [{"index": 1, "name": "edit", **phase_fields}, {"index": 2, "name": "summary"}]
    (folder / "report.json").write_text(json.dumps({**report, "phases": phases, **run_fields}))
    return render_page(folder)


def test_a_real_run_shows_its_phase_check_with_the_output_of_each_run(tmp_path: Path) -> None:
    """prove-the-fix: the tests failed at the first gate check (their traceback in its issue,
    lines kept), then passed: the phase's Checks say so, with the exit code, the report's time
    and the output of the run that decided."""
    run = prove_the_fix(tmp_path)
    (decided,) = run.report.phases[0].checks

    edit = section(render_page(run.recording), 0)

    checks = edit[edit.index("<h3>Checks</h3>") :]
    assert f"<b>{decided.description}</b>" in checks
    assert '<span class="status accepted">passed</span>' in checks
    assert f"exit code 0 · time {decided.duration_ms} ms · run at gate judgment 2" in checks
    assert "Ran 2 tests" in checks and "\nOK</pre>" in checks
    failed = edit[edit.index("<li><code>check_failed</code>") : edit.index("<h3>Checks</h3>")]
    assert "AssertionError: 6 != 5\n" in failed and "<pre>" in failed
    assert f"of it in checks: {run.report.phases[0].check_ms} ms" in edit


def test_check_output_full_of_markup_is_shown_as_text(tmp_path: Path) -> None:
    """The description, the kind and the output came from the task file and a command."""
    check = ran(f"`{MARKUP}` exits with 0", passed=False, detail=f"exited with 1\n{MARKUP}")
    check["kind"] = MARKUP

    page = page_with(tmp_path, {"checks": [check], "check_ms": 1500})

    assert "<script>" not in page and "<img" not in page
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&lt;/pre&gt;"
    assert f"<pre>exited with 1\n{escaped}</pre>" in page
    assert f"<b>`{escaped}` exits with 0</b>" in page
    assert '<span class="status rejected">failed</span> · ' + escaped + " · exit code 1" in page


def test_the_tasks_own_checks_follow_the_phases(tmp_path: Path) -> None:
    own = ran("`make lint` exits with 0 within 120 s", passed=True, detail="no output")

    page = page_with(tmp_path, {}, checks=[own], check_ms=2500)

    own_section = page[page.index('<section class="part" id="task-checks">') :]
    assert page.index('id="part-1"') < page.index('id="task-checks"')
    assert "<h2>The task's own checks</h2>" in own_section
    assert "<b>`make lint` exits with 0 within 120 s</b>" in own_section
    assert "<dt>of it in checks</dt><dd>2.5 s</dd>" in page
    assert "<h3>Checks</h3>" not in page  # no phase has checks


@pytest.mark.parametrize(
    "checks",
    ["all passed", [1, None, "x"], [{"kind": 3}], [{**ran("d", passed=True, detail="x"),
                                                      "passed": "yes"}],
     [{**ran("d", passed=True, detail="x"), "duration_ms": -1}],
     [{**ran("d", passed=True, detail="x"), "run": True}]],
)  # fmt: skip
def test_checks_not_of_the_expected_shape_add_nothing(tmp_path: Path, checks: object) -> None:
    page = page_with(tmp_path, {"checks": checks, "check_ms": "long"}, checks=checks,
                     check_ms=-5)  # fmt: skip

    assert "<h3>Checks</h3>" not in page and 'id="task-checks"' not in page
    assert "in checks" not in page


def test_a_run_without_checks_shows_no_checks(tmp_path: Path) -> None:
    page = render_page(gate_run(tmp_path / "run"))

    assert "<h3>Checks</h3>" not in page and not re.search(r"in checks", page)


def test_a_judgment_asked_to_run_no_check_says_so(tmp_path: Path) -> None:
    page = page_with(tmp_path, {}, checks_skipped=True)

    skipped = page[page.index('<section class="part" id="task-checks">') :]
    assert "<h2>Checks not run</h2>" in skipped
    assert "rests on the other evidence alone" in skipped
