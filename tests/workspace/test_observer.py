"""Snapshots from disk: what is observed, what is skipped, fast edits are not missed, and
hashes handed to a later process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.workspace.contents import FileContents
from phasegate.workspace.observer import WorkspaceObserver


def test_added_modified_and_deleted_files_are_seen_relative_to_the_workdir(tmp_path: Path) -> None:
    """A diff of two snapshots names each change once, as a relative POSIX path."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a")
    (tmp_path / "b.py").write_text("b")
    observer = WorkspaceObserver(tmp_path)
    before = observer.snapshot()
    (tmp_path / "src" / "a.py").write_text("A")
    (tmp_path / "b.py").unlink()
    (tmp_path / "c.py").write_text("c")
    diff = WorkspaceDiff.between(before, observer.snapshot())
    assert (diff.added, diff.modified, diff.deleted) == (("c.py",), ("src/a.py",), ("b.py",))


def test_a_same_size_edit_right_after_a_snapshot_is_not_missed(tmp_path: Path) -> None:
    """File timestamps tick coarsely; a cached hash must not hide a fast same-size edit."""
    target = tmp_path / "app.py"
    target.write_text("x = 1\n")
    observer = WorkspaceObserver(tmp_path)
    before = observer.snapshot()
    target.write_text("x = 2\n")
    assert WorkspaceDiff.between(before, observer.snapshot()).modified == ("app.py",)


def test_tool_and_environment_directories_are_skipped(tmp_path: Path) -> None:
    """.git, node_modules, __pycache__, .phasegate and virtual environments are not the work."""
    for directory in [".git", "node_modules/pkg", "__pycache__", ".phasegate", "env/lib", ".venv"]:
        (tmp_path / directory).mkdir(parents=True)
        (tmp_path / directory / "file.txt").write_text("x")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "main.py").write_text("x")
    assert list(WorkspaceObserver(tmp_path).snapshot().files) == ["main.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_work_tree_ignored_files_are_skipped_and_untracked_ones_kept(
    tmp_path: Path,
) -> None:
    """git's own ignore rules decide; untracked but not ignored files are observed."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.bin").write_text("x")
    (tmp_path / "run.log").write_text("x")
    (tmp_path / "new.py").write_text("x")
    assert sorted(WorkspaceObserver(tmp_path).snapshot().files) == [".gitignore", "new.py"]


def test_a_symlink_is_recorded_by_its_target_and_not_followed(tmp_path: Path) -> None:
    """Changing where a link points is a change; the linked-to file outside is not read."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    (tmp_path / "link").symlink_to(outside)
    observer = WorkspaceObserver(tmp_path)
    before = observer.snapshot()
    assert before.files["link"] == f"link:{outside}"
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    assert WorkspaceDiff.between(before, observer.snapshot()).modified == ("link",)


def test_unobserved_files_are_left_out_however_they_are_named(tmp_path: Path) -> None:
    """phasegate's own files are never in a snapshot: named directly, relative to the current
    directory, below a subdirectory, or through a link that leads into the work dir."""
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    (tmp_path / "into-work").symlink_to(work, target_is_directory=True)
    for name in ["runs.jsonl", "logs/a.jsonl", "logs/b.jsonl", "main.py"]:
        (work / name).write_text("x")
    observer = WorkspaceObserver(
        work,
        unobserved=[
            work / "runs.jsonl",
            tmp_path / "into-work" / "logs" / "a.jsonl",
            work / "logs" / ".." / "logs" / "b.jsonl",
            tmp_path / "elsewhere.jsonl",  # outside: nothing to leave out
        ],
    )
    assert observer.unobserved == {"runs.jsonl", "logs/a.jsonl", "logs/b.jsonl"}
    before = observer.snapshot()
    assert list(before.files) == ["main.py"]
    for name in ["runs.jsonl", "logs/a.jsonl"]:
        (work / name).write_text("more lines")
    assert not WorkspaceDiff.between(before, observer.snapshot())


def test_an_unobserved_file_that_is_a_link_leaves_out_the_file_it_points_to(
    tmp_path: Path,
) -> None:
    """A log named through a link inside the work dir grows the file the link points to."""
    (tmp_path / "real.jsonl").write_text("x")
    (tmp_path / "runs.jsonl").symlink_to(tmp_path / "real.jsonl")
    observer = WorkspaceObserver(tmp_path, unobserved=[tmp_path / "runs.jsonl"])
    assert observer.snapshot().files == {}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_work_tree_an_untracked_unobserved_file_is_left_out(tmp_path: Path) -> None:
    """git lists the untracked log; the observer still leaves it out."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "runs.jsonl").write_text("x")
    (tmp_path / "new.py").write_text("x")
    observer = WorkspaceObserver(tmp_path, unobserved=[tmp_path / "runs.jsonl"])
    assert list(observer.snapshot().files) == ["new.py"]


def test_files_claude_code_writes_for_itself_are_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its plans and session logs in a .claude folder, and its config folder when that lies
    in the work directory, are not the agent's work; the project's own settings are."""
    config = tmp_path / "home-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    observer = WorkspaceObserver(tmp_path)
    before = observer.snapshot()
    for name in (".claude/plans/p.md", ".claude/projects/-w/s.jsonl", "home-config/x.json",
                 ".claude/settings.json", "a.md"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")

    diff = WorkspaceDiff.between(before, observer.snapshot())

    assert diff.added == (".claude/settings.json", "a.md")


def _aged(path: Path, text: str) -> Path:
    """``path`` written with ``text`` and dated ten seconds back, so its hash may be cached."""
    path.write_text(text)
    past = time.time() - 10
    os.utime(path, (past, past))
    return path


def test_hashes_handed_to_a_new_observer_spare_reading_unchanged_files_only(
    tmp_path: Path,
) -> None:
    """An observer in a later process reuses the hashes of files whose size and times are
    unchanged (a planted digest shows it did not read the file) and reads a changed one."""
    _aged(tmp_path / "same.txt", "same")
    changed = _aged(tmp_path / "changed.txt", "before")
    first = WorkspaceObserver(tmp_path)
    first.snapshot()
    handed = json.loads(json.dumps(first.hashes()))  # as the plugin keeps it: a JSON file
    assert set(handed) == {"same.txt", "changed.txt"}
    handed["same.txt"][4] = "f" * 64
    changed.write_text("after!")
    snapshot = WorkspaceObserver(tmp_path, hashes=handed).snapshot()
    assert snapshot.files["same.txt"] == "f" * 64
    assert snapshot.files["changed.txt"] == hashlib.sha256(b"after!").hexdigest()


def test_a_fresh_edit_is_never_handed_over(tmp_path: Path) -> None:
    """A file modified in the last two seconds is not cached, so not handed over either."""
    (tmp_path / "new.txt").write_text("new")
    observer = WorkspaceObserver(tmp_path)
    observer.snapshot()
    assert observer.hashes() == {}


@pytest.mark.parametrize(
    "entry",
    ["f" * 64, [1, 2, 3], [True, 1, 1, 1, "f" * 64], [1, 2, 3, 4, 5], None, {"size": 4}],
)
def test_handed_over_hashes_of_another_shape_are_ignored(tmp_path: Path, entry: object) -> None:
    """The hashes come from a file in the project: an entry that is not [size, mtime_ns,
    ctime_ns, inode, digest] is read from disk instead, never trusted nor a crash."""
    _aged(tmp_path / "a.txt", "a")
    snapshot = WorkspaceObserver(tmp_path, hashes={"a.txt": entry}).snapshot()
    assert snapshot.files["a.txt"] == hashlib.sha256(b"a").hexdigest()


def test_an_observer_that_keeps_contents_reads_every_file_whatever_it_was_handed(
    tmp_path: Path,
) -> None:
    """A recording wants the bytes of each file, so handed-over hashes are not used."""
    _aged(tmp_path / "a.txt", "a")
    first = WorkspaceObserver(tmp_path)
    first.snapshot()
    handed = {path: [*entry[:4], "f" * 64] for path, entry in first.hashes().items()}
    contents = FileContents()
    snapshot = WorkspaceObserver(tmp_path, hashes=handed, contents=contents).snapshot()
    assert snapshot.files["a.txt"] == hashlib.sha256(b"a").hexdigest()


def test_what_checks_wrote_handed_to_a_new_observer_stays_out_of_its_snapshots(
    tmp_path: Path,
) -> None:
    """A later process (the plugin's next stop) takes up what a check wrote: the file it
    made stays absent and the file it rewrote shows as before, until someone changes them."""
    (tmp_path / "app.py").write_text("code")
    (tmp_path / "report.txt").write_text("old")
    first = WorkspaceObserver(tmp_path)
    before = first.snapshot()
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache" / "v").write_text("cache")
    (tmp_path / "report.txt").write_text("by the check")
    first.written_by_checks(before, first.disk())
    handed = json.loads(json.dumps(first.by_checks()))  # as the plugin keeps it: in JSON
    later = WorkspaceObserver(tmp_path, by_checks=handed)
    assert later.snapshot() == before
    (tmp_path / "report.txt").write_text("by the agent")
    shown = later.snapshot().files
    assert shown["report.txt"] == hashlib.sha256(b"by the agent").hexdigest()
    assert ".pytest_cache/v" not in shown
    assert WorkspaceObserver(tmp_path).snapshot().files.keys() == {
        "app.py", "report.txt", ".pytest_cache/v"
    }  # fmt: skip


@pytest.mark.parametrize("entry", ["f" * 64, [None], [1, None], [None, None, None], None])
def test_handed_over_check_writes_of_another_shape_are_ignored(
    tmp_path: Path, entry: object
) -> None:
    """What checks wrote comes from a file in the project: an entry that is not [hash or
    null, hash or null] hides nothing."""
    (tmp_path / "a.txt").write_text("a")
    snapshot = WorkspaceObserver(tmp_path, by_checks={"a.txt": entry}).snapshot()
    assert snapshot.files["a.txt"] == hashlib.sha256(b"a").hexdigest()
