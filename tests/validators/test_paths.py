"""Paths against the work directory (phasegate.validators.paths)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript
from phasegate.phases.model import Task
from phasegate.validators import paths
from phasegate.validators.issues import IssueCode
from phasegate.validators.paths import (
    check_paths_inside,
    find_reads_outside,
    is_windows_path,
    relative_to_workdir,
)
from phasegate.validators.tools import tool_calls
from phasegate.validators.windows import phase_windows

WORKDIR = "/srv/project"
WINDOWS_WORKDIR = "C:\\Users\\x\\proj"

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
        "~",
        "~/.bashrc",
        " ~/.ssh/id_rsa",
    ],
)
def test_a_path_outside_the_work_directory_normalizes_to_none(path: str) -> None:
    """Absolute paths elsewhere, ../ escapes, a sibling with a shared prefix, blanks, and
    the home folder (Claude Code expands ``~/`` before it opens the file)."""
    assert relative_to_workdir(path, WORKDIR) is None


def test_a_trailing_slash_on_the_work_directory_does_not_matter() -> None:
    """The work directory is normalized too."""
    assert relative_to_workdir(f"{WORKDIR}/app.py", WORKDIR + "/") == "app.py"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("C:/Users/x/proj/reqs/a.md", "reqs/a.md"),
        ("C:\\Users\\x\\proj\\reqs\\a.md", "reqs/a.md"),
        ("c:\\users\\X\\proj\\a.md", "a.md"),
        ("C:/USERS/X/PROJ/Src/App.py", "Src/App.py"),
        ("reqs\\a.md", "reqs/a.md"),
        ("reqs/../a.md", "a.md"),
        ("C:\\Users\\x\\proj", "."),
        ("c:/users/x/proj/", "."),
    ],
)
def test_a_windows_path_inside_a_windows_work_directory_becomes_relative_posix(
    path: str, expected: str
) -> None:
    """Drive letters, both separators, and any case name the work directory on Windows."""
    assert relative_to_workdir(path, WINDOWS_WORKDIR) == expected


@pytest.mark.parametrize(
    "path",
    [
        "D:/other/notes.md",
        "D:\\other\\proj\\a.md",
        "C:/Users/x/project-other/a.md",
        "C:/Users/x",
        "\\\\server\\share\\a.md",
        "\\Windows\\win.ini",
        "/etc/passwd",
        "..\\secret.txt",
        "C:/Users/x/proj/../../y/a.md",
        "~\\.ssh\\config",
    ],
)
def test_a_path_outside_a_windows_work_directory_normalizes_to_none(path: str) -> None:
    """Another drive, a sibling, a UNC share, the drive's root, and escapes are outside."""
    assert relative_to_workdir(path, WINDOWS_WORKDIR) is None


def test_a_unc_work_directory_is_a_windows_one() -> None:
    """\\\\server\\share\\proj is Windows too, compared without regard to case."""
    assert relative_to_workdir("\\\\SERVER\\share\\proj\\a.md", "\\\\server\\share\\proj") == "a.md"


@pytest.mark.parametrize(
    ("path", "windows"),
    [("C:\\x", True), ("c:/x", True), ("C:", True), ("\\\\srv\\share", True),
     ("/c/x", False), ("C:x", False), ("app.py", False), ("//srv/share", False)],
)  # fmt: skip
def test_windows_paths_are_told_by_a_drive_letter_or_a_unc_share(path: str, windows: bool) -> None:
    """The sign of a run recorded on Windows."""
    assert is_windows_path(path) is windows


def test_posix_work_directories_stay_case_sensitive() -> None:
    """/srv/Project is not /srv/project on Linux: only Windows compares without case."""
    assert relative_to_workdir("/srv/Project/app.py", WORKDIR) is None
    assert relative_to_workdir("/srv/project/App.py", WORKDIR) == "App.py"


@pytest.mark.parametrize("path", ["C:/Users/x/proj/a.md", "c:\\a.md", "D:/other"])
def test_a_drive_letter_path_is_never_inside_a_posix_work_directory(path: str) -> None:
    """It is a Windows absolute path, not a relative name with a colon in it."""
    assert relative_to_workdir(path, WORKDIR) is None


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


def test_a_read_outside_the_work_directory_is_a_finding_not_an_issue(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Reading tools (Read, Glob, Grep, LS) outside are reported; the gate lets them pass."""
    transcript = make_transcript(
        tool_pair("Read", file_path="/etc/hosts"),
        tool_pair("Grep", path="/usr/lib", pattern="x"),
        tool_pair("Glob", path="../other", pattern="*.py"),
    )
    windows, calls = phase_windows(fix_task, transcript), tool_calls(transcript)

    findings = find_reads_outside(windows, calls, WORKDIR)

    assert check_paths_inside(windows, calls, WORKDIR) == []
    assert [(f.code, f.field, f.provided, f.phase) for f in findings] == [
        (IssueCode.READ_OUTSIDE_WORKDIR, "Read.file_path", "/etc/hosts", 1),
        (IssueCode.READ_OUTSIDE_WORKDIR, "Grep.path", "/usr/lib", 1),
        (IssueCode.READ_OUTSIDE_WORKDIR, "Glob.path", "../other", 1),
    ]


def test_a_task_that_forbids_reads_outside_fails_them_like_writes(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """allow_reads=False: a read outside is path_outside_workdir, saying reads are not allowed."""
    transcript = make_transcript(tool_pair("Read", file_path="/etc/hosts"))

    (issue,) = check_paths_inside(
        phase_windows(fix_task, transcript), tool_calls(transcript), WORKDIR, allow_reads=False
    )

    assert issue.code is IssueCode.PATH_OUTSIDE_WORKDIR
    assert issue.requirement is not None and "does not allow reading" in issue.requirement


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit", "NotebookEdit", "mcp__fs__write"])
def test_any_tool_but_a_reading_one_outside_fails_the_gate(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, tool: str
) -> None:
    """Writes, edits and tools phasegate does not know as read-only may change files."""
    transcript = make_transcript(tool_pair(tool, path="D:/elsewhere/x.py"))
    windows, calls = phase_windows(fix_task, transcript), tool_calls(transcript)

    (issue,) = check_paths_inside(windows, calls, WINDOWS_WORKDIR)

    assert issue.code is IssueCode.PATH_OUTSIDE_WORKDIR
    assert find_reads_outside(windows, calls, WINDOWS_WORKDIR) == []


def test_a_write_to_the_home_folder_fails_the_gate(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """A transcript keeps the path as the model wrote it: ``~/.bashrc`` is the home
    folder's file (Claude Code expands it), not one in the work directory."""
    transcript = make_transcript(tool_pair("Write", path="~/.bashrc"))
    windows, calls = phase_windows(fix_task, transcript), tool_calls(transcript)

    (issue,) = check_paths_inside(windows, calls, WORKDIR)

    assert issue.code is IssueCode.PATH_OUTSIDE_WORKDIR and issue.provided == "~/.bashrc"


def test_a_blank_path_names_nothing_outside(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Grep with path "" searches the work directory; it is not a path outside it."""
    transcript = make_transcript(tool_pair("Grep", path="  ", pattern="x"))
    windows, calls = phase_windows(fix_task, transcript), tool_calls(transcript)

    assert check_paths_inside(windows, calls, WORKDIR, allow_reads=False) == []


PATHS = st.one_of(
    hostile_text,
    st.lists(
        st.sampled_from(
            ["C:", "c:", "D:", "", ".", "..", "Users", "x", "proj", "a.md", "\\\\", "/"]
        ),
        max_size=6,
    ).map(lambda parts: "/".join(parts)),
    st.lists(st.sampled_from(["C:", "users", "X", "proj", "..", "a.md", ""]), max_size=6).map(
        lambda parts: "\\".join(parts)
    ),
)


@pytest.mark.fuzz
@given(PATHS, st.sampled_from([WORKDIR, WINDOWS_WORKDIR, "\\\\srv\\share\\proj", "/"]) | PATHS)
def test_any_path_against_any_work_directory_is_relative_inside_or_none(
    path: str, workdir: str
) -> None:
    """Never raises; an answer never climbs out and is never absolute (on Windows, no drive
    with a root after it; on POSIX "A:/0" is a directory "A:" like any other)."""
    with bounded_memory():
        relative = relative_to_workdir(path, workdir)

    if relative is not None and relative != ".":
        parts = relative.split("/")
        assert ".." not in parts
        assert not relative.startswith("/")
        assert not (is_windows_path(workdir) and re.match(r"[A-Za-z]:[\\/]", relative))


@given(PATHS, st.sampled_from([WORKDIR, WINDOWS_WORKDIR, "\\\\srv\\share\\proj", "/"]) | PATHS)
def test_a_remembered_answer_is_the_one_worked_out_afresh(path: str, workdir: str) -> None:
    """relative_to_workdir remembers its answers; asked again, it answers as the uncached
    rule does."""
    first = relative_to_workdir(path, workdir)

    assert relative_to_workdir(path, workdir) == first == paths._relative(path, workdir)


@pytest.mark.parametrize(
    ("path", "expected"),
    [(f"{WORKDIR}/" + "a/" * 2000 + "b.py", "a/" * 2000 + "b.py"), ("/etc/" + "x" * 5000, None)],
)
def test_a_long_path_is_answered_without_being_remembered(path: str, expected: str | None) -> None:
    """Paths past the cached length are worked out each time, so odd transcript values are
    not kept alive."""
    before = paths._cached_relative.cache_info()

    assert relative_to_workdir(path, WORKDIR) == expected

    after = paths._cached_relative.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
