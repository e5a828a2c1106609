"""Keeping files inside a folder: the files a definition names, read from the folder it was
loaded from; the folders phasegate writes in, never entered through a symbolic link.

**Reading.** A task file names other files: schema files, files a schema's ``$ref`` points
at, prompt files, stage task files. Each must lie inside the *files root*, the folder of the
file being loaded unless the loading call names another (``files_root``), so a task from
elsewhere cannot read ``/etc/passwd`` into a prompt. Symlinks are resolved before the check,
as the file that is read is the one they point at. :func:`resolve_inside` is that check,
for every path someone else names (a definition, an HTTP request, a stage check, an agent's
tool call, git's metadata).

**Writing.** phasegate writes below a folder it was given (a work directory's
``.phasegate/``, a batch's ``--out``): state files, baselines, kept results, lock files,
unit results. The folder itself is taken as named (the user chose it), but every folder
*below* it must be a real folder: a symbolic link there (planted by a project, an agent or
an artifact) may lead anywhere, so it is refused (:class:`~phasegate.errors.LinkedPathError`
names it) and never written, replaced or deleted through. :func:`inside_folder` checks (and
makes) the folders step by step with ``lstat``; lock files and logs open with ``O_NOFOLLOW``
(:func:`open_appending`);
:func:`remove_inside` deletes relative to an open descriptor of the folder, so a link inside
is removed as a link and what it points at is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from phasegate._files.limits import NotRegularFileError, file_kind
from phasegate._files.models import OptionValueError
from phasegate._files.portable import (
    BINARY,
    CLOEXEC,
    DIRECTORY,
    FOLDER_DESCRIPTORS,
    NOFOLLOW,
    NONBLOCK,
    lock_exclusive,
)
from phasegate.errors import LinkedPathError

FILES_ROOT_OPTION = "files_root"
"""The keyword argument of the loading functions that widens the files root."""


class OutsideFolderError(ValueError):
    """A path that leads outside the folder it must stay in, once symbolic links are
    resolved (:func:`resolve_inside`); ``resolved`` is where it leads."""

    def __init__(self, path: str | Path, folder: Path, resolved: Path, called: str) -> None:
        super().__init__(f"{path} resolves to {resolved}, outside {called} {folder}")
        self.path, self.folder, self.resolved = path, folder, resolved


def resolve_inside(
    folder: Path, path: str | Path, *, strict: bool = False, called: str = "the folder"
) -> Path:
    """``folder / path`` with every symbolic link resolved (an absolute ``path`` stays
    itself), when that is ``folder`` (itself resolved) or lies inside it.

    The one place a path named by a user, a definition, a request or an agent is checked to
    stay inside a folder. Raises :class:`OutsideFolderError` when it leads out (its message
    names the folder as ``called``, such as ``"the work directory"``), and
    :class:`OSError` when it cannot be resolved: ``ELOOP`` for a symbolic link loop (which
    Python 3.11 reports as ``RuntimeError``), ``EINVAL`` for a NUL character, and with
    ``strict`` a :class:`FileNotFoundError` when it does not exist.
    """
    if "\x00" in str(path):
        raise OSError(errno.EINVAL, "a NUL character in the path", str(path).replace("\x00", ""))
    base = folder.resolve()
    try:
        resolved = (base / path).resolve(strict=strict)
    except RuntimeError:
        raise OSError(errno.ELOOP, "too many levels of symbolic links", str(path)) from None
    if resolved != base and not resolved.is_relative_to(base):
        raise OutsideFolderError(path, base, resolved, called)
    return resolved


def confined_path(path: Path, root: Path | None, *, what: str) -> Path:
    """``path`` itself, when it lies inside ``root`` once symlinks are resolved (anywhere
    if ``root`` is None).

    Raises OptionValueError (option ``files_root``) naming ``what`` the file is for, and a
    ValueError for a path that cannot be resolved (a symlink loop, a NUL character).
    """
    try:
        resolve_inside(root if root is not None else path.parent, path)
    except OSError as exc:
        raise ValueError(f"{what} {str(path)!r} cannot be used as a path: {exc}") from None
    except OutsideFolderError as exc:
        if root is None:
            return path
        raise OptionValueError(
            f"{what} {path} is outside {exc.folder}, the folder files may be read from; move "
            "it into that folder, or load with a files root that holds it",
            option=FILES_ROOT_OPTION,
        ) from None
    return path


def blocked_at(
    root: Path, directory: str, *, create: bool = False, root_name: str = "the work directory"
) -> str | None:
    """Why ``directory`` (relative POSIX, "" for ``root`` itself) cannot be entered safely
    from ``root``, or None.

    Every step down from ``root`` must be a real directory, not a link that may lead out of
    it. A missing step is made when ``create`` is set, and raises FileNotFoundError
    otherwise. ``root_name`` is how the reason names ``root``.
    """
    if not directory:
        return None
    parts = directory.split("/")
    for depth in range(1, len(parts) + 1):
        step = "/".join(parts[:depth])
        try:
            mode = (root / step).lstat().st_mode
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                (root / step).mkdir()
            mode = (root / step).lstat().st_mode
        if stat.S_ISLNK(mode):
            return f"{step} is a symbolic link; it is not followed out of {root_name}"
        if not stat.S_ISDIR(mode):
            return f"{step} is not a directory"
    return None


def inside_folder(root: Path, directory: str, *, create: bool = True) -> Path:
    """``root / directory`` once every folder below ``root`` on the way is a real folder
    (made when missing, unless ``create`` is False).

    Raises :class:`~phasegate.errors.LinkedPathError` naming the link (or the file in the
    way), and OSError when a folder cannot be made or looked at.
    """
    try:
        blocked = blocked_at(root, directory, create=create, root_name=str(root))
    except FileNotFoundError:
        return root / directory  # nothing there yet, and nothing to make: nothing followed
    if blocked is not None:
        raise LinkedPathError(root, blocked)
    return root / directory


def open_appending(path: Path, mode: int = 0o644) -> int:
    """A descriptor of ``path`` open for appending (made with ``mode`` when missing), never
    through a symbolic link (``O_NOFOLLOW``: a link planted under its name is refused with a
    :class:`~phasegate.errors.LinkedPathError`, not followed to make a file elsewhere), and
    only to a regular file: a FIFO planted there is refused at once
    (:class:`~phasegate._files.limits.NotRegularFileError`), not waited on."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW | CLOEXEC | NONBLOCK | BINARY
    if not NOFOLLOW and path.is_symlink():  # no O_NOFOLLOW (Windows): asked first
        raise LinkedPathError(path.parent, f"{path.name} is a symbolic link; it is not followed")
    try:
        descriptor = os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and path.is_symlink():
            raise LinkedPathError(
                path.parent, f"{path.name} is a symbolic link; it is not followed"
            ) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise NotRegularFileError(exc.errno, "is a FIFO (named pipe), not a regular file",
                                      str(path)) from None  # fmt: skip
        raise
    try:
        kind = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(kind):
            raise NotRegularFileError(
                errno.EINVAL, f"is {file_kind(kind)}, not a regular file", str(path)
            )
        if NONBLOCK:
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_lock(path: Path) -> TextIO:
    """The lock file ``path`` open for appending, as :func:`open_appending` opens it."""
    return os.fdopen(open_appending(path), "a", encoding="utf-8")


@contextlib.contextmanager
def held_lock(path: Path) -> Iterator[None]:
    """Hold the lock file ``path`` (opened as :func:`open_lock` does) exclusively while the
    block runs, in any process, and remove it when the block ends, however it ends.

    The file is removed while still locked. A waiter that opened it before then gets the lock
    on a file no longer under that name, sees so (its descriptor and the name are no longer
    the same file) and opens the name again: so no two holders ever hold "the same" lock, and
    no lock file is left behind. A killed holder leaves its file, which the next holder
    takes and removes in turn.
    """
    while True:
        handle = open_lock(path)
        try:
            lock_exclusive(handle.fileno())
            if _same_file(handle.fileno(), path):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()  # removed (or replaced) by the holder before us: take the new one
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a name, not followed: a link planted there is what goes
        handle.close()  # closing releases the lock


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether ``path`` (not followed) is the file open as ``descriptor``."""
    try:
        named = os.lstat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def remove_inside(folder: Path, name: str) -> None:
    """Remove ``folder / name`` (a file, a link, or a folder with everything in it), working
    from an open descriptor of ``folder`` opened without following a link: a link is removed
    as a link and what it points at stays. Errors are ignored (what is left is left).

    Without descriptors of folders (Windows) it works from the paths, looked at with
    ``lstat`` first: a link is still removed as a link, but one swapped in between the look
    and the removal is not caught."""
    if not FOLDER_DESCRIPTORS:
        _remove_by_path(folder, name)
        return
    try:
        descriptor = os.open(folder, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC)
    except OSError:
        return  # no folder, or a link: nothing below it is ours to remove
    try:
        mode = os.lstat(name, dir_fd=descriptor).st_mode
        if stat.S_ISDIR(mode):
            shutil.rmtree(name, dir_fd=descriptor, ignore_errors=True)
        else:
            os.unlink(name, dir_fd=descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _remove_by_path(folder: Path, name: str) -> None:
    """:func:`remove_inside` for a platform without descriptors of folders."""
    with contextlib.suppress(OSError):
        if os.path.islink(folder) or not folder.is_dir():
            return  # a link: nothing below it is ours to remove
        target = folder / name
        mode = os.lstat(target).st_mode
        if stat.S_ISDIR(mode):
            shutil.rmtree(target, ignore_errors=True)
        else:
            os.unlink(target)
