"""Disk changes from git: tracked and untracked changes since a revision, as a snapshot diff."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from phasegate.errors import UsageError
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.workspace.git import disk_changes_since
from phasegate.workspace.observer import WorkspaceObserver, is_git_work_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and no signing, whatever the user's config."""
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=Phasegate Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-C",
            str(repo),
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository at ``root`` with ``files`` committed."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q")
    _write(root, files)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    return root


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_tracked_changes_staged_or_not_and_untracked_files_are_listed(tmp_path: Path) -> None:
    """Unstaged and staged edits, deletions on disk or in the index, new files either way."""
    names = ["edited.py", "staged.py", "removed.py", "git_rm.py", "same.py"]
    repo = _repo(tmp_path / "repo", {name: f"{name}\n" for name in names})
    (repo / "edited.py").write_text("changed\n")
    (repo / "staged.py").write_text("changed\n")
    _git(repo, "add", "staged.py")
    (repo / "removed.py").unlink()
    _git(repo, "rm", "-q", "git_rm.py")
    _write(repo, {"new/untracked.py": "x\n", "added.py": "x\n"})
    _git(repo, "add", "added.py")
    assert disk_changes_since(repo) == WorkspaceDiff(
        added=("added.py", "new/untracked.py"),
        modified=("edited.py", "staged.py"),
        deleted=("git_rm.py", "removed.py"),
    )


def test_a_file_dropped_from_the_index_but_still_on_disk_counts_as_modified(
    tmp_path: Path,
) -> None:
    """`git rm --cached` leaves the file in place: it is neither added nor deleted."""
    repo = _repo(tmp_path / "repo", {"kept.py": "x\n"})
    _git(repo, "rm", "-q", "--cached", "kept.py")
    assert disk_changes_since(repo) == WorkspaceDiff(modified=("kept.py",))


def test_a_subdirectory_workdir_gets_paths_relative_to_it_and_nothing_from_outside(
    tmp_path: Path,
) -> None:
    """Changes elsewhere in the repository are not the work dir's."""
    repo = _repo(tmp_path / "repo", {"pkg/mod.py": "a\n", "pkg/gone.py": "b\n", "top.py": "c\n"})
    (repo / "pkg" / "mod.py").write_text("changed\n")
    (repo / "pkg" / "gone.py").unlink()
    (repo / "top.py").write_text("changed\n")
    _write(repo, {"pkg/sub/new.py": "x\n", "other/new.py": "x\n"})
    assert disk_changes_since(repo / "pkg") == WorkspaceDiff(
        added=("sub/new.py",), modified=("mod.py",), deleted=("gone.py",)
    )


def test_an_older_revision_counts_the_commits_since_as_changes(tmp_path: Path) -> None:
    """--before with an older commit or a tag: later commits are part of the change."""
    repo = _repo(tmp_path / "repo", {"app.py": "v1\n", "old.py": "old\n"})
    start = _git(repo, "rev-parse", "HEAD")
    _git(repo, "tag", "start")
    _write(repo, {"app.py": "v2\n", "feature.py": "new\n"})
    (repo / "old.py").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "work")
    expected = WorkspaceDiff(added=("feature.py",), modified=("app.py",), deleted=("old.py",))
    assert disk_changes_since(repo, start) == expected
    assert disk_changes_since(repo, "start") == expected
    assert disk_changes_since(repo) == WorkspaceDiff()


def test_ignored_files_and_skipped_directories_are_not_listed(tmp_path: Path) -> None:
    """git's ignore rules and phasegate's skipped directories both apply."""
    repo = _repo(tmp_path / "repo", {".gitignore": "*.log\nbuild/\n"})
    _write(
        repo,
        {
            "run.log": "x",
            "build/out.txt": "x",
            "node_modules/pkg/index.js": "x",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": "x",
            "main.py": "x",
        },
    )
    assert disk_changes_since(repo) == WorkspaceDiff(added=("main.py",))


def test_the_result_matches_a_diff_of_two_snapshots(tmp_path: Path) -> None:
    """Judging from git tells the same story as snapshots taken around the run."""
    repo = _repo(tmp_path / "repo", {"a.py": "a\n", "b/c.py": "c\n", "d.py": "d\n"})
    observer = WorkspaceObserver(repo)
    before = observer.snapshot()
    (repo / "a.py").write_text("A\n")
    (repo / "d.py").unlink()
    _write(repo, {"b/e.py": "e\n"})
    assert disk_changes_since(repo) == WorkspaceDiff.between(before, observer.snapshot())


def test_a_directory_outside_any_git_work_tree_is_refused_with_what_to_do(
    tmp_path: Path,
) -> None:
    """The message says how to get a work tree."""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not is_git_work_tree(plain)
    with pytest.raises(UsageError, match=r"not inside a git work tree.*run `git init`"):
        disk_changes_since(plain)


@pytest.mark.parametrize("ref", ["no-such-branch", "--output=stolen.txt", ""])
def test_an_unknown_revision_is_refused_with_what_to_pass_instead(tmp_path: Path, ref: str) -> None:
    """An unknown name, or one git would read as an option, is not a revision."""
    repo = _repo(tmp_path / "repo", {"a.py": "a\n"})
    with pytest.raises(UsageError, match=f"does not know the revision '{ref}'") as raised:
        disk_changes_since(repo, ref)
    assert raised.value.option == "before"
    assert not (repo / "stolen.txt").exists()


def test_a_repository_without_commits_has_no_head_to_compare_with(tmp_path: Path) -> None:
    """HEAD of a fresh `git init` is not a revision yet."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    with pytest.raises(UsageError, match="does not know the revision 'HEAD'"):
        disk_changes_since(repo)


def test_missing_git_is_refused_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without git on PATH the message says so instead of failing obscurely."""
    repo = _repo(tmp_path / "repo", {"a.py": "a\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    with pytest.raises(UsageError, match="git is not installed"):
        disk_changes_since(repo)


def test_unobserved_files_are_not_listed_however_they_are_named(tmp_path: Path) -> None:
    """Files that are not the agent's work (a log, a saved transcript) are left out."""
    repo = _repo(tmp_path / "repo", {"app.py": "x"})
    (tmp_path / "into-repo").symlink_to(repo, target_is_directory=True)
    _write(repo, {"app.py": "y", "runs.jsonl": "{}", "ci/run.jsonl": "{}"})
    unobserved = [repo / "runs.jsonl", tmp_path / "into-repo" / "ci" / "run.jsonl"]
    assert disk_changes_since(repo, unobserved=unobserved) == WorkspaceDiff(modified=("app.py",))


def test_a_directory_with_no_git_folder_above_it_is_judged_without_starting_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run asks this once: where no ``.git`` exists, git is not started to say no."""
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"started a process: {args}")

    monkeypatch.setattr(subprocess, "run", no_process)
    assert not is_git_work_tree(plain)


def test_a_work_tree_named_by_the_environment_is_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DIR and GIT_WORK_TREE make git see a work tree with no ``.git`` above it."""
    repo = _repo(tmp_path / "repo", {"a.py": "a\n"})
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    assert is_git_work_tree(tmp_path)


def test_the_repositorys_own_fsmonitor_program_is_never_started(tmp_path: Path) -> None:
    """A repository's config can name a program for ``git ls-files`` and ``git status`` to
    start (``core.fsmonitor``); an agent can write it in a repository it made: phasegate's
    own git commands (a snapshot, disk changes since a revision) never start it."""
    repo = _repo(tmp_path / "repo", {"a.txt": "a\n"})
    started = tmp_path / "started"
    _git(repo, "config", "core.fsmonitor", f"touch {started}; false")
    _write(repo, {"a.txt": "b\n", "new.txt": "x\n"})
    assert is_git_work_tree(repo)
    assert sorted(WorkspaceObserver(repo).snapshot().files) == ["a.txt", "new.txt"]
    assert disk_changes_since(repo) == WorkspaceDiff(added=("new.txt",), modified=("a.txt",))
    assert not started.exists()
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False)
    assert started.exists()  # as git itself would, for anyone else
