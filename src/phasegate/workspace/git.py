"""What changed on disk in a git work tree since a revision.

Judging a saved transcript has no snapshots from the run, but when the work dir is in a git
work tree git can tell what changed since the commit the run started from: tracked changes
between that revision and the working tree (staged or not), plus untracked files git does not
ignore, which count as added. Paths are relative to the work dir and limited to it. As in a
:class:`~phasegate.workspace.observer.WorkspaceObserver` snapshot, files in skipped directories
(``.git``, ``node_modules``, ``__pycache__``, virtual environments, ``.phasegate``) are left
out, and so are the files phasegate wrote itself (``unobserved``), so the answer reads like a
diff of two snapshots.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from phasegate.errors import UsageError
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.workspace.observer import (
    git_in,
    in_skipped_dir,
    is_git_work_tree,
    paths_inside,
    work_directory,
)

_TIMEOUT_SECONDS = 60
"""How long one git command may take before it is stopped and reported as a usage error."""


def disk_changes_since(
    workdir: Path, ref: str = "HEAD", *, unobserved: Iterable[str | Path] = ()
) -> WorkspaceDiff:
    """Files added, modified and deleted in ``workdir`` since revision ``ref``.

    ``unobserved``: files that are not the agent's work (phasegate's own outputs, a transcript
    saved into the work tree); they are left out wherever they lie inside ``workdir``.

    Raises :class:`~phasegate.errors.UsageError` when git is missing, ``workdir`` is not in a
    git work tree, or git does not know ``ref``.
    """
    if shutil.which("git") is None:
        raise UsageError(_NO_GIT)
    workdir = work_directory(workdir)
    if not is_git_work_tree(workdir):
        raise UsageError(
            f"{workdir} is not inside a git work tree; judging disk changes needs git: run "
            "`git init` and commit the starting state, or judge in a checkout of the repository"
        )
    commit = _resolve(workdir, ref)
    status = _git_output(
        workdir,
        "diff",
        "--relative",
        "--no-renames",
        "--no-ext-diff",
        "--name-status",
        "-z",
        commit,
        "--",
    )
    added: set[str] = set()
    modified: set[str] = set()
    deleted: set[str] = set()
    fields = status.split("\0")
    for letter, path in zip(fields[0::2], fields[1::2], strict=False):
        if not path:
            continue
        if letter == "A":
            added.add(path)
        elif letter == "D":
            deleted.add(path)
        else:  # M, or T (type change) and U (unmerged): either way not as it was
            modified.add(path)
    untracked = _git_output(workdir, "ls-files", "--others", "--exclude-standard", "-z")
    for path in untracked.split("\0"):
        # A trailing slash marks a nested repository: the observer does not look inside either.
        if not path or path.endswith("/"):
            continue
        if path in deleted:
            # Dropped from the index but still on disk: there, yet no longer what git tracks.
            deleted.discard(path)
            modified.add(path)
        else:
            added.add(path)
    observed = _Observed(workdir, {*added, *modified, *deleted}, paths_inside(workdir, unobserved))
    return WorkspaceDiff(
        added=observed.sorted(added),
        modified=observed.sorted(modified),
        deleted=observed.sorted(deleted),
    )


_NO_GIT = (
    "git is not installed (or not on PATH); judging disk changes needs it: install git, or "
    "judge on a machine that has it"
)
"""What to do when git cannot be run at all."""


def _resolve(workdir: Path, ref: str) -> str:
    """The commit ``ref`` names, as a full hash."""
    # A leading dash would be read as an option, not a revision.
    if ref and not ref.startswith("-"):
        done = _git(workdir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if done.returncode == 0:
            return done.stdout.decode().strip()
    raise UsageError(
        f"git does not know the revision '{ref}' in {workdir}; start from a commit, branch "
        "or tag that exists there",
        option="before",
    )


def _git_output(workdir: Path, *args: str) -> str:
    done = _git(workdir, *args)
    if done.returncode != 0:
        problem = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        raise UsageError(f"`git {args[0]}` failed in {workdir}: {problem}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _git(workdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    # Reading must not take locks a concurrent git command in the same repository needs.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        return subprocess.run(
            git_in(workdir, *args),
            capture_output=True,
            timeout=_TIMEOUT_SECONDS,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise UsageError(_NO_GIT) from None
    except OSError as exc:
        raise UsageError(f"git could not be run: {exc}") from None
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"`git {args[0]}` took more than {_TIMEOUT_SECONDS} s in {workdir}; check that the "
            "repository is not locked or huge, or judge without disk changes"
        ) from None


class _Observed:
    """Which changed paths a workspace snapshot would hold (skipped directories left out)."""

    def __init__(self, workdir: Path, changed: set[str], unobserved: frozenset[str]) -> None:
        self._workdir = workdir
        self._unobserved = unobserved
        # A venv whose pyvenv.cfg changed is a venv even if the file is gone now.
        self._venvs = {p.rpartition("/")[0] for p in changed if p.endswith("/pyvenv.cfg")}
        self._checked: dict[str, bool] = {}

    def sorted(self, paths: set[str]) -> tuple[str, ...]:
        """``paths`` without those a snapshot skips, sorted."""
        return tuple(
            sorted(
                p
                for p in paths
                if not in_skipped_dir(p) and p not in self._unobserved and not self._in_venv(p)
            )
        )

    def _in_venv(self, path: str) -> bool:
        parts = path.split("/")[:-1]
        return any(self._is_venv("/".join(parts[: i + 1])) for i in range(len(parts)))

    def _is_venv(self, directory: str) -> bool:
        if directory not in self._checked:
            self._checked[directory] = (
                directory in self._venvs or (self._workdir / directory / "pyvenv.cfg").is_file()
            )
        return self._checked[directory]
