"""Writing a recording's folder whole, and replacing only what may be replaced.

A folder may take a recording when it does not exist, is empty, or holds an earlier recording
(its ``recording.json`` a regular file): :func:`usable_folder` says so before a run starts and
raises :class:`~phasegate.errors.RecordingFolderError` otherwise, touching nothing.
:func:`write_folder` makes the new recording in a sibling folder (each file written and
fsynced with :func:`~phasegate._files.atomic.write_synced`, inside folders checked by
:func:`~phasegate._files.confined.inside_folder`) named by
:func:`~phasegate._files.scratch.make_scratch`, so one a killed process left is swept by the
next write there (:func:`~phasegate._files.scratch.sweep_dead`), moves an earlier recording
aside, renames
the new one into place, and only then removes the earlier one
(:func:`~phasegate._files.confined.remove_inside`, which follows no link). A write that fails
leaves the earlier recording where it was, and removes its own sibling folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate._files.atomic import fsync_directory, write_synced
from phasegate._files.confined import inside_folder, remove_inside
from phasegate._files.scratch import make_scratch, sweep_dead
from phasegate.errors import RecordingFolderError
from phasegate.modes import RECORDING_PAGE
from phasegate.recording.files import MANIFEST, manifest_bytes

RECORDING_SCRATCH = "phasegate-recording"
"""The prefix of the folders a recording is built in and an earlier one set aside in, beside
its place; those of a process that died are swept by the next recording written there."""

PageWriter = Callable[[Path], bytes | None]
"""Renders the page of the recording in a folder (every other file written): its bytes, or
None for no page."""


def usable_folder(folder: str | Path) -> Path:
    """``folder``, absolute, once it may take a recording; else
    :class:`~phasegate.errors.RecordingFolderError` (nothing is touched)."""
    path = Path(os.path.abspath(folder))
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise RecordingFolderError(path, f"it cannot be looked at ({exc.strerror})") from None
    if stat.S_ISLNK(mode):
        raise RecordingFolderError(path, "it is a symbolic link, which is not followed")
    if not stat.S_ISDIR(mode):
        raise RecordingFolderError(path, "it is not a folder")
    try:
        with os.scandir(path) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        raise RecordingFolderError(path, f"it cannot be read ({exc.strerror})") from None
    if not empty and not _is_recording(path):
        raise RecordingFolderError(path, f"it is not empty and holds no {MANIFEST}")
    return path


def write_folder(
    folder: Path,
    manifest: dict[str, Any],
    files: Mapping[str, bytes],
    *,
    page: PageWriter | None = None,
) -> bool:
    """Write ``files`` (relative POSIX names) and ``manifest`` as the folder ``folder``, whole
    or not at all; ``page`` then renders ``index.html`` from them (a page that cannot be
    rendered is left out: the recording matters more, and ``phasegate view`` writes it
    again). Whether a page was written.

    Raises :class:`~phasegate.errors.RecordingFolderError` when ``folder`` can no longer take
    a recording, and :class:`OSError` when it cannot be written (an earlier recording stays).
    """
    folder = usable_folder(folder)
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    sweep_dead(RECORDING_SCRATCH, root=parent)
    building = make_scratch(RECORDING_SCRATCH, root=parent)
    aside: Path | None = None
    try:
        os.chmod(building, 0o755)
        for name, data in files.items():
            directory, _, _ = name.rpartition("/")
            inside_folder(building, directory)
            write_synced(building / name, data)
        write_synced(building / MANIFEST, manifest_bytes(manifest))
        written = page is not None and _write_page(building, page)
        for directory in {name.rpartition("/")[0] for name in files}:
            fsync_directory(building / directory)
        if os.path.lexists(folder):
            usable_folder(folder)  # still an earlier recording or empty: it may go
            aside = make_scratch(RECORDING_SCRATCH, root=parent)
            os.replace(folder, aside)
        os.replace(building, folder)
        fsync_directory(parent)
    except BaseException:
        remove_inside(parent, building.name)
        if aside is not None and not os.path.lexists(folder):
            with contextlib.suppress(OSError):
                os.replace(aside, folder)
        elif aside is not None:
            remove_inside(parent, aside.name)
        raise
    if aside is not None:
        remove_inside(parent, aside.name)
    return written


def _write_page(building: Path, page: PageWriter) -> bool:
    """Render the page from the files written and write it; False when it cannot be
    rendered (``phasegate view`` writes it again from the other files)."""
    try:
        html = page(building)
    except Exception:  # a page that fails must not cost the run its recording
        html = None
    if html is None:
        return False
    write_synced(building / RECORDING_PAGE, html)
    return True


def _is_recording(folder: Path) -> bool:
    try:
        return stat.S_ISREG((folder / MANIFEST).lstat().st_mode)
    except OSError:
        return False
