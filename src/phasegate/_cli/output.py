"""What the commands print: progress lines on stderr, and short human-readable reports."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol, TextIO, TypeVar

import typer

from phasegate.errors import PhasegateError, PhasegateWarning

if TYPE_CHECKING:
    from phasegate.evidence.overhead import GateOverhead
    from phasegate.evidence.transcript import Usage
    from phasegate.pipelines.report import PipelineReport
    from phasegate.tasks.report import CheckReport, RunReport
    from phasegate.telemetry.events import RunEvent


OS_ERROR_EXIT_CODE = 3
"""How a command ends when the system refuses a write or an open that no command foresaw:
the work could not be carried out (its infrastructure failed)."""

_WHAT_TO_DO = {
    errno.ENOSPC: "free space on that disk and run again",
    errno.EDQUOT: "free space within your disk quota and run again",
    errno.EMFILE: "raise the limit of open files (ulimit -n) or run fewer at once",
    errno.ENFILE: "the system has too many files open: run fewer at once",
    errno.EROFS: "the file system is read-only: choose a writable place",
    errno.EACCES: "make it writable for this user, or choose another place",
    errno.EPERM: "make it writable for this user, or choose another place",
    errno.EPIPE: "the program reading the output ended first",
    errno.ENAMETOOLONG: "the path is longer than this system allows (Windows: 260 characters "
    "unless long paths are enabled): choose a folder with a shorter path",
}

_SOCKET_TOO_LONG = (
    "a Unix socket's path may take 107 bytes on Linux, 103 on macOS: set TMPDIR to a "
    "shorter folder (such as /tmp)"
)
"""What to do about ``AF_UNIX path too long``, which carries no errno and no path."""


def os_error_message(exc: OSError, where: str | None = None) -> str:
    """One line for an OSError: what failed (``where``, else the file the error names), why,
    and what to do."""
    reason = exc.strerror or str(exc)
    advice = _WHAT_TO_DO.get(exc.errno or 0, "")
    if exc.errno is None and "AF_UNIX path too long" in reason:
        advice = _SOCKET_TOO_LONG
    if where is None and exc.filename is not None:
        where = str(exc.filename)
    elif where is None:
        where = "the system refused a file operation"
    return f"{where}: {reason}" + (f"; {advice}" if advice else "")


_EXHAUSTED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE, errno.EIO})
"""Errors of the machine, not of the path the user chose: a full disk, too many files open."""


def cannot_write(exc: OSError, where: str) -> PhasegateError:
    """The error a file the user named (``where`` says which) that could not be written
    becomes: a machine out of space or files is exit 3 (the infrastructure failed), a path
    that cannot be written (read-only, not there, a folder) exit 2 (choose another)."""
    from phasegate.errors import RunError, UsageError

    if exc.errno in _EXHAUSTED:
        return RunError(os_error_message(exc, where))
    return UsageError(
        f"{where}: {exc.strerror or exc}; make its folder writable, or write it elsewhere"
    )


def print_result(text: str, *, nl: bool = True, raw: bool = False) -> None:
    """``text`` on stdout, where a command's result goes. A stdout that cannot take it (a
    full disk, a reader that has gone) is a :class:`~phasegate.errors.RunError` saying so,
    exit code 3, not a trace. ``raw`` writes the text as is (``typer.echo`` strips ANSI codes
    from a stdout that is not a terminal)."""
    from phasegate.errors import RunError

    try:
        if raw:
            sys.stdout.write(text + ("\n" if nl else ""))
            sys.stdout.flush()
        else:
            typer.echo(text, nl=nl)
    except OSError as exc:
        _divert_stdout()
        raise RunError(os_error_message(exc, "cannot write to standard output")) from None


def _divert_stdout() -> None:
    """Point standard output at the null device, so what is still in its buffer does not
    fail again, with a second message, at the interpreter's last flush."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def show_library_warnings() -> None:
    """Show phasegate's own warnings as ``phasegate: warning: ...`` lines on stderr; any other
    warning as Python shows it. The warnings filters still decide which are shown."""
    if not isinstance(warnings.showwarning, _WarningLines):
        warnings.showwarning = _WarningLines(warnings.showwarning)


class _WarningLines:
    """A :func:`warnings.showwarning` that writes phasegate's warnings as one line each."""

    def __init__(self, others: Callable[..., None]) -> None:
        self.others = others
        """How every other warning is shown."""

    def __call__(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, PhasegateWarning):
            typer.echo(f"phasegate: warning: {message}", err=True)
        else:
            self.others(message, category, filename, lineno, file, line)


def recording_folder(record: Path | None) -> Path | None:
    """``record`` checked before the run starts: a folder that cannot take a recording is
    refused now (:class:`~phasegate.errors.RecordingFolderError`), before any agent works."""
    if record is None:
        return None
    from phasegate.recording.folder import usable_folder

    return usable_folder(record)


def print_recording(record: Path | None) -> None:
    """Say on stderr where the run's recording went (nothing when it was not recorded or
    could not be written: the warning says why)."""
    if record is not None and (record / "recording.json").is_file():
        typer.echo(f"phasegate: the run's recording: {record}", err=True)


def print_progress(event: RunEvent) -> None:
    """Write the progress line of ``event`` (if it has one) to stderr."""
    line = progress_line(event)
    if line is not None:
        typer.echo(line, err=True)


def progress_line(event: RunEvent) -> str | None:
    """One stderr line for the events a person watching a run cares about; a stage's line
    names its branch (a pipeline's branches run at once, so their lines interleave)."""
    line = _progress_line(event)
    if line is not None and event.branch is not None:
        return f"{line} [branch {event.branch}]"
    return line


def _progress_line(event: RunEvent) -> str | None:
    from phasegate.metrics.formatting import quantity
    from phasegate.telemetry import events as e

    match event.data:
        case e.RunStarted(phases=phases, agent=agent, agent_version=version):
            agent = _agent(agent, version)
            return f"▶ {event.task}: {quantity(phases, 'phase')}, mode {event.mode}, agent {agent}"
        case e.ToolCalled(tool=tool, ok=ok):
            return f"  · {tool} {'ok' if ok else 'FAILED'}"
        case e.AttemptBlocked(kind=kind, tool=tool, target=target):
            return f"  ⊘ blocked by the sandbox ({kind}): {tool} {target}"
        case e.PhaseMarker(phase=phase, name=name, text=text, source=source):
            via = " (phase_complete)" if source == "tool" else ""
            return f"  ✎ phase {phase} ({name}) claimed complete{via}: {text}"
        case e.PhaseGateChecked(accepted=False) as gate:
            what = f"{gate.tool} call" if gate.trigger == "tool" else f"gate check {gate.attempt}"
            return f"  ✗ {what}: phase {gate.phase} ({gate.name}): {', '.join(gate.issues)}"
        case e.RetryScheduled(attempt=attempt, source=source, delay_ms=delay, reason=reason):
            return f"  ↻ retry {attempt} ({source}) in {delay} ms: {reason}"
        case e.RunCompleted(verdict=verdict, attempts=attempts, duration_ms=ms):
            return f"■ {verdict} after {attempts} gate check(s) in {ms} ms"
        case e.PipelineStarted(loop=dict() as loop, agent=agent, agent_version=version):
            agent = _agent(agent, version)
            bound = loop.get("max_iterations") or "unlimited"
            until = f"until <promise>{loop.get('promise')}</promise>"
            return f"▶ {event.task}: {until}, {bound} iteration(s) at most, agent {agent}"
        case e.PipelineStarted(
            stages=stages, stage=stage, resumed=resumed, agent=agent, agent_version=version
        ):
            agent = _agent(agent, version)
            how = "resuming at stage" if resumed else "starting at stage"
            return f"▶ {event.task}: {quantity(stages, 'stage')}, {how} {stage}, agent {agent}"
        case e.PipelineResumed(stage=stage, name=name, how=how):
            where = "the saved session" if how == "session" else "a fresh session with a recap"
            return f"↻ resuming stage {stage} ({name}) in {where}"
        case e.StageStarted(stage=stage, name=name, visit=visit):
            again = f" (visit {visit})" if visit > 1 else ""
            return f"» stage {stage} {name}{again}"
        case e.StageChecked(passed=False, attempt=attempt, name=name, failed=failed):
            return f"  ✗ check {attempt}: stage {name}: failed {', '.join(failed)}"
        case e.StageCompleted(status=status, name=name, attempts=attempts) if status != "pending":
            mark = "✓" if status == "accepted" else "✗"
            return f"  {mark} stage {name} {status} after {attempts} check(s)"
        case e.StageRevision(name=name, to_name=to_name):
            return f"  ↺ stage {name} sends the pipeline back to {to_name}"
        case e.PipelineCompleted(verdict=verdict, iterations=int() as count, duration_ms=ms):
            return f"■ {verdict} after {quantity(count, 'iteration')} in {ms} ms"
        case e.PipelineCompleted(verdict=verdict, stages_accepted=accepted, duration_ms=ms):
            return f"■ {verdict}: {quantity(accepted, 'stage')} accepted in {ms} ms"
    return None


def _agent(name: str, version: str | None) -> str:
    """The agent as a progress line names it: ``claude 2.1.332``, or its name alone."""
    return f"{name} {version}" if version else name


def format_report(report: RunReport) -> str:
    """A short human-readable account of a task run."""
    from phasegate.validators.subagents import calls_text, main_agent_calls

    lines = [
        f"{report.task}: {report.verdict.upper()} ({report.mode}, {report.attempts} gate check(s))"
    ]
    for phase in report.phases:
        tools = (
            ", ".join(f"{name}×{count}" for name, count in sorted(phase.tools.items()))
            or "no tools"
        )
        how = f" by {phase.completed_by}" if phase.completed_by else ""
        lines.append(
            f"  phase {phase.index} {phase.name}: {phase.status}{how} after {phase.attempts} "
            f"check(s); {tools}; files changed: {', '.join(phase.files_changed) or 'none'}; "
            f"{usage_text(phase.usage)}"
        )
        if not phase.overhead.is_zero:
            lines.append(f"    input: {overhead_text(phase.overhead)}")
        if phase.subagents:
            own = calls_text(main_agent_calls(phase.tools, phase.subagents))
            failed = phase.tool_errors - sum(w.tool_errors for w in phase.subagents)
            own += f"; {failed} error(s)" if failed else ""
            lines.append(f"    main agent: {own}")
            lines.extend(f"    subagent {w.label}: {w.summary}" for w in phase.subagents)
        if phase.checks:
            lines.append(f"    checks: {_checks_text(phase.checks, phase.check_ms)}")
        lines.extend(f"    - {issue.code.value}: {issue.message}" for issue in phase.issues)
    if report.checks:
        lines.append(f"  task checks: {_checks_text(report.checks, None)}")
    if report.checks_skipped:
        lines.append(
            "  checks not run (--no-checks): the verdict rests on the other evidence alone"
        )
    lines.append(
        _total_usage_line(report.usage, report.unattributed_usage, "phase", report.grader_usage)
    )
    if not report.overhead.is_zero:
        lines.append(f"  input: {overhead_text(report.overhead)}")
    lines.append(f"  files changed: {', '.join(report.files_changed) or 'none'}")
    if report.files_claimed:
        lines.append(f"  files claimed: {', '.join(report.files_claimed)}")
    lines.extend(f"  ! {finding.code.value}: {finding.message}" for finding in report.findings)
    if report.reverted is not None:
        reverted = report.reverted
        lines.append(
            f"  reverted: restored {', '.join(reverted.restored) or 'nothing'}; "
            f"removed {', '.join(reverted.removed) or 'nothing'}"
            + (f"; FAILED {', '.join(reverted.failed)}" if reverted.failed else "")
        )
    if report.retries or report.api_retries:
        lines.append(f"  retries: {report.retries} session(s), {report.api_retries} API request(s)")
    if report.error:
        lines.append(f"  error: {report.error}")
    return "\n".join(lines)


def _checks_text(checks: Sequence[CheckReport], check_ms: int | None) -> str:
    """``1 of 2 passed (168 ms)``: a list of checks as the gate last ran them."""
    passed = sum(check.passed for check in checks)
    took = f" ({check_ms} ms in checks)" if check_ms else ""
    return f"{passed} of {len(checks)} passed{took}"


def format_pipeline(report: PipelineReport) -> str:
    """A short human-readable account of a pipeline run."""
    from phasegate.metrics.formatting import duration

    sessions = f"{report.sessions} session(s)" + (
        f", resumed {report.resumes}×" if report.resumes else ""
    )
    lines = [
        f"{report.pipeline}: {report.verdict.upper()} ({report.isolation} isolation, {sessions}, "
        f"{duration(report.duration_ms)})"
    ]
    # Branches only where there are several: a sequential pipeline's lines stay as they were.
    branched = len({stage.branch for stage in report.stages}) > 1
    for stage in report.stages:
        visits = f", {stage.visits} visits" if stage.visits > 1 else ""
        branch = f" [branch {stage.branch}]" if branched and stage.branch is not None else ""
        lines.append(
            f"  stage {stage.index} {stage.name}{branch}: {stage.status} after {stage.attempts} "
            f"check(s){visits}, {duration(stage.duration_ms)}; {usage_text(stage.usage)}"
        )
        if not stage.overhead.is_zero:
            lines.append(f"    input: {overhead_text(stage.overhead)}")
        lines.extend(f"    subagent {w.label}: {w.summary}" for w in stage.subagents)
        for check in stage.checks:
            mark = "✓" if check.ok else "✗"
            detail = check.detail.splitlines()[0] if check.detail else ""
            lines.append(f"    {mark} {check.description}" + ("" if check.ok else f": {detail}"))
    lines.extend(
        f"  ↺ {revision.from_stage} sent the pipeline back to {revision.to_stage}"
        for revision in report.revisions
    )
    lines.append(
        _total_usage_line(report.usage, report.unattributed_usage, "stage", report.grader_usage)
    )
    if not report.overhead.is_zero:
        lines.append(f"  input: {overhead_text(report.overhead)}")
    if report.error:
        lines.append(f"  error: {report.error}")
    lines.append(f"  state: {report.state_file}")
    return "\n".join(lines)


def usage_text(usage: Usage) -> str:
    """Tokens and cost in a few words: ``400 in / 529 out tokens, $0.012180``; cache counts
    only when there are any, cost to the millionth (the unit its shares are split in)."""
    text = f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
    if usage.cache_creation_input_tokens or usage.cache_read_input_tokens:
        text += (
            f" (cache: {usage.cache_creation_input_tokens:,} written, "
            f"{usage.cache_read_input_tokens:,} read)"
        )
    return text if usage.cost_usd is None else f"{text}, ${usage.cost_usd:.6f}"


def overhead_text(overhead: GateOverhead) -> str:
    """The input of some requests and the gate's share, in a few words: ``3 requests carried
    300 input tokens; the gate's ≈1,947 (tool definitions ≈1,002, text ≈945)``."""
    from phasegate.metrics.formatting import quantity

    return (
        f"{quantity(overhead.requests, 'request')} carried {overhead.input_tokens:,} input "
        f"tokens; the gate's ≈{overhead.gate_tokens:,} (tool definitions "
        f"≈{overhead.tool_tokens:,}, text ≈{overhead.text_tokens:,})"
    )


def _total_usage_line(total: Usage, unattributed: Usage, part: str, grader: Usage) -> str:
    """The run's usage, what its grader sessions spent and what no part owns, when anything:
    the parts' lines above plus those are the total."""
    line = f"  usage: {usage_text(total)}"
    apart = [f"the grader: {usage_text(grader)}"] if not grader.is_zero else []
    if not unattributed.is_zero:
        apart.append(f"in no {part}: {usage_text(unattributed)}")
    return line + (f" ({'; '.join(apart)})" if apart else "")


class _Report(Protocol):
    @property
    def exit_code(self) -> int: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...


_R = TypeVar("_R", bound=_Report)


def finish(report: _R, *, json_output: bool, human: Callable[[_R], str]) -> NoReturn:
    """Print ``report`` (JSON, or ``human``'s account of it) and exit with its exit code."""
    print_result(report.model_dump_json(indent=2) if json_output else human(report))
    raise typer.Exit(report.exit_code)
