"""Checks on the real disk: a stage's exit checks, a phase's and a task's checks.

:class:`DiskEvidence` reads files (never outside the work directory, symbolic links
included), runs check commands, and answers what changed and which tools succeeded from
what the runner observed: the files a directory holds from the snapshot the check was taken
with, the agent's text from the stage's transcript. A command runs never through a shell,
only the end of its output kept, killed with everything it started when it runs too long
(:mod:`phasegate.workspace.commands`); in a confined run, confined as its agent is
(:mod:`phasegate.workspace.command_sandbox`). Judging is
:mod:`phasegate.validators.stage_checks`' job. :class:`CheckDisk` runs a list of checks
with it, times each, and keeps what their commands wrote from counting as the agent's work;
a ``rubric`` it hands to its grader (:class:`~phasegate.validators.grading.Grader`) once the
list's other checks hold, with the evidence the disk holds (the changed files' text).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from phasegate._files.confined import resolve_inside
from phasegate._files.limits import NotRegularFileError, open_regular
from phasegate._process.environment import for_commands
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.phases.checks import Check, CommandCheck, Rubric
from phasegate.prompts.grader import FILE_TEXT_CHARS
from phasegate.validators.grading import (
    NO_GRADER,
    ChangedFile,
    Graded,
    Grader,
    GraderEvidence,
    OtherOutcome,
    not_graded,
    rubric_verdict,
)
from phasegate.validators.stage_checks import CheckOutcome, CommandOutcome, describe, evaluate
from phasegate.workspace.commands import run_bounded
from phasegate.workspace.observer import WorkspaceObserver

_T = TypeVar("_T")

if TYPE_CHECKING:  # imported when a command is confined: the plugin's hooks never are
    from phasegate.agents.protocol import Agent
    from phasegate.workspace.command_sandbox import CommandSandbox


class DiskEvidence:
    """A :class:`~phasegate.validators.stage_checks.StageEvidence` backed by the work directory.

    ``diff`` is what changed on disk since the stage started; ``tools`` counts successful
    calls per tool name during the stage; ``env`` is added to the environment check commands
    run with; ``snapshot`` is the work directory now (what ``files_under`` lists: empty when
    not given); ``texts`` are the agent's own text blocks during the stage; ``sandbox``
    confines the check commands as the run's agent is (None: not confined); ``stop``, once
    set, ends a running command at once.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        diff: WorkspaceDiff,
        tools: Mapping[str, int],
        env: Mapping[str, str] | None = None,
        snapshot: WorkspaceSnapshot | None = None,
        texts: Sequence[str] = (),
        sandbox: CommandSandbox | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.workdir = workdir.resolve()
        self.sandbox = sandbox
        self._stop = stop
        self._changed = tuple(sorted((*diff.added, *diff.modified)))
        self._tools = dict(tools)
        self._env = dict(env or {})
        self._files = tuple(sorted((snapshot or WorkspaceSnapshot()).files))
        self._texts = tuple(texts)

    def read_text(self, path: str, chars: int | None = None) -> str:
        """The file's text as UTF-8 (undecodable bytes replaced); with ``chars``, only its
        first ``chars`` characters, without reading the rest of a large file.

        Raises :class:`ValueError` when ``path`` resolves (symbolic links followed) outside
        the work directory, and an :class:`OSError` when it is missing, unreadable, or not a
        regular file.
        """
        target = self._inside(path)
        # open_regular: a FIFO planted under the checked name must not hang the gate.
        try:
            with open_regular(target) as file:
                text = io.TextIOWrapper(file, encoding="utf-8", errors="replace")
                try:
                    return text.read() if chars is None else text.read(chars)
                finally:
                    text.detach()  # the file is closed by open_regular, once
        except NotRegularFileError as exc:
            if exc.errno == errno.EISDIR:
                raise IsADirectoryError(errno.EISDIR, "is a directory", path) from None
            raise

    def files_under(self, path: str) -> Sequence[str]:
        """The snapshot's files inside directory ``path`` (symbolic links resolved), at any
        depth.

        Raises :class:`ValueError` when it resolves outside the work directory,
        :class:`FileNotFoundError` or :class:`NotADirectoryError` when it is no directory.
        """
        target = self._inside(path)
        if not target.is_dir():
            if target.exists():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
            raise FileNotFoundError(errno.ENOENT, "no such directory", path)
        relative = target.relative_to(self.workdir).as_posix()
        prefix = "" if relative == "." else relative + "/"
        return [file for file in self._files if file.startswith(prefix)]

    def assistant_texts(self) -> Sequence[str]:
        """The agent's own text blocks during the stage."""
        return self._texts

    def _inside(self, path: str) -> Path:
        """``path`` resolved; a :class:`ValueError` (``OutsideFolderError``) when that leads
        outside the work directory, an ``OSError`` when it cannot be resolved."""
        return resolve_inside(self.workdir, path, called="the work directory")

    def run_command(self, argv: Sequence[str], timeout: float) -> CommandOutcome:
        """Run ``argv`` in the work directory without a shell, stdin closed, stdout and
        stderr combined (only their tail kept); past ``timeout`` seconds its whole process
        group is killed (:func:`~phasegate.workspace.commands.run_bounded`); confined by
        :attr:`sandbox` when there is one (:mod:`phasegate.workspace.command_sandbox`)."""
        env = {**for_commands(), **self._env}
        if self.sandbox is not None:
            from phasegate.workspace.command_sandbox import run_confined

            return run_confined(
                argv,
                workdir=self.workdir,
                env=env,
                timeout=timeout,
                sandbox=self.sandbox,
                stop=self._stop,
            )
        return run_bounded(argv, cwd=self.workdir, env=env, timeout=timeout, stop=self._stop)

    def changed_paths(self) -> Sequence[str]:
        """Paths added or modified during the stage (deletions are not in it)."""
        return self._changed

    def tool_successes(self) -> Mapping[str, int]:
        """Successful calls per tool name during the stage."""
        return self._tools


class CheckDisk:
    """Runs checks on the work directory ``observer`` watches, timing each, and tells the
    observer what their commands wrote (never the agent's work).

    ``env`` is added to the environment of the checks' commands. :meth:`stop` ends the
    command running now, and any later one at once: the run it checks for has ended.
    """

    def __init__(
        self, observer: WorkspaceObserver, *, env: Mapping[str, str] | None = None
    ) -> None:
        self.observer = observer
        self.env = dict(env or {})
        self.sandbox: CommandSandbox | None = None
        """How the checks' commands are confined; the run sets it once it knows how its
        agent is (None: not confined)."""
        self.grader: Grader | None = None
        """Who judges ``rubric`` checks; the run sets it when its agent can start a grader
        (None: a rubric is never met)."""
        self._stop = threading.Event()

    async def off_loop(self, judging: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``judging(*args, **kwargs)`` (a judgment that runs checks) in a thread: a check's
        command may run for minutes, and the session's messages must flow meanwhile. When the
        awaiting run ends (its time limit, a cancel), the command running is ended at once, and the
        judgment is let finish before the cancellation goes on, so the run describes itself
        from whole records."""
        judged = asyncio.ensure_future(asyncio.to_thread(judging, *args, **kwargs))
        try:
            return await asyncio.shield(judged)
        except asyncio.CancelledError:
            self.stop()
            with contextlib.suppress(Exception):
                await judged
            raise

    def use_grader(self, agent: Agent, answers: MutableMapping[str, Graded] | None = None) -> None:
        """Judge ``rubric`` checks with sessions of ``agent`` (the grader's own), stopped with
        the checks' commands; ``answers`` keeps them by evidence digest beyond this disk."""
        from phasegate.agents.grading import AgentGrader

        self.grader = AgentGrader(agent, self.observer.workdir, stop=self._stop, answers=answers)

    def stop(self) -> None:
        """End the command running now (its whole group), and any later one as soon as it
        starts: called from another thread when the run ends while its checks run."""
        self._stop.set()

    def snapshot(self) -> WorkspaceSnapshot:
        """The work directory now, as the agent left it (what checks wrote shows as before)."""
        return self.observer.snapshot()

    def run(
        self,
        checks: Sequence[Check],
        *,
        snapshot: WorkspaceSnapshot,
        diff: WorkspaceDiff,
        tools: Mapping[str, int],
        texts: Sequence[str],
        brief: str = "",
        others: Sequence[CheckOutcome] = (),
    ) -> list[tuple[CheckOutcome, int]]:
        """Each check's outcome and the milliseconds it took, in order. ``snapshot`` is the
        disk as the gate saw it before (what ``dir_files`` lists), ``diff``, ``tools`` and
        ``texts`` the changes, successful calls and agent text the check may look at.

        The ``rubric`` checks come last, whatever their place: each is graded only when
        every other check of the list holds (those run now, and ``others``: the list's
        outcomes kept from an earlier run), and its grader is given ``brief`` (the
        instructions the work was done to) with the evidence."""
        evidence = self.evidence(diff=diff, tools=tools, snapshot=snapshot, texts=texts)
        timed: dict[int, tuple[CheckOutcome, int]] = {}
        for position, check in enumerate(checks):
            if not isinstance(check, Rubric):
                started = time.monotonic()
                outcome = self.evaluate(check, evidence)
                timed[position] = (outcome, round((time.monotonic() - started) * 1000))
        if any(isinstance(check, CommandCheck) for check in checks):
            self.observer.written_by_checks(snapshot, self.observer.disk())
        mechanical = [*others, *(outcome for outcome, _ in timed.values())]
        for position, check in enumerate(checks):
            if isinstance(check, Rubric):
                started = time.monotonic()
                outcome = self.grade(check, evidence, mechanical, snapshot, diff, texts, brief)
                timed[position] = (outcome, round((time.monotonic() - started) * 1000))
        return [timed[position] for position in range(len(checks))]

    def grade(
        self,
        rubric: Rubric,
        evidence: DiskEvidence,
        others: Sequence[CheckOutcome],
        snapshot: WorkspaceSnapshot,
        diff: WorkspaceDiff,
        texts: Sequence[str],
        brief: str,
    ) -> CheckOutcome:
        """``rubric``'s outcome: its grader's verdicts once every other check holds."""
        failed = sum(not outcome.ok for outcome in others)
        if failed:
            ok, detail, remedy = not_graded(failed)
        elif self.grader is None:
            ok, detail, remedy = NO_GRADER
        else:
            graded = self.grader.grade(
                rubric,
                GraderEvidence(
                    instructions=brief,
                    changes=_changed_files(evidence, diff),
                    claims=tuple(texts),
                    outcomes=tuple(
                        OtherOutcome(outcome.description, outcome.ok, outcome.detail)
                        for outcome in others
                    ),
                    disk=_digest(snapshot),
                ),
            )
            ok, detail, remedy = rubric_verdict(graded)
            return CheckOutcome(
                kind=rubric.kind,
                description=describe(rubric),
                ok=ok,
                detail=detail,
                remedy=remedy,
                criteria=graded.verdicts,
                grader_usage=graded.usage if graded.sessions else None,
            )
        return CheckOutcome(
            kind=rubric.kind, description=describe(rubric), ok=ok, detail=detail, remedy=remedy
        )

    def evidence(
        self,
        *,
        diff: WorkspaceDiff,
        tools: Mapping[str, int],
        snapshot: WorkspaceSnapshot,
        texts: Sequence[str],
    ) -> DiskEvidence:
        """The evidence one :meth:`run` judges its checks on (a subclass may bound it)."""
        return DiskEvidence(
            self.observer.workdir,
            diff=diff,
            tools=tools,
            env=self.env,
            snapshot=snapshot,
            texts=texts,
            sandbox=self.sandbox,
            stop=self._stop,
        )

    def evaluate(self, check: Check, evidence: DiskEvidence) -> CheckOutcome:
        """One check's outcome on ``evidence`` (a subclass may say more of how it ended)."""
        return evaluate(check, evidence)


def _changed_files(evidence: DiskEvidence, diff: WorkspaceDiff) -> tuple[ChangedFile, ...]:
    """The changes a grader is shown, each added or modified file with the start of its
    text (None when it cannot be read as a file inside the work directory)."""
    changes: list[ChangedFile] = [
        *(_with_text(evidence, path, "added") for path in diff.added),
        *(_with_text(evidence, path, "modified") for path in diff.modified),
        *(ChangedFile(path, "deleted") for path in diff.deleted),
    ]
    return tuple(sorted(changes, key=lambda change: change.path))


def _with_text(
    evidence: DiskEvidence, path: str, status: Literal["added", "modified"]
) -> ChangedFile:
    try:
        text = evidence.read_text(path, FILE_TEXT_CHARS + 1)
    except (OSError, ValueError):
        return ChangedFile(path, status)
    if "\x00" in text:  # binary: its bytes say nothing a reader can quote
        return ChangedFile(path, status)
    return ChangedFile(path, status, text[:FILE_TEXT_CHARS], cut=len(text) > FILE_TEXT_CHARS)


def _digest(snapshot: WorkspaceSnapshot) -> str:
    """A digest of the work directory as ``snapshot`` saw it (its paths and hashes)."""
    import hashlib

    listing = "\n".join(f"{path}\0{digest}" for path, digest in sorted(snapshot.files.items()))
    return hashlib.sha256(listing.encode()).hexdigest()
