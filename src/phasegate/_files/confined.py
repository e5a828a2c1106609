"""Keeping the files a task or pipeline names inside the folder it was loaded from.

A task file names other files: schema files, files a schema's ``$ref`` points at, prompt
files, stage task files. Each must lie inside the *files root*, the folder of the file being
loaded unless the loading call names another (``files_root``), so a task from elsewhere
cannot read ``/etc/passwd`` into a prompt. Symlinks are resolved before the check, as the
file that is read is the one they point at.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._files.models import OptionValueError

FILES_ROOT_OPTION = "files_root"
"""The keyword argument of the loading functions that widens the files root."""


def confined_path(path: Path, root: Path | None, *, what: str) -> Path:
    """``path`` itself, when it lies inside ``root`` once symlinks are resolved (anywhere
    if ``root`` is None).

    Raises OptionValueError (option ``files_root``) naming ``what`` the file is for, and a
    ValueError for a path that cannot be resolved (a symlink loop, a NUL character).
    """
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL in the name
        raise ValueError(f"{what} {str(path)!r} cannot be used as a path: {exc}") from None
    if root is None:
        return path
    base = root.resolve()
    if resolved == base or resolved.is_relative_to(base):
        return path
    raise OptionValueError(
        f"{what} {path} is outside {base}, the folder files may be read from; move it into "
        "that folder, or load with a files root that holds it",
        option=FILES_ROOT_OPTION,
    )
