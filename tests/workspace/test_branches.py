"""Branch work directories: forked from the state of the moment (uncommitted changes too),
merged back against that point, removed after the join; in a git work tree and outside one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from phasegate.workspace.branches import (
    FORK_REF,
    branch_directory,
    capture_fork_point,
    close_branch,
    folder_name,
    load_fork_point,
    merge_branch,
    open_branch,
)


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout


@pytest.fixture(params=["git", "copy"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A project with a committed file and, in git, an uncommitted change and an untracked
    file: the fork point must hold them all."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "shared.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (root / "keep.txt").write_text("keep\n")
    if request.param == "git":
        _git(root, "init", "-q")
        _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
        _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (root / "shared.txt").write_text("one\ntwo\nthree\nfour\nfive\nsix (plan)\n")
    (root / "plan.md").write_text("the plan\n")
    return root


def test_a_branch_starts_from_the_fork_point_with_uncommitted_work(project: Path) -> None:
    point = capture_fork_point(project, project, "docs")
    work = open_branch(project, point)
    assert work == branch_directory(project, "docs")
    assert (work / "plan.md").read_text() == "the plan\n"
    assert (work / "shared.txt").read_text().endswith("six (plan)\n")
    assert not (work / ".phasegate").exists(), "phasegate's own folder stays out of a branch"
    if point.commit is not None:
        assert _git(project, "status", "--porcelain", "--untracked-files=no") == " M shared.txt\n"
        assert _git(project, "rev-parse", FORK_REF + "docs").strip() == point.commit
    again = load_fork_point(project, "docs")
    assert again is not None and again.snapshot == point.snapshot
    assert (again.commit, again.copy) == (point.commit, point.copy)


def test_a_branch_merges_back_its_adds_edits_deletes_and_renames(project: Path) -> None:
    point = capture_fork_point(project, project, "docs")
    work = open_branch(project, point)
    (work / "docs.md").write_text("docs\n")
    (work / "shared.txt").write_text("ONE\ntwo\nthree\nfour\nfive\nsix (plan)\n")
    (work / "keep.txt").rename(work / "kept.txt")
    (project / "shared.txt").write_text("one\ntwo\nthree\nfour\nFIVE\nsix (plan)\n")
    outcome = merge_branch(project, work, point, ours_label="main", theirs_label="docs")
    assert outcome.conflicts == () and outcome.written
    assert sorted(outcome.changed) == ["docs.md", "keep.txt", "kept.txt", "shared.txt"]
    assert (project / "shared.txt").read_text() == "ONE\ntwo\nthree\nfour\nFIVE\nsix (plan)\n"
    assert (project / "kept.txt").read_text() == "keep\n" and not (project / "keep.txt").exists()
    assert (project / "docs.md").read_text() == "docs\n"


def test_a_conflict_is_written_with_markers_or_not_at_all(project: Path) -> None:
    point = capture_fork_point(project, project, "docs")
    work = open_branch(project, point)
    (work / "plan.md").write_text("the plan, by docs\n")
    (work / "docs.md").write_text("docs\n")
    (project / "plan.md").write_text("the plan, by main\n")
    refused = merge_branch(project, work, point, ours_label="main", theirs_label="docs",
                           write_conflicts=False)  # fmt: skip
    assert [c.path for c in refused.conflicts] == ["plan.md"] and not refused.written
    assert (project / "plan.md").read_text() == "the plan, by main\n"
    assert not (project / "docs.md").exists(), "nothing is written when a conflict refuses"
    outcome = merge_branch(project, work, point, ours_label="main", theirs_label="docs")
    (conflict,) = outcome.conflicts
    assert conflict.hunks[0].theirs == ("the plan, by docs\n",)
    assert "<<<<<<< main" in (project / "plan.md").read_text()
    assert (project / "docs.md").read_text() == "docs\n"


def test_closing_a_branch_removes_its_directory_ref_and_fork_point(project: Path) -> None:
    point = capture_fork_point(project, project, "docs")
    work = open_branch(project, point)
    close_branch(project, point)
    assert not work.exists() and load_fork_point(project, "docs") is None
    if point.commit is not None:
        assert _git(project, "for-each-ref", FORK_REF) == ""
        assert "docs" not in _git(project, "worktree", "list")


def test_a_branch_name_that_is_no_plain_file_name_gets_a_safe_distinct_folder() -> None:
    assert folder_name("docs") == "docs"
    odd = folder_name("write the ../docs")
    assert "/" not in odd and odd != folder_name("write the docs")
