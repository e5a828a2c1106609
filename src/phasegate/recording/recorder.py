"""The recorder a recorded run carries: what it keeps as the run goes, and the writing.

A runner given ``record=`` makes a :class:`Recorder` before the run starts (so a folder that
cannot take a recording is refused before any agent works), hands its
:attr:`Recorder.contents` to the work directory's observer, adds each gate check with
:meth:`Recorder.check`, and when the run ends, however it ends, calls :meth:`Recorder.write`
with what the run became (:class:`~phasegate.recording.model.RunRecord`). A parallel
pipeline's branches are recorded by recorders :meth:`Recorder.branch` makes: each keeps its
own checks and hands its branch's record back, and the run writes them all as one recording.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.metadata
import warnings
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from phasegate.errors import PhasegateError, PhasegateWarning
from phasegate.recording.files import recording_files
from phasegate.recording.folder import PageWriter, usable_folder, write_folder
from phasegate.recording.model import CheckRecord, IssueRecord, RunRecord
from phasegate.telemetry.events import GateTrigger
from phasegate.workspace.contents import FileContents


def run_page(folder: Path) -> bytes:
    """The page of the recording in ``folder`` (:func:`~phasegate.recording.page.render_page`),
    as the bytes of ``index.html``."""
    # Imported here: the page's renderer is needed only when a recording is written, and a
    # process that only notes checks (the plugin's Stop hook) should not pay for it.
    from phasegate.recording.page import render_page

    return render_page(folder).encode("utf-8")


class Recorder:
    """Records one run into ``folder`` (refused at once when it cannot take a recording:
    :class:`~phasegate.errors.RecordingFolderError`). ``page`` renders ``index.html`` from
    the written files, as the last step before the folder is renamed into place (default:
    the run's page, :func:`~phasegate.recording.page.render_page`; None: no page)."""

    def __init__(self, folder: str | Path, *, page: PageWriter | None = run_page) -> None:
        self.folder = usable_folder(folder)
        self.page = page
        self.contents = FileContents()
        """The text of the work directory's files, for the diffs."""
        self.checks: list[CheckRecord] = []
        self.written: Path | None = None
        """Where the recording went, once written."""
        self.keep: Callable[[RunRecord], None] | None = None
        """Where a branch's recorder hands its record instead of writing it (:meth:`branch`)."""

    def branch(self, keep: Callable[[RunRecord], None]) -> Recorder:
        """A recorder for one branch part of a parallel pipeline run recorded by this one: it
        shares this recorder's file texts (every branch's diffs come from the one store),
        keeps its own checks (numbered in its own parts and transcript), and where
        :meth:`write` would write, hands its record, checks added, to ``keep``; the parallel
        run writes every branch's record as one recording with this recorder."""
        # A copy, not a new Recorder: the folder was checked as the run began, and a branch
        # starting later must not fail on a recording matter.
        branch = copy.copy(self)
        branch.page, branch.checks, branch.written, branch.keep = None, [], None, keep
        return branch

    def check(
        self,
        *,
        part: int,
        attempt: int,
        trigger: GateTrigger,
        accepted: bool,
        issues: Iterable[IssueRecord],
        feedback: str | None,
        entry: int,
    ) -> None:
        """Add one gate check (``feedback``: exactly what the agent got back, or None)."""
        self.checks.append(
            CheckRecord(
                part=part,
                attempt=attempt,
                trigger=trigger,
                accepted=accepted,
                issues=tuple(issues),
                feedback=feedback,
                entry=entry,
            )
        )

    def write(self, run: RunRecord) -> Path:
        """Write the recording of ``run`` (with the checks added so far) and return its
        folder (a branch's recorder hands it to :attr:`keep` instead). Raises
        :class:`OSError` when it cannot be written; an earlier recording in the folder then
        stays."""
        run = dataclasses.replace(run, checks=(*run.checks, *self.checks))
        if self.keep is not None:  # a branch's: the parallel run writes it with the others
            self.keep(run)
            return self.folder
        manifest, files = recording_files(
            run,
            self.contents,
            written_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            phasegate_version=_version(),
        )
        write_folder(self.folder, manifest, files, page=self.page)
        self.written = self.folder
        return self.folder

    def finish(self, run: RunRecord) -> Path | None:
        """:meth:`write`, for a runner whose run has ended: a recording that cannot be
        written is a :class:`~phasegate.errors.PhasegateWarning` saying why, never the run's
        failure. Where it went, or None."""
        try:
            return self.write(run)
        except (OSError, PhasegateError) as exc:
            warnings.warn(
                f"the run's recording could not be written to {self.folder}: {exc}",
                PhasegateWarning,
                stacklevel=3,
            )
            return None


def _version() -> str | None:
    try:
        return importlib.metadata.version("phasegate")
    except importlib.metadata.PackageNotFoundError:
        return None
