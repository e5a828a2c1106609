"""Work directory sources: every unit gets a fresh tree, copied or checked out at its ref."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from phasegate.batches.agents import ClaudeAgents
from phasegate.batches.loading import load_batch
from phasegate.batches.sources import CopySource, GitSource, WorkdirError, prepare_workdir
from phasegate.batches.unit_run import run_unit
from tests.helpers.batches import WriteBatch


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository with two commits on main: v1 (tagged) and v2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("version = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v1")
    (repo / "app.py").write_text("version = 2\n")
    git(repo, "commit", "-qam", "two")
    return repo


@pytest.mark.parametrize(("ref", "version"), [("main", 2), ("v1", 1), ("HEAD~1", None)])
def test_a_git_source_checks_out_its_ref_in_a_fresh_directory(
    repository: Path, tmp_path: Path, ref: str, version: int | None
) -> None:
    if version is None:  # a commit id, as a batch file would pin it
        ref, version = git(repository, "rev-parse", "HEAD~1"), 1
    tree = prepare_workdir(GitSource(git=str(repository), ref=ref), tmp_path / "unit")
    assert (tree / "app.py").read_text() == f"version = {version}\n"
    assert git(tree, "status", "--porcelain") == ""


def test_two_units_never_share_a_tree(repository: Path, tmp_path: Path) -> None:
    source = GitSource(git=str(repository), ref="main")
    first = prepare_workdir(source, tmp_path / "a")
    second = prepare_workdir(source, tmp_path / "b")
    (first / "app.py").write_text("changed\n")
    assert (second / "app.py").read_text() == "version = 2\n"
    assert (repository / "app.py").read_text() == "version = 2\n"


def test_a_copy_keeps_symlinks_as_links(tmp_path: Path) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "real.txt").write_text("x")
    (source / "link.txt").symlink_to("real.txt")
    tree = prepare_workdir(CopySource(copy=str(source)), tmp_path / "unit")
    assert (tree / "link.txt").is_symlink() and (tree / "real.txt").read_text() == "x"


def test_a_ref_that_does_not_exist_says_what_git_said(repository: Path, tmp_path: Path) -> None:
    with pytest.raises(WorkdirError, match=r"git fetch in .* failed: .*no-such-ref"):
        prepare_workdir(GitSource(git=str(repository), ref="no-such-ref"), tmp_path / "unit")


def test_a_unit_whose_tree_cannot_be_made_ends_in_error_without_raising(
    write_batch: WriteBatch, repository: Path
) -> None:
    items = [{"task": "example/task.yaml", "workdir": {"git": str(repository), "ref": "gone"}}]
    batch = load_batch(write_batch(items))
    outcome = asyncio.run(run_unit(batch.job(batch.units[0], ClaudeAgents())))
    assert outcome.verdict == "error"
    assert outcome.error is not None and "gone" in outcome.error
    assert "report.json" not in outcome.files
