"""Taking snapshots of a work directory from disk.

A snapshot hashes every observed file. Skipped: ``.git``, virtual environments (any
directory holding ``pyvenv.cfg``, and ``.venv``/``venv``), ``node_modules``, ``__pycache__``,
phasegate's own ``.phasegate`` state, the files phasegate writes while it watches (an event
log kept in the work directory: see :func:`paths_inside`), the files Claude Code writes for
itself (its plans, session logs and the like in a ``.claude`` folder, and its config and
temp folders when they lie in the work directory:
:mod:`phasegate.evidence.claude_code_files`), and, when the directory is in a git work tree,
everything git ignores. Symbolic links are recorded by their target, never followed.

Files a check wrote (a test runner's ``.pytest_cache``, a coverage file) are never the
agent's work: :meth:`WorkspaceObserver.written_by_checks` hands the observer the disk before
and after the gate ran its checks, and later snapshots show each such file as it was before,
for as long as it still holds what the check left in it. A process that watches the same
directory later (the plugin's next stop) takes that up from :meth:`WorkspaceObserver.by_checks`
through the ``by_checks`` argument, so a check's output never becomes the agent's work there
either.

Hashes are cached by (size, mtime, ctime, inode), except for files modified in the last two
seconds: file timestamps on Linux tick coarsely, so a fast edit could keep its old mtime
(the same "racy" problem git solves the same way). A process that snapshots the same
directory again later (the plugin's Stop hook, a new process at every stop) hands the cache
over with :meth:`WorkspaceObserver.hashes` and the ``hashes`` argument: unchanged files are
then not read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from phasegate._files.confined import blocked_at
from phasegate._files.limits import open_regular
from phasegate.errors import UsageError
from phasegate.evidence.claude_code_files import (
    environment_roots,
    own_folders_inside,
    written_by_claude_code,
)
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import STATE_DIR
from phasegate.workspace.contents import FileContents

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", STATE_DIR}
)
"""Directories never observed, wherever they are: version control, dependencies, caches."""
CHUNK_BYTES = 1 << 20
"""How much of a file is read at a time, hashing or copying it (1 MiB)."""
_RACY_SECONDS = 2.0
"""A file modified less than this long ago is not cached: its mtime may miss the next edit."""
_GIT_CHECK_SECONDS = 30
"""How long asking git whether the directory is a work tree may take (then: it is not)."""
_GIT_LIST_SECONDS = 60
"""How long git may take to list the files (then the observer walks the directory itself)."""
_StatKey = tuple[int, int, int, int]
"""What a cached hash is valid for: size, mtime and ctime in ns, inode."""


class WorkspaceObserver:
    """Snapshots of one work directory, reusing hashes of files that did not change.

    ``unobserved``: files phasegate itself writes while the agent works (an event log); those
    inside the work directory, however they are reached, are never part of a snapshot.
    ``contents``: where to keep the text of the files hashed, for a recording's diffs
    (:mod:`phasegate.workspace.contents`; None keeps nothing). ``hashes``: what
    :meth:`hashes` returned in an earlier process for this directory, to reuse; entries not
    of that shape are ignored, and so is all of it when ``contents`` is given (it wants the
    bytes of every file, so each is read once in this process). ``by_checks``: what
    :meth:`by_checks` returned in an earlier process for this directory: what checks wrote
    there, shown as it was before them (entries not of that shape are ignored).
    """

    def __init__(
        self,
        workdir: Path,
        *,
        unobserved: Iterable[str | Path] = (),
        contents: FileContents | None = None,
        hashes: Mapping[str, object] | None = None,
        by_checks: Mapping[str, object] | None = None,
    ) -> None:
        self.workdir = workdir.resolve()
        self.contents = contents
        self.unobserved = paths_inside(self.workdir, unobserved)
        """The relative paths of ``unobserved`` files inside the work directory."""
        self._claude_folders = tuple(
            folder + "/"
            for folder in own_folders_inside(str(self.workdir), environment_roots(os.environ))
        )
        self._cache: dict[str, tuple[_StatKey, str]] = {}
        self._by_checks: dict[str, tuple[str | None, str | None]] = {}
        """Path → (its hash before a check wrote it, the hash the check left); None: absent."""
        if hashes is not None and contents is None:
            self._cache = _handed_over(hashes)
        if by_checks is not None:
            self._by_checks = _writes_handed_over(by_checks)
        self._in_git = is_git_work_tree(self.workdir)

    def hashes(self) -> dict[str, list[int | str]]:
        """The hashes a later observer of this directory may reuse (its ``hashes``), as JSON
        data: ``{path: [size, mtime_ns, ctime_ns, inode, sha256]}``."""
        return {path: [*key, digest] for path, (key, digest) in self._cache.items()}

    def by_checks(self) -> dict[str, list[str | None]]:
        """What checks wrote, as a later observer of this directory takes it up (its
        ``by_checks``), as JSON data: ``{path: [its hash before, the hash the check left]}``,
        null for absent."""
        return {path: [was, left] for path, (was, left) in self._by_checks.items()}

    def snapshot(self) -> WorkspaceSnapshot:
        """Hash every observed file now; what checks wrote shows as it was before them."""
        return self._without_checks(self.disk())

    def disk(self) -> WorkspaceSnapshot:
        """Hash every observed file now, as it is (what checks wrote included)."""
        now = time.time()
        files: dict[str, str] = {}
        for relative in self._list_files():
            digest = self._hash(relative, now)
            if digest is not None:
                files[relative] = digest
        return WorkspaceSnapshot(files)

    def written_by_checks(self, before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> None:
        """Count what changed from ``before`` (a :meth:`snapshot`) to ``after`` (the
        :meth:`disk` once the gate's checks ran) as the checks' doing, not the agent's."""
        shown = self._without_checks(after).files
        for path in sorted({*before.files, *shown}):
            if before.files.get(path) != shown.get(path):
                earlier = self._by_checks.get(path)
                was = earlier[0] if earlier is not None else before.files.get(path)
                self._by_checks[path] = (was, after.files.get(path))

    def _without_checks(self, disk: WorkspaceSnapshot) -> WorkspaceSnapshot:
        if not self._by_checks:
            return disk
        files = dict(disk.files)
        for path, (was, left) in list(self._by_checks.items()):
            if files.get(path) != left:
                del self._by_checks[path]  # changed since the check: whoever did it, it shows
            elif was is None:
                files.pop(path, None)
            else:
                files[path] = was
        return WorkspaceSnapshot(files)

    def _list_files(self) -> list[str]:
        listed = _git_files(self.workdir) if self._in_git else None
        paths = listed if listed is not None else _walk_files(self.workdir)
        venvs = tuple(p[: -len("pyvenv.cfg")] for p in paths if p.endswith("/pyvenv.cfg"))
        return sorted(
            p
            for p in paths
            if not in_skipped_dir(p)
            and not p.startswith(venvs)
            and p not in self.unobserved
            and not p.startswith(self._claude_folders)
            and not written_by_claude_code(p)
        )

    def _hash(self, relative: str, now: float) -> str | None:
        path = self.workdir / relative
        try:
            info = path.lstat()
        except OSError:
            return None  # vanished between listing and hashing: it is not there
        if stat.S_ISLNK(info.st_mode):
            return "link:" + os.readlink(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        cached = self._cache.get(relative)
        if cached is not None and cached[0] == key:
            return cached[1]
        keep = self._keeping(relative, info.st_size)
        digest = _file_digest(path, keep)
        if self.contents is not None:
            self._kept(relative, digest, keep, info.st_size)
        if now - info.st_mtime_ns / 1e9 > _RACY_SECONDS:
            self._cache[relative] = (key, digest)
        return digest

    def _keeping(self, relative: str, size: int) -> bytearray | None:
        """A buffer for the file's bytes when :attr:`contents` wants them, else None."""
        if self.contents is None or not self.contents.wants(size) or self._linked(relative):
            return None
        return bytearray()

    def _kept(self, relative: str, digest: str, kept: bytearray | None, size: int) -> None:
        """Tell :attr:`contents` what became of the file's bytes."""
        assert self.contents is not None
        if kept is None and self._linked(relative):
            self.contents.skip(digest, "is reached through a symbolic link, never followed")
        else:
            self.contents.keep(digest, None if kept is None else bytes(kept), size)

    def _linked(self, relative: str) -> bool:
        """Whether a folder on the way to ``relative`` is now a symbolic link (replaced since
        it was listed): what a recording shows is never read through one."""
        folder = relative.rpartition("/")[0]
        try:
            return blocked_at(self.workdir, folder) is not None
        except OSError:
            return True


def _handed_over(hashes: Mapping[str, object]) -> dict[str, tuple[_StatKey, str]]:
    """The entries of an earlier :meth:`WorkspaceObserver.hashes` that have its shape (the
    data comes from a file: anything else is left out, never trusted)."""
    cache: dict[str, tuple[_StatKey, str]] = {}
    for path, entry in hashes.items():
        if not isinstance(entry, list) or len(entry) != 5 or not isinstance(entry[4], str):
            continue
        size, mtime, ctime, inode = entry[:4]
        if all(type(value) is int for value in (size, mtime, ctime, inode)):
            cache[path] = ((size, mtime, ctime, inode), entry[4])
    return cache


def _writes_handed_over(data: Mapping[str, object]) -> dict[str, tuple[str | None, str | None]]:
    """The entries of an earlier :meth:`WorkspaceObserver.by_checks` that have its shape
    (read from a file: anything else is left out)."""
    writes: dict[str, tuple[str | None, str | None]] = {}
    for path, entry in data.items():
        if isinstance(entry, list) and len(entry) == 2:
            was, left = entry
            if all(value is None or isinstance(value, str) for value in (was, left)):
                writes[path] = (was, left)
    return writes


def _file_digest(path: Path, keep: bytearray | None = None) -> str:
    """The file's SHA-256; its bytes are added to ``keep`` as they are read (when given)."""
    hasher = hashlib.sha256()
    try:
        # Checked again on the open descriptor: a FIFO swapped in since the lstat never hangs.
        with open_regular(path, follow_links=False) as handle:
            for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
                hasher.update(chunk)
                if keep is not None:
                    keep += chunk
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    return hasher.hexdigest()


GIT_SAFETY = ("-c", "core.fsmonitor=false")
"""What phasegate puts before every git command it runs in a work directory. A repository's
own config may name a program for git to start (``core.fsmonitor``: ``git ls-files`` and
``git status`` run it), and an agent confined to the work directory can write that config (a
repository it made with ``git init``): phasegate runs git outside any sandbox, so never that
program (docs/sandbox.md)."""


def git_in(workdir: Path, *args: str) -> list[str]:
    """The command line of ``git args`` run in ``workdir``, with :data:`GIT_SAFETY`."""
    return ["git", *GIT_SAFETY, "-C", str(workdir), *args]


def is_git_work_tree(workdir: Path) -> bool:
    """Whether ``workdir`` is inside a git work tree (False if git is missing or fails)."""
    if not _may_be_in_git(workdir):
        return False  # no need to start git to hear it say no
    try:
        done = subprocess.run(
            git_in(workdir, "rev-parse", "--is-inside-work-tree"),
            capture_output=True,
            text=True,
            timeout=_GIT_CHECK_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def _may_be_in_git(workdir: Path) -> bool:
    """False only when git cannot see a work tree here: no ``.git`` in ``workdir`` or above,
    and no ``GIT_DIR``/``GIT_WORK_TREE`` in the environment pointing elsewhere."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    folder = workdir.resolve()
    return any((parent / ".git").exists() for parent in (folder, *folder.parents))


def _git_files(workdir: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files below ``workdir`` (None if git fails)."""
    try:
        done = subprocess.run(
            git_in(workdir, "ls-files", "-z", "--cached", "--others", "--exclude-standard"),
            capture_output=True,
            timeout=_GIT_LIST_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    # ls-files lists deleted tracked files too; only what exists now is in the snapshot.
    return sorted({name for name in names if name and os.path.lexists(workdir / name)})


def _walk_files(workdir: Path) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(workdir):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        base = Path(root).relative_to(workdir)
        found.extend((base / name).as_posix() for name in files)
        # os.walk lists symlinks to directories under dirs; record them as links.
        found.extend((base / d).as_posix() for d in dirs if os.path.islink(os.path.join(root, d)))
    return found


def in_skipped_dir(relative: str) -> bool:
    """Whether a relative POSIX path lies below one of :data:`SKIPPED_DIRS`."""
    return any(part in SKIPPED_DIRS for part in relative.split("/")[:-1])


def paths_inside(workdir: Path, files: Iterable[str | Path]) -> frozenset[str]:
    """Where each of ``files`` lies inside ``workdir`` (resolved), as relative POSIX paths.

    A file may be named through a symbolic link (a linked directory on the way, or the file
    itself a link), so each is taken as written, with its directory resolved, and fully
    resolved; every one of those that falls inside ``workdir`` counts. Files elsewhere are
    left out.
    """
    inside: set[str] = set()
    for file in files:
        written = Path(os.path.abspath(file))
        candidates = [written]
        # A link loop (RuntimeError on Python 3.11) leaves the path as written to go by.
        with contextlib.suppress(OSError, RuntimeError):
            candidates += [written.parent.resolve() / written.name, written.resolve()]
        for candidate in candidates:
            if candidate != workdir and candidate.is_relative_to(workdir):
                inside.add(candidate.relative_to(workdir).as_posix())
    return frozenset(inside)


def work_directory(path: str | Path) -> Path:
    """``path`` resolved, once it is known to be a directory the agent can work in."""
    root = Path(path)
    if not root.is_dir():
        raise UsageError(
            f"work directory {root} does not exist or is not a directory", option="workdir"
        )
    return root.resolve()
