"""Three-way reconciliation of files: what the tools said, what the disk shows, what the
answer claims.

* ``tool_reported``: paths named by successful calls of file-editing tools (Edit, Write, ...).
* ``disk_changed``: paths that really changed in the work directory.
* ``claimed``: paths the output phase's answer lists in its ``claims_files`` field (None when
  the task has no such field).

Their differences are the findings: a claim the disk does not back (``claimed_not_changed``),
a change the claim leaves out (``changed_not_claimed``), an edit a tool reported that left the
disk as it was (``edit_not_on_disk``), and a change no editing tool explains, e.g. one made by
a shell command (``change_without_tool``). The first two also fail the gate when the task
names a claims field; the last two are reported, not judged, since shell commands are
legitimate work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict, Field

from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.paths import relative_to_workdir
from phasegate.validators.tools import MUTATING_TOOLS, CallRecord

_FILE_KEYS = ("file_path", "notebook_path")


class FileReconciliation(BaseModel):
    """The three sets of files and their differences (relative POSIX paths, sorted)."""

    model_config = ConfigDict(frozen=True)

    tool_reported: list[str] = Field(description="Named by successful file-editing tool calls.")
    disk_changed: list[str] = Field(description="Changed on disk (added, modified or deleted).")
    claimed: list[str] | None = Field(
        default=None, description="Listed in the answer's claims field; null without one."
    )
    changed_not_claimed: list[str] = Field(default_factory=list)
    claimed_not_changed: list[str] = Field(default_factory=list)
    edit_not_on_disk: list[str] = Field(
        default_factory=list, description="A tool reported an edit; the disk did not change."
    )
    change_without_tool: list[str] = Field(
        default_factory=list, description="Changed on disk; no file-editing tool names it."
    )

    @property
    def consistent(self) -> bool:
        """True when all three sources agree."""
        return not (
            self.changed_not_claimed
            or self.claimed_not_changed
            or self.edit_not_on_disk
            or self.change_without_tool
        )


Spelling = Callable[[str], str]
"""A path as the disk spells it (:func:`disk_spelling`)."""


def disk_spelling(disk: Iterable[str], *, fold: bool) -> Spelling:
    """How a path a tool or a claim names is spelled on disk: on a file system that ignores
    case (``fold``: macOS's and Windows' defaults), ``App.py`` is the ``app.py`` among
    ``disk`` (the paths that changed); elsewhere, and for a path not among them, as
    written. So a name differing from the file's only in case is that file, as it is to the
    file system, and not a claim or an edit of nothing."""
    if not fold:
        return _as_written
    spelled = {path.casefold(): path for path in sorted(disk)}
    return lambda path: spelled.get(path.casefold(), path)


def _as_written(path: str) -> str:
    return path


def tool_reported_paths(calls: Iterable[CallRecord], workdir: str) -> list[str]:
    """Paths inside ``workdir`` named by successful calls of file-editing tools."""
    return sorted({path for record in calls for path in _edited_paths(record, workdir)})


def edit_positions(calls: Iterable[CallRecord], workdir: str) -> dict[str, int]:
    """Each path inside ``workdir`` mapped to the position of the last successful call of a
    file-editing tool that named it."""
    return {path: record.position for record in calls for path in _edited_paths(record, workdir)}


def _edited_paths(record: CallRecord, workdir: str) -> Iterator[str]:
    """The paths inside ``workdir`` a successful file-editing call names."""
    if not record.ok or record.call.name not in MUTATING_TOOLS:
        return
    for key in _FILE_KEYS:
        value = record.call.input.get(key)
        relative = relative_to_workdir(value, workdir) if isinstance(value, str) else None
        if relative is not None and relative != ".":
            yield relative


def reconcile(
    tool_reported: Sequence[str],
    disk_changed: Sequence[str],
    claimed: Sequence[str] | None,
    *,
    claims_about: Sequence[str] | None = None,
) -> FileReconciliation:
    """Compare the three sets. Claims are compared with ``claims_about`` when given: a
    summary's claims are about the whole run's changes, not only the phase it is made in."""
    tools, disk = set(tool_reported), set(disk_changed)
    claims = set(claimed) if claimed is not None else None
    claimed_against = set(claims_about) if claims_about is not None else disk
    return FileReconciliation(
        tool_reported=sorted(tools),
        disk_changed=sorted(disk),
        claimed=sorted(claims) if claims is not None else None,
        changed_not_claimed=sorted(claimed_against - claims) if claims is not None else [],
        claimed_not_changed=sorted(claims - claimed_against) if claims is not None else [],
        edit_not_on_disk=sorted(tools - disk),
        change_without_tool=sorted(disk - tools),
    )


RECONCILIATION_CODES = frozenset(
    {
        IssueCode.CHANGED_NOT_CLAIMED,
        IssueCode.CLAIMED_NOT_CHANGED,
        IssueCode.EDIT_NOT_ON_DISK,
        IssueCode.CHANGE_WITHOUT_TOOL,
    }
)
"""The codes of :func:`reconciliation_findings`: claims, tools and disk disagreeing."""


def reconciliation_findings(files: FileReconciliation) -> list[Issue]:
    """Each difference as an issue with its own code (for reports, not for the gate)."""
    findings: list[tuple[IssueCode, list[str], str]] = [
        (IssueCode.CHANGED_NOT_CLAIMED, files.changed_not_claimed, "changed on disk, not claimed"),
        (IssueCode.CLAIMED_NOT_CHANGED, files.claimed_not_changed, "claimed, not changed on disk"),
        (IssueCode.EDIT_NOT_ON_DISK, files.edit_not_on_disk, "edited by a tool, unchanged on disk"),
        (
            IssueCode.CHANGE_WITHOUT_TOOL,
            files.change_without_tool,
            "changed on disk, no editing tool names it",
        ),
    ]
    return [
        Issue.of(code, f"{path}: {what}.", field="files", provided=path, path=path)
        for code, paths, what in findings
        for path in paths
    ]
