"""Issues become annotations on workspace files, at most 10 of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._github.annotations import PER_LEVEL, annotations_of
from phasegate._github.view import Problem, ReportView, read_report_view
from phasegate.modes import ReportVerdict
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_reports import hostile_run_report, write_report
from tests.helpers.github_runner import as_shown, commands_in

COMMAND_TEXT = st.one_of(
    hostile_text,
    st.sampled_from(
        ["a\n::add-mask::secret", "a\r::stop-commands::tok", "%0A::error::x", "##[error]x"]
    ),
)


def view_of(
    *problems: Problem, verdict: ReportVerdict = "rejected", error: str | None = None
) -> ReportView:
    return ReportView(
        kind="task", name="t", verdict=verdict, exit_code=1, problems=problems, error=error
    )


def test_an_issue_about_a_file_points_at_it_relative_to_the_workspace(tmp_path: Path) -> None:
    issue = Problem(
        "claimed_not_changed", "a.py did not change", "phase 2 (fix)", "List only…", "src/a.py"
    )

    (annotation,), _ = annotations_of(
        view_of(issue), workdir=tmp_path / "project", workspace=tmp_path
    )

    assert annotation.level == "error"
    assert annotation.file == "project/src/a.py"
    assert annotation.title == "phasegate claimed_not_changed"
    assert annotation.message == "phase 2 (fix): a.py did not change Requirement: List only…"


def test_findings_are_warnings_and_files_outside_the_workspace_get_no_file(
    tmp_path: Path,
) -> None:
    escaping = Problem("changed_not_claimed", "m", "run", path="../../etc/passwd", finding=True)
    absolute = Problem("changed_not_claimed", "m", "run", path="/etc/passwd", finding=True)
    no_file = Problem("marker_missing", "m", "phase 1 (a)")

    shown, _ = annotations_of(
        view_of(escaping, absolute, no_file), workdir=tmp_path, workspace=tmp_path
    )

    assert [(a.level, a.file) for a in shown] == [
        ("warning", None), ("warning", None), ("error", None)
    ]  # fmt: skip


def test_past_ten_of_a_kind_the_rest_are_counted_not_printed(tmp_path: Path) -> None:
    errors = [Problem("no_changes", f"e{i}", "run") for i in range(13)]
    warnings = [Problem("change_without_tool", f"w{i}", "run", finding=True) for i in range(4)]

    shown, left_out = annotations_of(
        view_of(*errors, *warnings), workdir=tmp_path, workspace=tmp_path
    )

    assert [a.message for a in shown if a.level == "error"] == [
        f"run: e{i}" for i in range(PER_LEVEL)
    ]
    assert sum(a.level == "warning" for a in shown) == 4
    assert left_out == {"error": 3, "warning": 0}


def test_a_run_that_could_not_finish_says_why_first(tmp_path: Path) -> None:
    view = view_of(Problem("no_changes", "m", "run"), verdict="error", error="API overloaded")

    shown, _ = annotations_of(view, workdir=tmp_path, workspace=tmp_path)

    assert [(a.title, a.message) for a in shown] == [
        ("phasegate error", "API overloaded"), ("phasegate no_changes", "run: m")
    ]  # fmt: skip


@pytest.mark.fuzz
@given(text=COMMAND_TEXT)
def test_a_report_file_gives_its_annotations_and_no_other_command(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    """Each issue's message comes back whole in one command (``##[`` shown escaped); nothing
    masks, stops or adds."""
    folder = tmp_path_factory.getbasetemp()
    path = write_report(folder / "fuzz-annotations.json", hostile_run_report(text))

    with bounded_memory():
        shown, _ = annotations_of(read_report_view(path), workdir=folder, workspace=folder)
        commands = commands_in("".join(f"{a.command()}\n" for a in shown))

    assert [(c.name, c.properties["title"]) for c in commands] == [
        ("error", "phasegate claimed_not_changed"),
        ("warning", "phasegate change_without_tool"),
    ]
    text = as_shown(text)
    requirement = f" Requirement: {text}" if text else ""
    assert commands[0].data == f"phase 1 ({text}): {text}{requirement}"
    assert commands[1].data == f"run: {text}"
