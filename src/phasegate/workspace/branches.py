"""Work directories of a pipeline's branches: forked from a point, merged back, removed.

A branch of a pipeline works in a directory of its own, ``WORKDIR/.phasegate/branches/NAME``,
made from a **fork point**: the state of the directory it forks from when it forks, earlier
stages' uncommitted changes included. In a git work tree the fork point is a commit made from
that state through a temporary index (the user's index, branch and stash are never touched),
kept under ``refs/phasegate/forks/NAME``, and the branch directory is a git worktree on it,
detached (files git ignores are not carried over). Elsewhere the fork point is a copy under
``.phasegate/branches/.forks/NAME`` and the branch directory a copy of that copy. Either way
the fork point's snapshot (path to hash) is kept beside it, so a resumed run finds both.

:func:`merge_branch` merges what a branch changed since its fork point into a target
directory, file by file (:mod:`~phasegate.workspace.merge`); :func:`close_branch` removes the
directory, the ref and the copy once the join is accepted. A branch that failed is left for
the user to look at.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from phasegate._files.atomic import write_atomic
from phasegate._files.confined import inside_folder, remove_inside
from phasegate.errors import RunError
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.modes import BRANCHES_DIR, STATE_DIR
from phasegate.workspace.merge import FileConflict, FileMerge, merge_file
from phasegate.workspace.observer import WorkspaceObserver, is_git_work_tree

FORKS_DIR = f"{BRANCHES_DIR}/.forks"
"""Where fork points are described (and, outside git, copied)."""
FORK_REF = "refs/phasegate/forks/"
"""The git refs that hold fork points' commits, one per branch."""
_GIT_SECONDS = 120
_IDENTITY = {
    "GIT_AUTHOR_NAME": "phasegate",
    "GIT_AUTHOR_EMAIL": "phasegate@localhost",
    "GIT_COMMITTER_NAME": "phasegate",
    "GIT_COMMITTER_EMAIL": "phasegate@localhost",
}


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """The state a branch starts from: a git commit (``commit``, with the work directory's
    ``prefix`` in its repository) or a copy (``copy``), and its snapshot."""

    branch: str
    snapshot: WorkspaceSnapshot
    commit: str | None = None
    prefix: str = ""
    copy: Path | None = None


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """What merging a branch did: the files it changed in the target, and the conflicts
    (written with markers only when the merge was asked to write them)."""

    branch: str
    changed: tuple[str, ...]
    conflicts: tuple[FileConflict, ...]
    written: bool


def folder_name(branch: str) -> str:
    """The directory name of ``branch``: its name when that is a plain file name, else the
    name with other characters replaced and a short hash added (names stay apart)."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", branch):
        return branch
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", branch).strip("-.") or "branch"
    return f"{cleaned}-{hashlib.sha256(branch.encode()).hexdigest()[:8]}"


def branch_directory(root: Path, branch: str) -> Path:
    """Where ``branch`` of a run in ``root`` works (the folder may not exist yet)."""
    return root / BRANCHES_DIR / folder_name(branch)


def capture_fork_point(source: Path, root: Path, branch: str) -> ForkPoint:
    """Keep ``source``'s state now as the fork point of ``branch`` (a run in ``root``)."""
    forks = inside_folder(root, FORKS_DIR, create=True)
    name = folder_name(branch)
    snapshot = WorkspaceObserver(source).snapshot()
    if is_git_work_tree(source):
        prefix = _git(source, "rev-parse", "--show-prefix").strip()
        point = ForkPoint(branch, snapshot, commit=_commit_state(source, name), prefix=prefix)
    else:
        remove_inside(forks, name)
        shutil.copytree(source, forks / name, symlinks=True, ignore=_skip_state)
        point = ForkPoint(branch, snapshot, copy=forks / name)
    described = {
        "branch": branch,
        "commit": point.commit,
        "prefix": point.prefix,
        "copy": name if point.copy is not None else None,
        "snapshot": dict(snapshot.files),
    }
    write_atomic(forks / f"{name}.json", json.dumps(described).encode(), inside=root)
    return point


def load_fork_point(root: Path, branch: str) -> ForkPoint | None:
    """The fork point kept for ``branch`` of a run in ``root`` (None when there is none)."""
    path = root / FORKS_DIR / f"{folder_name(branch)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        copy = data["copy"]
        return ForkPoint(
            branch,
            WorkspaceSnapshot(dict(data["snapshot"])),
            commit=data["commit"],
            prefix=data["prefix"],
            copy=root / FORKS_DIR / copy if copy else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def open_branch(root: Path, point: ForkPoint) -> Path:
    """The work directory of ``point``'s branch, made from the fork point when missing."""
    where = branch_directory(root, point.branch)
    inside_folder(root, BRANCHES_DIR, create=True)
    if point.commit is not None:
        workdir = where / point.prefix if point.prefix else where
        if not where.exists():
            _git(root, "worktree", "add", "--detach", "--force", str(where), point.commit)
        return workdir
    if not where.exists():
        assert point.copy is not None
        shutil.copytree(point.copy, where, symlinks=True)
    return where


def merge_branch(
    target: Path,
    branch_dir: Path,
    point: ForkPoint,
    *,
    ours_label: str,
    theirs_label: str,
    write_conflicts: bool = True,
) -> MergeOutcome:
    """Merge what ``branch_dir`` changed since ``point`` into ``target``.

    Nothing is written when there is a conflict and ``write_conflicts`` is False; otherwise
    every file's outcome is written, conflicting ones with their markers.
    """
    theirs_now = WorkspaceObserver(branch_dir).snapshot()
    theirs_changed = WorkspaceDiff.between(point.snapshot, theirs_now).paths
    git_root = branch_dir if point.commit is not None else None
    merges: list[FileMerge] = []
    for relative in theirs_changed:
        base = _base(point, relative, git_root)
        outcome = merge_file(
            relative,
            base,
            _read(target / relative),
            _read(branch_dir / relative),
            ours_label=ours_label,
            theirs_label=theirs_label,
        )
        if outcome is not None:
            merges.append(outcome)
    conflicts = tuple(m.conflict for m in merges if m.conflict is not None)
    write = write_conflicts or not conflicts
    if write:
        for merged in merges:
            _place(target, merged, branch_dir)
    return MergeOutcome(point.branch, tuple(m.path for m in merges), conflicts, write)


def close_branch(root: Path, point: ForkPoint) -> None:
    """Remove ``point``'s branch directory, its fork point's ref or copy and description."""
    name = folder_name(point.branch)
    where = branch_directory(root, point.branch)
    if point.commit is not None:
        if where.exists():
            _run_git(root, "worktree", "remove", "--force", str(where))
        _run_git(root, "update-ref", "-d", FORK_REF + name)
    remove_inside(root / BRANCHES_DIR, name)
    forks = root / FORKS_DIR
    remove_inside(forks, name)
    remove_inside(forks, f"{name}.json")


# -- helpers ------------------------------------------------------------------------------


def _skip_state(folder: str, names: list[str]) -> set[str]:
    """What a fork's copy leaves out: phasegate's own folder (branches, state)."""
    return {STATE_DIR} & set(names)


def _commit_state(source: Path, name: str) -> str:
    """A commit of ``source``'s files as they are now (tracked and untracked, not ignored,
    not ``.phasegate``), made through a temporary index; kept under a ref of its own."""
    handle, index = tempfile.mkstemp(prefix="phasegate-index-")
    os.close(handle)
    os.unlink(index)  # git writes a new index there
    env = {"GIT_INDEX_FILE": index, **_IDENTITY}
    try:
        head = _run_git(source, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        parents = ["-p", head.stdout.decode().strip()] if head.returncode == 0 else []
        if parents:
            _git(source, "read-tree", "HEAD", env=env)
        _git(source, "add", "-A", "--", ".", f":(exclude){STATE_DIR}", env=env)
        tree = _git(source, "write-tree", env=env).strip()
        message = f"phasegate: fork point of branch {name}"
        commit = _git(source, "commit-tree", tree, *parents, "-m", message, env=env).strip()
    finally:
        Path(index).unlink(missing_ok=True)
    _git(source, "update-ref", FORK_REF + name, commit)
    return commit


def _base(point: ForkPoint, relative: str, git_root: Path | None) -> bytes | None:
    if relative not in point.snapshot.files:
        return None
    if point.copy is not None:
        return _read(point.copy / relative)
    assert point.commit is not None and git_root is not None
    done = _run_git(git_root, "cat-file", "blob", f"{point.commit}:{point.prefix}{relative}")
    return done.stdout if done.returncode == 0 else None


def _read(path: Path) -> bytes | None:
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def _place(target: Path, merged: FileMerge, branch_dir: Path) -> None:
    """Write one file's outcome in ``target`` (its mode taken from the branch's file)."""
    path = target / merged.path
    if merged.content is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, merged.content, inside=target)
    source = branch_dir / merged.path
    if source.is_file() and not source.is_symlink():
        os.chmod(path, source.stat().st_mode & 0o777)


def _git(where: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = _run_git(where, *args, env=env)
    if done.returncode != 0:
        problem = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        raise RunError(
            f"`git {args[0]}` failed in {where} while preparing a pipeline branch: {problem}"
        )
    return done.stdout.decode("utf-8", "surrogateescape")


def _run_git(
    where: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(where), *args],
            capture_output=True,
            timeout=_GIT_SECONDS,
            check=False,
            env={**os.environ, **(env or {})},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"git could not be run for a pipeline branch: {exc}") from None
