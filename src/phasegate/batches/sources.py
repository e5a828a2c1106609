"""Where a unit's work directory comes from: a directory copied, or a git ref checked out.

Every unit gets a fresh directory of its own, so runs never share a work tree.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from phasegate.errors import PhasegateError


class CopySource(BaseModel):
    """An existing directory, copied for every unit (symlinks copied as links)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    copy_from: str = Field(alias="copy", description="The directory to copy.")


class GitSource(BaseModel):
    """A git repository (a URL or a local path) and the ref checked out for every unit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    git: str = Field(description="Repository URL or path.")
    ref: str = Field(default="HEAD", description="Branch, tag or commit to check out.")


WorkdirSource = CopySource | GitSource
"""A unit's work directory source."""


def resolve_source(
    written: str | CopySource | GitSource, base: Path
) -> tuple[WorkdirSource, dict[str, str]]:
    """The source with its paths made absolute against ``base`` (and checked to exist), and
    the source as written (what a unit's id is made of). A path alone means a copy.

    Raises :class:`ValueError` saying what is wrong.
    """
    source = CopySource(copy=written) if isinstance(written, str) else written
    if isinstance(source, CopySource):
        directory = (base / source.copy_from).resolve()
        if not directory.is_dir():
            raise ValueError(f"{directory} is not a directory")
        return CopySource(copy=str(directory)), {"copy": source.copy_from}
    as_written = {"git": source.git, "ref": source.ref}
    if source.git.startswith("-") or source.ref.startswith("-"):
        raise ValueError("a repository or ref cannot start with '-'")
    if _looks_remote(source.git):
        return source, as_written
    repository = (base / source.git).resolve()
    if not repository.is_dir():
        raise ValueError(f"{repository} is not a directory")
    return GitSource(git=str(repository), ref=source.ref), as_written


def _looks_remote(repository: str) -> bool:
    """A URL (``https://``, ``ssh://``, ``file://``) or scp-like ``host:path``, not a path."""
    if "://" in repository:
        return True
    head, colon, _ = repository.partition(":")
    return bool(colon) and "/" not in head and len(head) > 1


class WorkdirError(PhasegateError):
    """A unit's work directory could not be made (the unit ends with verdict error)."""


def prepare_workdir(source: WorkdirSource, into: Path) -> Path:
    """Make ``into`` (which must not exist) a fresh work directory from ``source``."""
    if isinstance(source, CopySource):
        try:
            shutil.copytree(source.copy_from, into, symlinks=True)
        except (OSError, shutil.Error) as exc:
            raise WorkdirError(f"cannot copy {source.copy_from} to {into}: {exc}") from None
        return into
    into.mkdir(parents=True)
    # fetch, not clone: it takes a branch, a tag or a commit alike, and only that one.
    _git(into, "init", "--quiet")
    _git(into, "fetch", "--quiet", "--depth=1", "--", source.git, source.ref)
    _git(into, "checkout", "--quiet", "--detach", "FETCH_HEAD")
    return into


def _git(workdir: Path, *args: str) -> None:
    try:
        done = subprocess.run(
            ["git", "-C", str(workdir), *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkdirError(f"git {args[0]} in {workdir} failed: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise WorkdirError(f"git {args[0]} in {workdir} failed: {detail}")
