"""Paths against the work directory (phasegate.validators.paths)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript
from phasegate.phases.model import Task
from phasegate.validators.issues import IssueCode
from phasegate.validators.paths import check_paths_inside, relative_to_workdir
from phasegate.validators.tools import tool_calls
from phasegate.validators.windows import phase_windows

WORKDIR = "/srv/project"

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("app.py", "app.py"),
        ("./app.py", "app.py"),
        ("src//pkg/./app.py", "src/pkg/app.py"),
        ("src/../app.py", "app.py"),
        (f"{WORKDIR}/src/app.py", "src/app.py"),
        (f"{WORKDIR}/", "."),
        (".", "."),
        ("src\\pkg\\app.py", "src/pkg/app.py"),
        ("  app.py  ", "app.py"),
    ],
)
def test_a_path_inside_the_work_directory_becomes_relative_posix(path: str, expected: str) -> None:
    """./, doubled slashes, inner .., absolute-inside and backslashes all normalize."""
    assert relative_to_workdir(path, WORKDIR) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "../secret.txt",
        "src/../../secret.txt",
        "/srv/project-other/app.py",
        "/srv",
        "",
        "   ",
    ],
)
def test_a_path_outside_the_work_directory_normalizes_to_none(path: str) -> None:
    """Absolute paths elsewhere, ../ escapes, a sibling with a shared prefix, and blanks."""
    assert relative_to_workdir(path, WORKDIR) is None


def test_a_trailing_slash_on_the_work_directory_does_not_matter() -> None:
    """The work directory is normalized too."""
    assert relative_to_workdir(f"{WORKDIR}/app.py", WORKDIR + "/") == "app.py"


def test_a_tool_call_inside_the_work_directory_is_fine(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Edits and reads of files in the work directory raise no path issue."""
    transcript = make_transcript(
        tool_pair("Read", file_path=f"{WORKDIR}/app.py"),
        tool_pair("Edit", file_path="app.py"),
        tool_pair("Grep", path="src", pattern="eval"),
    )

    issues = check_paths_inside(
        phase_windows(fix_task, transcript), tool_calls(transcript), WORKDIR
    )

    assert issues == []


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("file_path", "/etc/passwd"),
        ("file_path", "../secret.py"),
        ("notebook_path", "/tmp/x.ipynb"),
    ],
)
def test_a_tool_call_naming_a_path_outside_is_reported_in_its_phase(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, key: str, path: str
) -> None:
    """path_outside_workdir names the tool, the key and the path, in the phase of the call."""
    transcript = make_transcript(tool_pair("Edit", ok=False, **{key: path}))

    (issue,) = check_paths_inside(
        phase_windows(fix_task, transcript), tool_calls(transcript), WORKDIR
    )

    assert issue.code is IssueCode.PATH_OUTSIDE_WORKDIR
    assert (issue.phase, issue.field, issue.provided) == (1, f"Edit.{key}", path)
    assert WORKDIR in issue.message


def test_a_call_outside_after_the_marker_belongs_to_the_output_phase(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The issue goes to the phase whose window holds the call."""
    transcript = make_transcript(
        AssistantText(text="PHASE 1 COMPLETE: Files have been edited"),
        tool_pair("Write", file_path="/tmp/notes.txt"),
    )

    (issue,) = check_paths_inside(
        phase_windows(fix_task, transcript), tool_calls(transcript), WORKDIR
    )

    assert issue.phase == 2


def test_tool_inputs_without_path_keys_are_not_checked(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """A Bash command mentioning /etc is not a path key; only file_path/notebook_path/path are."""
    transcript = make_transcript(tool_pair("Bash", command="cat /etc/passwd"))

    issues = check_paths_inside(
        phase_windows(fix_task, transcript), tool_calls(transcript), WORKDIR
    )

    assert issues == []
