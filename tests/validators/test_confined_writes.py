"""A confined run's file tools stay in the work directory: a write outside it (by name, by
``..`` or through a link) is refused before it runs, as a protected path is; and the paths a
sandbox makes read-only are what ``protect`` matches on disk, a folder standing for all it
holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.validators.protect import protected_paths, write_refusal


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "src").mkdir(parents=True)
    (folder / "outside-link").symlink_to(tmp_path)
    return folder


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../escaped.txt", "src/../../escaped.txt", "outside-link/x.txt", "~/.bashrc"],
)
def test_a_write_outside_the_work_directory_is_refused_when_confined(work: Path, path: str) -> None:
    reason = write_refusal("Write", {"file_path": path}, (), str(work), confined=True)
    assert reason is not None and "outside the work directory" in reason
    assert write_refusal("Write", {"file_path": path}, (), str(work)) is None  # not confined


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit", "Write"])
def test_a_write_inside_is_left_to_the_other_rules(work: Path, tool: str) -> None:
    for path in ("src/a.py", str(work / "src" / "a.py"), "new.txt"):
        assert write_refusal(tool, {"file_path": path}, (), str(work), confined=True) is None
    reason = write_refusal(tool, {"file_path": "src/a.py"}, ("src",), str(work), confined=True)
    assert reason is not None and "protected by `src`" in reason


def test_a_notebook_and_a_call_without_a_path_are_judged_too(work: Path) -> None:
    outside = {"notebook_path": "/tmp/n.ipynb"}
    assert write_refusal("NotebookEdit", outside, (), str(work), confined=True) is not None
    missing = write_refusal("Write", {"content": "x"}, (), str(work), confined=True)
    assert missing is not None and "missing" in missing
    assert write_refusal("Bash", {"command": "echo > /x"}, (), str(work), confined=True) is None


def test_the_path_a_refusal_quotes_is_shortened_and_escaped(work: Path) -> None:
    reason = write_refusal("Write", {"file_path": "/x\n" + "y" * 500}, (), str(work), confined=True)
    assert reason is not None and "\n" not in reason and len(reason) < 500


def test_the_read_only_paths_are_what_protect_matches_folders_whole(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_a.py").write_text("")
    (tmp_path / "poetry.lock").write_text("")
    (tmp_path / "app.py").write_text("")
    root = tmp_path.resolve()
    found = protected_paths(("tests/**", "*.lock"), str(tmp_path))
    assert found == [str(root / "tests"), str(root / "poetry.lock")]
    assert protected_paths((), str(tmp_path)) == []
    assert protected_paths(("missing/**",), str(tmp_path)) == []
    # Only some of what a folder holds: the files, one by one.
    assert protected_paths(("tests/**/*.py",), str(tmp_path)) == [
        str(root / "tests" / "unit" / "test_a.py")
    ]


def test_phasegates_own_files_are_refused_when_confined(work: Path) -> None:
    """Its event log, and anything in its state folder, by name or through a link."""
    (work / "events.jsonl").write_text("")
    (work / "state-link").symlink_to(work / ".phasegate")
    own = [str(work / "events.jsonl"), str(work / ".phasegate")]
    for path in ("events.jsonl", str(work / "events.jsonl"), ".phasegate/pipeline-state.json",
                 "state-link/x.json"):  # fmt: skip
        reason = write_refusal("Write", {"file_path": path}, (), str(work), confined=True, own=own)
        assert reason is not None and "phasegate's own record" in reason, path
    assert (
        write_refusal("Write", {"file_path": "src/a.py"}, (), str(work), confined=True, own=own)
        is None
    )
    assert write_refusal("Write", {"file_path": "events.jsonl"}, (), str(work), own=own) is None
