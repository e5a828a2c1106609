"""Protected paths: which glob protects a path a tool names, the refusal a write hook gives,
and the issue and stage outcome for a protected path changed on disk."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.validators import protect
from phasegate.validators.issues import IssueCode
from phasegate.validators.protect import (
    SHOWN_PATH,
    protect_outcome,
    protected_changes,
    protected_glob,
    protected_issues,
    write_refusal,
)

WORKDIR = "/work/proj"
"""A POSIX work directory that does not exist here: paths are matched as written."""
WINDOWS_WORKDIR = "C:\\Users\\x\\proj"
TESTS = ("tests/**",)


@pytest.mark.parametrize(
    "path",
    [
        "tests/a.py",
        "tests/unit/b.py",
        "/work/proj/tests/a.py",
        "./tests/a.py",
        "tests//a.py",
        "src/../tests/a.py",
        "/work/proj/src/../tests/a.py",
        "tests\\a.py",
    ],
)
def test_a_path_that_resolves_into_a_protected_folder_is_protected(path: str) -> None:
    assert protected_glob(path, TESTS, WORKDIR) == "tests/**"


@pytest.mark.parametrize(
    "path",
    ["src/a.py", "tests", "testsuite/a.py", "/work/other/tests/a.py", "../tests/a.py", ""],
)
def test_a_path_outside_the_protected_folder_is_not_protected(path: str) -> None:
    assert protected_glob(path, TESTS, WORKDIR) is None


def test_a_glob_naming_a_folder_protects_the_folder_and_everything_below_it() -> None:
    assert protected_glob("tests", ("tests",), WORKDIR) == "tests"
    assert protected_glob("tests/deep/a.py", ("tests",), WORKDIR) == "tests"
    assert protected_glob("tests.py", ("tests",), WORKDIR) is None


def test_a_glob_matching_a_file_name_protects_that_file_wherever_the_glob_allows() -> None:
    assert protected_glob("pkg/poetry.lock", ("*.lock", "pkg/*.lock"), WORKDIR) == "pkg/*.lock"
    assert protected_glob("poetry.lock", ("*.lock",), WORKDIR) == "*.lock"


def test_the_first_glob_that_protects_a_path_is_named() -> None:
    assert protected_glob("tests/a.py", ("docs/**", "tests", "tests/**"), WORKDIR) == "tests"


def test_no_globs_protect_nothing() -> None:
    assert protected_glob("tests/a.py", (), WORKDIR) is None


def test_the_work_directory_itself_is_not_protected() -> None:
    assert protected_glob("/work/proj", ("**",), WORKDIR) is None
    assert protected_glob(".", ("**",), WORKDIR) is None


def test_a_windows_work_directory_matches_both_separators_drive_letters_and_any_case() -> None:
    for path in ["tests\\a.py", "C:\\Users\\x\\proj\\tests\\a.py", "c:/users/X/proj/Tests/a.py"]:
        assert protected_glob(path, TESTS, WINDOWS_WORKDIR) == "tests/**", path
    assert protected_glob("D:\\Users\\x\\proj\\tests\\a.py", TESTS, WINDOWS_WORKDIR) is None
    assert protected_glob("..\\other\\tests\\a.py", TESTS, WINDOWS_WORKDIR) is None


def test_a_drive_letter_path_is_outside_a_posix_work_directory() -> None:
    assert protected_glob("C:\\work\\proj\\tests\\a.py", TESTS, WORKDIR) is None


def test_names_are_case_sensitive_on_a_case_sensitive_file_system(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    if os.path.exists(tmp_path / "TESTS"):
        pytest.skip("this file system ignores case")
    assert protected_glob("Tests/a.py", TESTS, str(tmp_path)) is None
    assert protected_glob("tests/a.py", TESTS, str(tmp_path)) == "tests/**"


def test_names_are_case_insensitive_on_a_case_insensitive_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on macOS or Windows, where Tests/a.py is the same file as tests/a.py."""
    monkeypatch.setattr(protect, "_case_insensitive", lambda root: True)
    assert protected_glob("Tests/A.py", ("tests/*.py",), str(tmp_path)) == "tests/*.py"


def test_case_insensitivity_is_detected_from_the_work_directory_itself(tmp_path: Path) -> None:
    folder = tmp_path / "Proj"
    folder.mkdir()
    ignores_case = os.path.exists(tmp_path / "pROJ")
    assert protect._case_insensitive(os.path.realpath(folder)) is ignores_case


def test_a_link_inside_the_work_directory_into_a_protected_folder_is_protected(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "t").symlink_to("../tests")
    (tmp_path / "notes.md").symlink_to("tests/a.py")
    workdir = str(tmp_path)
    assert protected_glob("docs/t/a.py", TESTS, workdir) == "tests/**"
    assert protected_glob(str(tmp_path / "docs/t/new/b.py"), TESTS, workdir) == "tests/**"
    # Writing through a link to a file writes the file it points to.
    assert protected_glob("notes.md", TESTS, workdir) == "tests/**"


def test_a_protected_name_that_links_outside_the_work_directory_is_outside(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workdir = tmp_path / "proj"
    workdir.mkdir()
    (workdir / "tests").symlink_to(outside)
    assert protected_glob("tests/a.py", TESTS, str(workdir)) is None


def test_a_work_directory_reached_through_a_link_matches_as_its_real_folder(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real"
    (real / "tests").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    assert protected_glob(str(real / "tests/a.py"), TESTS, str(tmp_path / "link")) == "tests/**"


def test_a_name_no_file_can_have_is_matched_as_written_without_raising(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    assert protected_glob("tests/a\x00.py", TESTS, str(tmp_path)) == "tests/**"
    assert protected_glob(f"{tmp_path}/src/\x00", TESTS, str(tmp_path)) is None


def test_a_link_that_changed_on_disk_is_judged_as_itself_not_its_target(tmp_path: Path) -> None:
    """An added link docs/a.py -> ../tests/a.py is a change to docs, not to tests."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.py").symlink_to("../tests/a.py")
    assert protected_changes(["docs/a.py", "tests/b.py"], TESTS, str(tmp_path)) == {
        "tests/b.py": "tests/**"
    }


SEGMENTS = st.sampled_from(["tests", "Tests", "src", "..", ".", "", "a.py", "docs", "t"])
SEPARATORS = st.sampled_from(["/", "\\", "//"])


@st.composite
def tool_paths(draw: st.DrawFn) -> str:
    """A path as a model might write it: relative or absolute, with any of the odd parts."""
    parts = draw(st.lists(SEGMENTS, min_size=1, max_size=7))
    separator = draw(SEPARATORS)
    path = separator.join(parts)
    prefix = draw(st.sampled_from(["", "./", "{root}/", "{root}//", "C:\\"]))
    return prefix + path


def _lexical(path: str, root: str) -> str | None:
    """The path's place in ``root`` worked out independently: POSIX normalization only."""
    if path.startswith("C:\\"):
        return None
    full = posixpath.normpath(posixpath.join(root, path.replace("\\", "/")))
    if full == root or not full.startswith(root + "/"):
        return None
    return full[len(root) + 1 :]


@given(tool_paths())
def test_any_path_is_protected_exactly_when_it_resolves_into_the_protected_folder(
    template: str,
) -> None:
    """Fuzzed ``..``, ``./``, ``//``, backslashes and drive letters, on a work directory that
    is not on disk (matched as written, case-sensitively)."""
    path = template.format(root=WORKDIR)
    expected = _lexical(path, WORKDIR)
    inside_tests = expected is not None and expected.split("/")[0] == "tests"
    assert (protected_glob(path, ("tests",), WORKDIR) == "tests") is inside_tests


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool_paths())
def test_on_disk_a_fuzzed_path_through_a_link_is_protected_exactly_when_it_lands_in_tests(
    tmp_path: Path, template: str
) -> None:
    """``t`` is a link to ``tests`` inside the work directory, ``docs`` a real folder; a
    path is protected exactly when its real place is under ``tests``."""
    root = tmp_path / "proj"
    if not root.exists():
        (root / "tests").mkdir(parents=True)
        (root / "docs").mkdir()
        (root / "t").symlink_to("tests")
    workdir = os.path.realpath(root)
    path = template.format(root=workdir)
    lexical = _lexical(path, workdir)
    real = None
    if lexical is not None:
        resolved = os.path.relpath(os.path.realpath(os.path.join(workdir, lexical)), workdir)
        real = None if resolved.startswith("..") or resolved == "." else resolved
    inside_tests = real is not None and real.split("/")[0] == "tests"
    if os.path.exists(os.path.join(workdir, "TESTS")):
        inside_tests = real is not None and real.split("/")[0].casefold() == "tests"
    assert (protected_glob(path, ("tests",), workdir) == "tests") is inside_tests


@given(tool_paths())
def test_nothing_outside_the_work_directory_is_ever_protected(template: str) -> None:
    path = template.format(root="/work/other")
    assert protected_glob(path, ("**",), "/work/other/proj") is None or (
        _lexical(path, "/work/other/proj") is not None
    )


def test_write_refusal_names_the_path_as_written_the_glob_and_what_to_do() -> None:
    reason = write_refusal("Edit", {"file_path": "./tests/test_app.py"}, TESTS, WORKDIR)
    assert reason is not None
    assert reason.startswith("./tests/test_app.py is protected by `tests/**`: ")
    assert "must not change it" in reason and "change the code under test" in reason


@pytest.mark.parametrize(
    ("tool", "key"),
    [("Edit", "file_path"), ("MultiEdit", "file_path"), ("Write", "file_path"),
     ("NotebookEdit", "notebook_path")],
)  # fmt: skip
def test_every_file_writing_tool_is_refused_on_a_protected_path(tool: str, key: str) -> None:
    assert write_refusal(tool, {key: "tests/a.ipynb"}, TESTS, WORKDIR) is not None


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "tests/a.py"}),
        ("Bash", {"command": "echo > tests/a.py"}),
        ("Edit", {"file_path": "src/a.py"}),
        ("Edit", {}),
        ("Edit", {"file_path": 3}),
        ("NotebookEdit", {"file_path": "tests/a.ipynb"}),
        ("Write", {"file_path": "/elsewhere/tests/a.py"}),
    ],
)
def test_write_refusal_is_none_for_other_tools_other_paths_or_no_path(
    tool: str, tool_input: dict[str, object]
) -> None:
    assert write_refusal(tool, tool_input, TESTS, WORKDIR) is None


def test_write_refusal_quotes_a_long_or_odd_path_bounded_and_on_one_line() -> None:
    path = "tests/" + "x" * 10_000 + "\n\x1b[2J.py"
    reason = write_refusal("Write", {"file_path": path}, ("tests",), WORKDIR)
    assert reason is not None
    assert len(reason) < SHOWN_PATH + 300
    assert "\n" not in reason and "\x1b" not in reason


def test_a_protected_change_is_an_issue_naming_the_file_and_how_it_changed() -> None:
    total = WorkspaceDiff(added=("tests/new.py",), deleted=("tests/old.py",))
    changed = {"tests/new.py": "tests/**", "tests/old.py": "tests/**"}
    issues = protected_issues(2, "implement", changed, total)
    assert [(i.code, i.path, i.phase) for i in issues] == [
        (IssueCode.PROTECTED_PATH_CHANGED, "tests/new.py", 2),
        (IssueCode.PROTECTED_PATH_CHANGED, "tests/old.py", 2),
    ]
    assert "tests/new.py is protected by `tests/**`, but it was added" in issues[0].message
    assert "deleted" in issues[1].message
    assert issues[0].requirement is not None and "back exactly as it was" in issues[0].requirement


def test_a_stage_protect_outcome_fails_naming_each_protected_file_that_changed() -> None:
    diff = WorkspaceDiff(modified=("src/a.py", "tests/a.py"), deleted=("tests/b.py",))
    outcome = protect_outcome(TESTS, diff, WORKDIR)
    assert outcome.kind == "protect" and not outcome.ok
    assert "tests/a.py (protected by `tests/**`)" in outcome.detail
    assert "tests/b.py" in outcome.detail and "src/a.py" not in outcome.detail
    assert outcome.description.startswith("nothing matching `tests/**` is")
    assert outcome.remedy


def test_a_stage_protect_outcome_holds_when_only_unprotected_files_changed() -> None:
    outcome = protect_outcome(TESTS, WorkspaceDiff(added=("src/a.py",)), WORKDIR)
    assert outcome.ok and outcome.remedy == ""
