"""Protected paths (``protect: [globs]``): which glob protects a path, and what to say when
the agent writes one, changes one on disk, or changes one during a pipeline stage.

**Which paths a glob protects.** Globs are matched with :func:`~phasegate._files.globs.
glob_matches` against the path relative to the work directory (:func:`~phasegate.validators.
paths.relative_to_workdir`: absolute or relative, ``..``, ``./``, ``//`` and Windows
separators resolved the same way everywhere). A glob that matches a folder protects
everything in it: ``tests`` and ``tests/**`` both protect ``tests/a.py``, and ``tests``
protects the folder itself too. A path outside the work directory is never protected (the
outside-path rules judge it).

**Symbolic links.** When the work directory exists on this machine, the path is resolved
through the links on disk first, so ``docs/t/a.py`` is protected by ``tests/**`` when
``docs/t`` links to ``../tests``, and a path whose link leads outside the work directory is
outside (not protected here). ``..`` is resolved by name first, then the links (as Node's
``path.resolve`` does before a file is opened). A path a tool names is resolved to the end
(writing through a link to a file writes the file it points to); a path that changed on disk
only through its folders (a link that changed is itself the change, not its target). This
is the one place the validators look at the disk: a few ``lstat`` calls per path, never
reading or writing a file.

**Case.** Names compare case-insensitively when the work directory is a Windows path (as in
:mod:`~phasegate.validators.paths`) or lies on a case-insensitive file system (detected once
per work directory: its name with the case swapped is the same folder); otherwise
case-sensitively, so on Linux ``Tests/a.py`` is another file than ``tests/a.py`` and is not
protected by ``tests/**``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from phasegate._files.globs import glob_matches
from phasegate.evidence.confinement import OUTSIDE_REFUSAL
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.validators.issues import Issue, IssueCode, shorten
from phasegate.validators.paths import is_windows_path, relative_to_workdir

if TYPE_CHECKING:
    from phasegate.validators.stage_checks import CheckOutcome

WRITE_TOOL_PATHS: Mapping[str, str] = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
"""The file-writing tools a protect rule refuses, and the input key naming their file."""

SHOWN_PATH = 200
"""Characters of a path the model wrote that a refusal quotes."""


def protected_glob(path: str, globs: Sequence[str], workdir: str) -> str | None:
    """The first of ``globs`` that protects ``path`` (as a tool names it: absolute, or
    relative to ``workdir``), or None when none does or the path lies outside ``workdir``.

    See the module docstring for folders, symbolic links and case.
    """
    return _protected(path, globs, workdir, follow_last=True)


def protected_changes(paths: Iterable[str], globs: Sequence[str], workdir: str) -> dict[str, str]:
    """Each of ``paths`` (changed on disk, relative to ``workdir``) that a glob protects,
    mapped to that glob."""
    if not globs:
        return {}
    found: dict[str, str] = {}
    for path in paths:
        glob = _protected(path, globs, workdir, follow_last=False)
        if glob is not None:
            found[path] = glob
    return found


def write_refusal(
    tool_name: str,
    tool_input: Mapping[str, object],
    globs: Sequence[str],
    workdir: str,
    *,
    confined: bool = False,
    own: Sequence[str] = (),
) -> str | None:
    """Why a call of ``tool_name`` is refused, when it is a file-writing tool (Edit,
    MultiEdit, Write, NotebookEdit) whose path a glob protects, or, when the run is
    ``confined`` (a sandbox: docs/sandbox.md), whose path lies outside ``workdir`` (through
    links too), is not a path at all, or is (or lies in) one of ``own``, phasegate's own
    record of the run in the work directory (absolute paths); None otherwise.

    The text names the path as the model wrote it (shortened, control characters escaped),
    the glob or the work directory, and what to do instead.
    """
    key = WRITE_TOOL_PATHS.get(tool_name)
    if key is None:
        return None
    value = tool_input.get(key)
    if confined:
        outside = _outside_refusal(value, workdir) or _own_refusal(value, workdir, own)
        if outside is not None:
            return outside
    if not isinstance(value, str) or not globs:
        return None
    glob = protected_glob(value, globs, workdir)
    if glob is None:
        return None
    return (
        f"{_shown(value)} is protected by `{glob}`: this task must not change it. "
        "Leave it as it is and reach the goal by changing files the task does not protect "
        "(for a protected test, change the code under test)."
    )


def _outside_refusal(value: object, workdir: str) -> str | None:
    """Why a confined run's file tool may not write ``value``: it is no path, or it lies
    outside the work directory (by name, or through a link on disk)."""
    if not isinstance(value, str) or not value.strip():
        return "The file to write is missing from the call: nothing was written."
    relative = relative_to_workdir(value, workdir)
    if relative is not None and not is_windows_path(workdir) and os.path.isdir(workdir):
        with contextlib.suppress(OSError, ValueError):
            relative = _through_links(os.path.join(workdir, relative), workdir, follow_last=True)
    if relative is not None:
        return None
    return (
        f"{_shown(value)} {OUTSIDE_REFUSAL} (sandbox): nothing was written. Write only files "
        "inside the work directory."
    )


def _own_refusal(value: object, workdir: str, own: Sequence[str]) -> str | None:
    """Why a confined run's file tool may not write ``value``: it is, or lies in, one of
    phasegate's own files (``own``), by name or through a link."""
    if not own or not isinstance(value, str) or is_windows_path(workdir):
        return None
    relative = relative_to_workdir(value, workdir)
    if relative is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        real = os.path.realpath(os.path.join(workdir, relative))
        for path in own:
            mine = os.path.realpath(path)
            if real == mine or real.startswith(mine.rstrip(os.sep) + os.sep):
                return (
                    f"{_shown(value)} is phasegate's own record of this run (its event log "
                    "or state): nothing was written. Leave it alone, and write your work "
                    "elsewhere in the work directory."
                )
    return None


_ANY_NAME = "\x01"
"""A name no glob names on purpose: a glob that matches it inside a folder (``tests/**``,
``tests/*``) matches whatever the folder will hold."""


def protected_paths(globs: Sequence[str], workdir: str) -> list[str]:
    """The files and folders under ``workdir`` (absolute) that ``globs`` protect, a folder
    standing for everything in it: what a sandbox makes read-only. Only what exists now: a
    file added later under an unprotected folder is the gate's to catch."""
    if not globs or not os.path.isdir(workdir):
        return []
    found: list[str] = []
    root = os.path.realpath(workdir)
    for folder, subfolders, files in os.walk(root):
        for name in sorted(subfolders):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            # The folder itself, or anything it could hold (tests/** matches no folder named
            # tests, but all it holds, now and later): the folder, whole.
            if _matching(relative, globs, fold=False) or _matching(
                f"{relative}/{_ANY_NAME}", globs, fold=False
            ):
                found.append(path)
        # A protected folder is read-only as a whole: nothing inside needs naming.
        subfolders[:] = [n for n in subfolders if os.path.join(folder, n) not in found]
        for name in sorted(files):
            path = os.path.join(folder, name)
            if _matching(os.path.relpath(path, root).replace(os.sep, "/"), globs, fold=False):
                found.append(path)
    return found


def protected_issues(
    phase: int, phase_name: str, changed: Mapping[str, str], total: WorkspaceDiff
) -> list[Issue]:
    """``protected_path_changed``: one issue per protected path in ``changed`` (path →
    glob), worded by how ``total`` (the run's changes) has it: added, modified or deleted."""
    issues: list[Issue] = []
    for path, glob in sorted(changed.items()):
        how = "added" if path in total.added else "deleted" if path in total.deleted else "modified"
        issues.append(
            Issue.of(
                IssueCode.PROTECTED_PATH_CHANGED,
                f"{path} is protected by `{glob}`, but it was {how} (phase {phase}, "
                f"{phase_name}): this task must not change it, whatever tool or command does.",
                phase=phase,
                field="files",
                provided=path,
                requirement=(
                    f"Put {path} back exactly as it was before the run, and reach the goal by "
                    "changing files the task does not protect."
                ),
                path=path,
            )
        )
    return issues


def describe_protect(globs: Sequence[str]) -> str:
    """What a stage's ``protect`` requires, worded like a stage check's description."""
    # Imported here, as below: a task's gate uses the rest of this module, and the stage
    # checks (with the check models) would add to every plugin Stop hook's start-up.
    from phasegate.validators.stage_checks import listing

    return f"nothing matching {listing([f'`{g}`' for g in globs])} is added, modified or deleted"


def protect_outcome(globs: Sequence[str], diff: WorkspaceDiff, workdir: str) -> CheckOutcome:
    """The exit check of a stage with ``protect``: no path a glob protects was added,
    modified or deleted during the stage (``diff``)."""
    from phasegate.validators.stage_checks import CheckOutcome, listing

    changed = protected_changes(diff.paths, globs, workdir)
    description = describe_protect(globs)
    if not changed:
        return CheckOutcome(
            kind="protect", description=description, ok=True, detail="no protected path changed"
        )
    named = [f"{path} (protected by `{glob}`)" for path, glob in sorted(changed.items())]
    return CheckOutcome(
        kind="protect",
        description=description,
        ok=False,
        detail=f"changed during the stage: {listing(named)}",
        remedy="put each of them back exactly as it was when the stage began, and change "
        "other files instead",
    )


def _protected(path: str, globs: Sequence[str], workdir: str, *, follow_last: bool) -> str | None:
    if not globs:
        return None
    relative = relative_to_workdir(path, workdir)
    windows = is_windows_path(workdir)
    if not windows and os.path.isdir(workdir):
        # An absolute path may reach the work directory through a link (/tmp is
        # /private/tmp on macOS): its real place decides, as it does for a relative one.
        absolute = path.strip().replace("\\", "/")
        if relative is not None:
            absolute = os.path.join(workdir, relative)
        elif not os.path.isabs(absolute):
            return None
        # A name no file can have (a NUL byte) has no links to follow: kept as written.
        with contextlib.suppress(OSError, ValueError):
            relative = _through_links(absolute, workdir, follow_last=follow_last)
        fold = relative is not None and _case_insensitive(os.path.realpath(workdir))
    else:
        fold = windows
    if relative is None or relative == ".":
        return None
    return _matching(relative.casefold() if fold else relative, globs, fold=fold)


def _matching(relative: str, globs: Sequence[str], *, fold: bool) -> str | None:
    """The first glob matching ``relative`` or one of the folders it lies in."""
    parts = relative.split("/")
    # The folders first: "tests" protects "tests/a.py" as it protects "tests".
    candidates = ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]
    for glob in globs:
        pattern = glob.casefold() if fold else glob
        if any(glob_matches(pattern, candidate) for candidate in candidates):
            return glob
    return None


def _through_links(absolute: str, workdir: str, *, follow_last: bool) -> str | None:
    """``absolute`` with the links on disk resolved (the last name only when
    ``follow_last``), relative to the real work directory; None when that is outside."""
    root = os.path.realpath(workdir)
    if follow_last:
        real = os.path.realpath(absolute)
    else:
        head, name = os.path.split(os.path.normpath(absolute))
        real = os.path.join(os.path.realpath(head), name)
    inside = os.path.relpath(real, root)
    if inside == os.pardir or inside.startswith(os.pardir + os.sep) or os.path.isabs(inside):
        return None
    return inside.replace(os.sep, "/")


def names_ignore_case(workdir: str) -> bool:
    """Whether names in ``workdir`` compare case-insensitively: it is a Windows path, or a
    folder on this machine on a file system that ignores case (macOS's and Windows'
    defaults). What the reconciliation compares paths by, as this module does."""
    if is_windows_path(workdir):
        return True
    return os.path.isdir(workdir) and _case_insensitive(os.path.realpath(workdir))


@functools.lru_cache(maxsize=64)
def _case_insensitive(root: str) -> bool:
    """Whether the file system holding the folder ``root`` (a real path) ignores case: the
    nearest name with a cased letter, its case swapped, is the same folder."""
    head, name = os.path.split(root)
    while name and name.swapcase() == name:
        head, name = os.path.split(head)
    if not name:
        return False  # no cased letter to try: treat it as case-sensitive
    try:
        return os.path.samefile(os.path.join(head, name), os.path.join(head, name.swapcase()))
    except OSError:
        return False


def _shown(path: str) -> str:
    """``path`` as a refusal quotes it: shortened, with control characters escaped."""
    short = shorten(path, SHOWN_PATH)
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in short)
