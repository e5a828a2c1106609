"""Reading the work directory for inference, read-only, and remembering what was read.

:class:`WorkdirFacts` answers the questions inference rules and the detector ask (does a
glob match, what does a file hold, which git branch, which environment variable) and keeps
every answer in :attr:`WorkdirFacts.read`. A plan carries the digest of those answers, so a
plan made before the files it looked at changed is recognised as stale. It never writes,
never runs a program, and never follows a path or symbolic link out of the work directory,
git's metadata included: a ``.git`` link, a ``.git`` file whose ``gitdir:`` or a
``commondir`` leading out of it (a worktree or submodule of a repository elsewhere, or a
planted pointer at another repository's config and its credentials) leaves the git facts
unknown.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path

from phasegate._files import ParseProblem, parse_json, read_text
from phasegate._files.confined import OutsideFolderError, resolve_inside
from phasegate._files.digests import json_digest
from phasegate._files.globs import glob_matches
from phasegate._files.yaml_reading import parse_yaml
from phasegate.modes import STATE_DIR

MAX_WALKED = 20_000
"""The most directory entries one glob looks at; past it the walk stops (sorted, so the
same tree always gives the same answer)."""
_SKIPPED_DIRS = frozenset({".git", STATE_DIR, "node_modules", ".venv", "__pycache__"})
"""Directories a glob never descends into unless it names them: metadata and caches."""


class WorkdirFacts:
    """The work directory ``root`` and ``environ``, read on demand; each answer recorded."""

    def __init__(self, root: Path, environ: Mapping[str, str] | None = None) -> None:
        self.root = root.resolve()
        self.environ = os.environ if environ is None else environ
        self.read: dict[str, object] = {}

    def digest(self) -> str:
        """A fingerprint of everything read so far."""
        return json_digest(self.read)[:32]

    def glob(self, pattern: str) -> list[str]:
        """The paths (files and directories, relative, POSIX) matching ``pattern``, sorted."""
        key = f"glob:{pattern}"
        if key not in self.read:
            self.read[key] = self._walk(pattern)
        found = self.read[key]
        return list(found) if isinstance(found, list) else []

    def exists(self, path: str) -> bool:
        """Whether ``path`` (relative) is a file or directory inside the work directory."""
        key = f"exists:{path}"
        if key not in self.read:
            target = self._inside(path)
            self.read[key] = target is not None and target.exists()
        return self.read[key] is True

    def data(self, path: str) -> object:
        """The parsed contents of a JSON, TOML or YAML file (by suffix), or None when it is
        missing, unreadable, too large or not valid."""
        text = self.text(path)
        if text is None:
            return None
        suffix = Path(path).suffix.lower()
        try:
            if suffix == ".json":
                return parse_json(text)
            if suffix == ".toml":
                return tomllib.loads(text)
            if suffix in (".yaml", ".yml"):
                return parse_yaml(text)
        except (ParseProblem, tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None
        return None

    def text(self, path: str) -> str | None:
        """The UTF-8 text of a file in the work directory, or None."""
        key = f"file:{path}"
        target = self._inside(path)
        try:
            text = read_text(target) if target is not None and target.is_file() else None
        except (OSError, ParseProblem):
            text = None
        digest = hashlib.sha256(text.encode()).hexdigest() if text is not None else None
        self.read[key] = digest
        return text

    def env(self, name: str) -> str | None:
        """The environment variable ``name`` when set and not empty."""
        value = self.environ.get(name) or None
        self.read[f"env:{name}"] = value
        return value

    def git(self, fact: str, remote: str = "origin") -> str | None:
        """The checked-out branch (``branch``) or a remote's URL (``remote_url``), read from
        git's files; None outside a repository or on a detached HEAD."""
        key = f"git:{fact}:{remote}" if fact == "remote_url" else f"git:{fact}"
        value = _git_branch(self.root) if fact == "branch" else _git_remote(self.root, remote)
        self.read[key] = value
        return value

    def record(self, key: str, value: object) -> None:
        """Remember a fact a caller derived (the detector's findings)."""
        self.read[key] = value

    def _inside(self, path: str) -> Path | None:
        """``root / path`` when it stays inside the work directory once resolved."""
        return _inside(self.root, Path(path))

    def _walk(self, pattern: str) -> list[str]:
        found: list[str] = []
        seen = 0
        for top, dirs, files in os.walk(self.root, followlinks=False):
            relative = Path(top).relative_to(self.root).as_posix()
            prefix = "" if relative == "." else f"{relative}/"
            named = set(pattern.split("/"))
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS or d in named)
            for name in sorted([*dirs, *files]):
                seen += 1
                if seen > MAX_WALKED:
                    return sorted(found)
                if glob_matches(pattern, prefix + name) and self._inside(prefix + name):
                    found.append(prefix + name)
        return sorted(found)


def _git_dir(root: Path) -> Path | None:
    """The git directory of the work directory ``root`` (resolved), when it lies inside
    ``root``: a ``.git`` folder, or a ``.git`` file whose ``gitdir:`` names a folder inside.
    A ``.git`` that is a symbolic link, or a ``gitdir:`` leading out of ``root`` (another
    repository's metadata, and its credentials), makes every git fact unknown."""
    dot_git = root / ".git"
    try:
        mode = dot_git.lstat().st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return dot_git
    if not stat.S_ISREG(mode):
        return None  # a link, a FIFO: never followed
    line = _first_line(root, dot_git)
    if line is None or not line.startswith("gitdir:"):
        return None
    return _inside(root, root / line.removeprefix("gitdir:").strip())


def _inside(root: Path, path: Path) -> Path | None:
    """``root / path`` resolved (an absolute path stays itself), when it lies inside
    ``root``; None when it leads out or cannot be resolved (a fact read there is no fact)."""
    try:
        return resolve_inside(root, path)
    except (OSError, OutsideFolderError):
        return None


def _first_line(root: Path, path: Path) -> str | None:
    try:
        return _git_file(root, path).splitlines()[0]
    except (OSError, ParseProblem, IndexError):
        return None


def _git_file(root: Path, path: Path) -> str:
    """The text of git's file ``path``, read only when it lies inside ``root`` once links
    are resolved (a link inside the git directory may lead anywhere); OSError otherwise."""
    inside = _inside(root, path)
    if inside is None:
        raise OSError(f"{path} lies outside the work directory")
    return read_text(inside)


def _git_branch(root: Path) -> str | None:
    git_dir = _git_dir(root)
    line = _first_line(root, git_dir / "HEAD") if git_dir is not None else None
    if line is None or not line.startswith("ref: refs/heads/"):
        return None
    return line.removeprefix("ref: refs/heads/").strip() or None


def _git_remote(root: Path, remote: str) -> str | None:
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    common = _first_line(root, git_dir / "commondir")
    config_dir = _inside(root, git_dir / common.strip()) if common else git_dir
    if config_dir is None:
        return None  # a commondir leading out of the work directory: not followed
    try:
        lines = _git_file(root, config_dir / "config").splitlines()
    except (OSError, ParseProblem):
        return None
    wanted = f'[remote "{remote}"]'
    inside = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            inside = line == wanted
        elif inside and line.partition("=")[0].strip() == "url":
            return line.partition("=")[2].strip() or None
    return None
