"""Streaming aggregation of run-event log lines into per-task, per-mode, per-phase metrics.

:class:`LogAggregator` takes lines one at a time and keeps only counters, sums and times
(:class:`~phasegate.metrics.stats.Distribution`: at most 10,000 per group, then a sketch of
bounded size), plus a small record per run still in progress; memory stays flat however long
the log is. Lines that are not JSON objects, or whose fields have the wrong types or values no
real run has (negative, not finite, absurdly large: :mod:`phasegate.metrics.fields`), are
counted in ``skipped`` and otherwise ignored. Events of unknown kinds are ignored: logs from newer
versions still read.

A pipeline run is a run of its own group, keyed by the pipeline's name and its isolation
(``session`` or ``process``, in the mode's place: a pipeline has no mode to compare), counted
at its ``pipeline.completed`` (one per process's part of a resumed run): its verdict, tokens,
cost and duration from that line, its failed tool calls, and as its attempts the exit checks
its stages went through (its ``stage.checked`` lines since its ``pipeline.started``: the sum of
the report's ``stages[].attempts``). It is accepted on the first attempt when every stage
passed its first check. Its stages have no rows (yet); they do not leak into a task's.

The grader sessions that judge rubric checks are counted apart, from each closing line's
``grader_usage``: a phase's in its row, a run's (task or pipeline) in its group, where they are
also part of the run's tokens and cost (a phase's tokens are the agent's alone), so a group's
tokens are its phases', plus their grader's, plus what no phase owns.

Time to phase completion is measured from the run's ``run.started`` to the phase's last
completion claim (``phase.marker``) before the gate first accepted it, or to that accepting
``phase.gate`` when there was no claim (the output phase), less the time the gate spent
running checks in between (the ``duration_ms`` of the run's ``check.ran`` lines before that
point): the agent waits while a check runs, so that time is the gate's, not the model's.

Each ``check.ran`` line is one run of a check of a task, counted in the row of its task, mode,
phase (none for the task's own checks), kind and description (:attr:`LogAggregator.checks`):
its time, whether it passed and, for a graded rubric, its criteria and how many were met.
When the task run ends (its ``run.completed``), each check it
ran counts once more, with whether its last run passed: the outcome the verdict rested on.

One concept in one module (about 520 lines): the aggregator routes every kind of line into the
same per-run records and groups, and each figure (attempts, time to completion less check time,
tokens with the grader apart, checks) reads state another kind of line left; split by event,
each part would have to reach into the others' records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic_core import from_json

from phasegate.metrics import fields
from phasegate.metrics.stats import (
    MAX_CHECK_ROWS,
    CheckKey,
    CheckStats,
    Outcomes,
    PhaseStats,
    RunStats,
)
from phasegate.modes import EventName

MAX_OPEN_RUNS = 10_000
"""Runs kept open at once waiting for their ``run.completed``; older ones are dropped."""

MAX_RUN_CHECKS = 1_000
"""Checks one run's last outcomes are kept for, until its ``run.completed``."""

MAX_RECORDINGS = 10_000
"""Recorded runs listed at most (the first ones the log names); the others are counted."""
MAX_RECORDING_PATH = 4096
"""The longest recording path taken from a log line; a longer one is no link."""

RECONCILIATION_CODES = frozenset(
    {"changed_not_claimed", "claimed_not_changed", "edit_not_on_disk", "change_without_tool"}
)
"""The findings that count as a mismatch: claims, tools and disk disagreeing (the codes of
:data:`phasegate.validators.reconcile.RECONCILIATION_CODES`, spelled out: importing that
module takes in pydantic models and jsonschema, most of ``phasegate report``'s start-up)."""

_Handler = Callable[[dict[str, Any]], None]
_SKIPPABLE = (
    b'{"event": "tool.called", ',
    b'{"event": "phase.started", ',
    b'{"event": "retry.scheduled", ',
)
# The event name's first letter picks how such a line must end to be skipped unparsed
# (without its newline first: LogReader hands lines on without one).
_SKIPPABLE_END = {
    ord("t"): (b', "ok": true}', b', "ok": true}\n'),
    ord("p"): (b'"}', b'"}\n'),
    ord("r"): (b'"}', b'"}\n'),
}
_TOOL_CALLED = ord("t")
# The key of the string that ends a phase.started or retry.scheduled line.
_LAST_STRING = {ord("p"): b', "name": "', ord("r"): b', "source": "'}


@dataclass(slots=True)
class _OpenRun:
    started: datetime
    claims: dict[int, str] = field(default_factory=dict)
    """Timestamps as written: parsed only for the phases that complete (most lines are not)."""
    completed: dict[int, str] = field(default_factory=dict)
    checks: int = 0
    """A pipeline run's exit checks (``stage.checked``) so far."""
    stages: int = 0
    """A pipeline's stages: the checks of a run that passed each stage at once."""
    check_ms: float = 0.0
    """The time its ``check.ran`` lines so far took."""
    claim_checks: dict[int, float] | None = None
    """``check_ms`` at each phase's last claim (when it was not 0)."""
    done_checks: dict[int, float] | None = None
    """``check_ms`` at the point each phase completed (when it was not 0)."""
    finals: dict[tuple[int | None, int], tuple[CheckKey, bool]] | None = None
    """Each check it ran (by phase and position): its row, and whether its last run passed."""


class LogAggregator:
    """Accumulates run events; read the totals with :func:`phasegate.metrics.summary.summarize`.

    ``since`` (an aware datetime) drops events older than it.
    """

    def __init__(self, *, since: datetime | None = None) -> None:
        self.since = since.isoformat(timespec="milliseconds") if since is not None else None
        self.lines = 0
        self.skipped = 0
        self.runs: dict[tuple[str, str], RunStats] = {}
        self.phases: dict[tuple[str, str, int], PhaseStats] = {}
        self.phase_names: dict[tuple[str, int], str] = {}
        self.checks: dict[CheckKey, CheckStats] = {}
        self.checks_unlisted = 0
        """``check.ran`` lines of checks past :data:`MAX_CHECK_ROWS`, counted only."""
        self._open: dict[str, _OpenRun] = {}
        self.recordings: list[dict[str, Any]] = []
        """The runs whose completion names a recording folder (``recording``), in log order:
        ``run_id``, ``task``, ``mode``, ``verdict`` and the folder as the line gives it."""
        self.recordings_unlisted = 0
        """Recorded runs past :data:`MAX_RECORDINGS`, counted only."""
        self._handlers: dict[EventName, _Handler] = {
            "run.started": self._run_started,
            "phase.marker": self._phase_marker,
            "phase.gate": self._phase_gate,
            "check.ran": self._check_ran,
            "tool.called": self._tool_called,
            "phase.completed": self._phase_completed,
            "run.completed": self._run_completed,
            "pipeline.started": self._pipeline_started,
            "stage.checked": self._stage_checked,
            "pipeline.completed": self._pipeline_completed,
        }

    def add_lines(self, lines: Iterable[str | bytes]) -> None:
        """Add every line of ``lines`` (blank lines are not counted).

        Lines that change no metric (a successful ``tool.called``, ``phase.started``,
        ``retry.scheduled``) are counted without being parsed when they have the exact shape
        ``EventLog`` writes (the event name first, then ``ok`` last, or a ``name`` or
        ``source`` without quotes or backslashes last: a line cut short never has that shape):
        they are most of a log. This loop is the hot path of ``phasegate report``.
        """
        # Looked up by any str a line names: a name that is no key has no handler.
        handlers: dict[Any, _Handler] = self._handlers
        since = self.since
        counted = skipped = 0
        for raw in lines:
            line = raw.encode() if isinstance(raw, str) else raw
            counted += 1
            if (
                line.startswith(_SKIPPABLE)
                and line.endswith(_SKIPPABLE_END[line[11]])
                and (line[11] == _TOOL_CALLED or _plain_last_string(line, _LAST_STRING[line[11]]))
            ):
                continue
            try:
                # Every string cached, as by default: task, mode and event names repeat, and
                # caching them made fewer objects than caching keys alone (about 2 % fewer
                # instructions over the synthetic log, timestamps and ids never repeating).
                event = from_json(line)
            except ValueError:
                if line.strip():
                    skipped += 1
                else:
                    counted -= 1
                continue
            if type(event) is not dict:
                skipped += 1
                continue
            try:
                handler = handlers[event["event"]]
            except (KeyError, TypeError):  # no name, one no handler has, or a list or object
                continue
            if since is not None and str(event.get("timestamp", "")) < since:
                continue
            try:
                handler(event)
            except (KeyError, TypeError, ValueError, AttributeError):
                skipped += 1
        self.lines += counted
        self.skipped += skipped

    def add_line(self, line: str | bytes) -> None:
        """Add one log line."""
        self.add_lines((line,))

    def completed_runs(self) -> int:
        """How many runs have been counted so far (their ``run.completed``, or :meth:`add_run`)."""
        return sum(stats.runs for stats in self.runs.values())

    def add_run(
        self,
        task: str,
        mode: str,
        *,
        verdict: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
    ) -> None:
        """Count a run known from elsewhere than its log (a batch unit's record, when the log
        has no ``run.completed`` or ``pipeline.completed``: the run failed before it): its
        verdict, tokens and cost. It adds no gate checks, phases or duration."""
        stats = self._run(task, mode)
        _count(stats, (0, input_tokens, output_tokens, cost_usd), verdict == "accepted")
        stats.errors += verdict == "error"

    # -- handlers: each reads every field it needs before it changes anything, so a corrupt
    # line (a raised error) leaves no partial count behind. The phase and timestamp checks of
    # the commonest kinds are inline, with fields' own function called only to raise: a
    # call per field per line was about 1 % of the report's instructions.
    def _run_started(self, event: dict[str, Any]) -> None:
        run_id, started = str(event["run_id"]), fields.moment(event["timestamp"])
        if len(self._open) >= MAX_OPEN_RUNS:
            del self._open[next(iter(self._open))]
        self._open[run_id] = _OpenRun(started=started)

    def _phase_marker(self, event: dict[str, Any]) -> None:
        run_id, phase, at = str(event["run_id"]), event["phase"], event["timestamp"]
        if type(phase) is not int or not 1 <= phase <= fields.MAX_PHASE:
            phase = fields.phase(event)  # raises
        if type(at) is not str:
            at = fields.text(event)  # raises
        run = self._open.get(run_id)
        if run is not None:
            run.claims[phase] = at
            if run.check_ms:
                if run.claim_checks is None:
                    run.claim_checks = {}
                run.claim_checks[phase] = run.check_ms

    def _phase_gate(self, event: dict[str, Any]) -> None:
        run_id, phase, at = str(event["run_id"]), event["phase"], event["timestamp"]
        if type(phase) is not int or not 1 <= phase <= fields.MAX_PHASE:
            phase = fields.phase(event)  # raises
        if type(at) is not str:
            at = fields.text(event)  # raises
        run = self._open.get(run_id)
        if run is not None and event["accepted"] is True and phase not in run.completed:
            claimed = run.claims.get(phase)
            run.completed[phase] = at if claimed is None else claimed
            # The checks before the claim, or before this gate (whose checks were told first).
            waited = run.check_ms if claimed is None else (run.claim_checks or {}).get(phase, 0.0)
            if waited:
                if run.done_checks is None:
                    run.done_checks = {}
                run.done_checks[phase] = waited

    def _check_ran(self, event: dict[str, Any]) -> None:
        task, mode, run_id = str(event["task"]), str(event["mode"]), str(event["run_id"])
        phase, position, kind, description, duration, passed = fields.check_ran(event)
        judged, met = fields.criteria(event)
        key = (task, mode, phase, kind, description)
        stats = self._check(key)
        if stats is not None:
            stats.runs += 1
            stats.passed += passed
            stats.criteria += judged
            stats.criteria_met += met
            stats.duration_ms.add(duration)
            stats.total_ms += duration
        run = self._open.get(run_id)
        if run is None:
            return
        run.check_ms += duration
        if run.finals is None:
            run.finals = {}
        if len(run.finals) < MAX_RUN_CHECKS or (phase, position) in run.finals:
            run.finals[(phase, position)] = (key, passed)

    def _tool_called(self, event: dict[str, Any]) -> None:
        if "stage" in event and "phase" not in event:  # a pipeline run's call: no phase row
            if event["ok"] is False:
                self._run(str(event["task"]), _pipeline_mode(event)).tool_errors += 1
            return
        if event["ok"] is False:
            task, mode, phase = str(event["task"]), str(event["mode"]), fields.phase(event)
            self._phase(task, mode, phase).tool_errors += 1
            self._run(task, mode).tool_errors += 1

    def _phase_completed(self, event: dict[str, Any]) -> None:
        task, mode, phase = str(event["task"]), str(event["mode"]), event["phase"]
        if type(phase) is not int or not 1 <= phase <= fields.MAX_PHASE:
            phase = fields.phase(event)  # raises
        name, outcome, added = event.get("name"), fields.outcome(event), fields.overhead(event)
        refusals = fields.count(event, "refusals", fields.MAX_REFUSALS)
        delegated, graded = fields.subagents(event), fields.grader(event)
        accepted = event["status"] == "accepted"
        run = self._open.get(str(event["run_id"]))
        elapsed = None
        if accepted and run is not None:
            at = run.completed.get(phase)
            if at is not None:
                elapsed = fields.elapsed_ms(run.started, fields.moment(at))
                if run.done_checks is not None:
                    elapsed = max(elapsed - run.done_checks.get(phase, 0.0), 0.0)
        if type(name) is str:
            self.phase_names[(task, phase)] = name
        # The row looked up inline: this runs for a tenth of a log's lines.
        key = (task, mode, phase)
        stats = self.phases.get(key)
        if stats is None:
            stats = self.phases[key] = PhaseStats()
        _count(stats, outcome, accepted)
        _count_overhead(stats, added)
        stats.refusals += refusals
        _count_subagents(stats, delegated)
        _count_grader(stats, graded)
        if elapsed is not None:
            stats.to_completion_ms.add(elapsed)

    def _run_completed(self, event: dict[str, Any]) -> None:
        task, mode, run_id = str(event["task"]), str(event["mode"]), str(event["run_id"])
        verdict, outcome = event["verdict"], fields.outcome(event)
        duration = fields.amount(event, "duration_ms", fields.MAX_DURATION_MS)
        rest, added = fields.unattributed(event), fields.overhead(event)
        refusals = fields.count(event, "refusals", fields.MAX_REFUSALS)
        delegated, graded = fields.subagents(event), fields.grader(event)
        stats = self._run(task, mode)
        _count(stats, outcome, verdict == "accepted")
        _count_unattributed(stats, rest)
        _count_grader(stats, graded)
        _count_overhead(stats, added)
        stats.refusals += refusals
        stats.blocked += fields.count(event, "blocked", fields.MAX_REFUSALS)
        _count_subagents(stats, delegated)
        stats.errors += verdict == "error"
        stats.reconciled += 1
        stats.mismatched += _disagrees(event.get("findings"))
        if duration is not None:
            stats.duration_ms.add(duration)
        attempts = outcome[0]
        stats.attempts_histogram[attempts] = stats.attempts_histogram.get(attempts, 0) + 1
        run = self._open.pop(run_id, None)
        if run is not None and run.finals:
            self._checks_ended(run.finals.values())
        if "recording" in event:
            self._recorded(event, task, mode, run_id)

    def _pipeline_started(self, event: dict[str, Any]) -> None:
        stages = fields.count(event, "stages", fields.MAX_PHASE)
        self._run_started(event)
        self._open[str(event["run_id"])].stages = stages

    def _stage_checked(self, event: dict[str, Any]) -> None:
        run = self._open.get(str(event["run_id"]))
        if run is not None:
            run.checks += 1

    def _pipeline_completed(self, event: dict[str, Any]) -> None:
        task, mode, run_id = str(event["task"]), _pipeline_mode(event), str(event["run_id"])
        verdict, (_, tokens_in, tokens_out, cost) = event["verdict"], fields.outcome(event)
        duration = fields.amount(event, "duration_ms", fields.MAX_DURATION_MS)
        rest, added = fields.unattributed(event), fields.overhead(event)
        refusals, graded = (
            fields.count(event, "refusals", fields.MAX_REFUSALS),
            fields.grader(event),
        )
        run = self._open.pop(run_id, None)
        attempts = run.checks if run is not None else 0
        stats = self._run(task, mode)
        _count_unattributed(stats, rest)
        _count_grader(stats, graded)
        _count_overhead(stats, added)
        stats.refusals += refusals
        stats.blocked += fields.count(event, "blocked", fields.MAX_REFUSALS)
        first = run.stages if run is not None else None  # unknown: not at the first attempt
        _count(stats, (attempts, tokens_in, tokens_out, cost), verdict == "accepted", first=first)
        stats.errors += verdict == "error"
        if duration is not None:
            stats.duration_ms.add(duration)
        stats.attempts_histogram[attempts] = stats.attempts_histogram.get(attempts, 0) + 1
        if "recording" in event:
            self._recorded(event, task, mode, run_id)

    def _recorded(self, event: dict[str, Any], task: str, mode: str, run_id: str) -> None:
        """Keep a completed run's ``recording`` (a folder's path) to link its page; a value
        that is no plausible path (not text, empty, too long, a NUL) is ignored."""
        folder = event["recording"]
        if type(folder) is not str or not 0 < len(folder) <= MAX_RECORDING_PATH or "\0" in folder:
            return
        if len(self.recordings) >= MAX_RECORDINGS:
            self.recordings_unlisted += 1
            return
        self.recordings.append({"run_id": run_id, "task": task, "mode": mode,
                                "verdict": str(event["verdict"]), "recording": folder})  # fmt: skip

    # -- helpers ----------------------------------------------------------------------------
    def _checks_ended(self, finals: Iterable[tuple[CheckKey, bool]]) -> None:
        """Count an ended task run in the row of each check it ran, with its last outcome."""
        for key, passed in finals:
            stats = self._check(key, ran=False)
            if stats is not None:
                stats.task_runs += 1
                stats.passed_at_end += passed

    def _check(self, key: CheckKey, *, ran: bool = True) -> CheckStats | None:
        """The row of ``key``; None past :data:`MAX_CHECK_ROWS` (a run of it, ``ran``, is
        counted in ``checks_unlisted``)."""
        stats = self.checks.get(key)
        if stats is None:
            if len(self.checks) >= MAX_CHECK_ROWS:
                self.checks_unlisted += ran
                return None
            stats = self.checks[key] = CheckStats()
        return stats

    def _phase(self, task: str, mode: str, phase: int) -> PhaseStats:
        key = (task, mode, phase)
        stats = self.phases.get(key)
        if stats is None:
            stats = self.phases[key] = PhaseStats()
        return stats

    def _run(self, task: str, mode: str) -> RunStats:
        key = (task, mode)
        stats = self.runs.get(key)
        if stats is None:
            stats = self.runs[key] = RunStats()
        return stats


def _count(
    stats: Outcomes, outcome: fields.Outcome, accepted: bool, *, first: int | None = 1
) -> None:
    """Count one finished phase or run (its ``*.completed`` event); its gate checks
    (``first``: as many as an acceptance at the first attempt takes)."""
    attempts, input_tokens, output_tokens, cost_usd = outcome
    stats.runs += 1
    stats.accepted += accepted
    stats.first_attempt += accepted and attempts == first
    stats.attempts += attempts
    stats.input_tokens += input_tokens
    stats.output_tokens += output_tokens
    if cost_usd is not None:
        stats.cost_usd += cost_usd
        stats.costed += 1


def _count_unattributed(stats: RunStats, rest: tuple[int, int, float | None]) -> None:
    tokens_in, tokens_out, cost = rest
    stats.unattributed_input_tokens += tokens_in
    stats.unattributed_output_tokens += tokens_out
    if cost is not None:
        stats.unattributed_cost_usd += cost
        stats.unattributed_costed += 1


def _count_grader(stats: Outcomes, graded: fields.Tokens) -> None:
    if graded is fields.NO_TOKENS:  # no grader spent anything (most lines)
        return
    tokens_in, tokens_out, cost = graded
    stats.grader_input_tokens += tokens_in
    stats.grader_output_tokens += tokens_out
    if cost is not None:
        stats.grader_cost_usd += cost
        stats.grader_costed += 1


def _count_overhead(stats: Outcomes, added: fields.Overhead) -> None:
    if added is fields.NO_OVERHEAD:  # a line older than the field: unknown, not zero
        return
    requests, carried, tools, text = stats.overhead
    stats.overhead = (requests + added[0], carried + added[1], tools + added[2], text + added[3])
    stats.overhead_lines += 1


def _plain_last_string(line: bytes, key: bytes) -> bool:
    """Whether ``line`` ends with ``key``'s string, closed, holding no quote or backslash.

    A line cut short inside that string, or just after a brace in it, ends with ``"}`` too;
    with neither quotes nor escapes in the string, its last quote closes it and the brace
    after that closes the line. (``, "ok": true}`` cannot end a line cut short: its quotes
    follow a space, never inside a string, so its brace closes the line.)"""
    start = line.rfind(key) + len(key)
    end = line.rfind(b'"')
    return (
        start >= len(key)
        and end >= start
        and b'"' not in line[start:end]
        and b"\\" not in line[start:end]
    )


def _disagrees(findings: object) -> bool:
    """Whether a run's findings include one of reconciliation (a read outside the work
    directory is a finding too, but claims, tools and disk agree)."""
    return isinstance(findings, list) and any(
        isinstance(code, str) and code in RECONCILIATION_CODES for code in findings
    )


def _pipeline_mode(event: dict[str, Any]) -> str:
    """What stands for a pipeline run's mode in its group: its isolation (``mode`` held it
    before event schema version 2)."""
    return str(event.get("isolation") or event["mode"])


def _count_subagents(stats: Outcomes, delegated: dict[str, tuple[int, int]]) -> None:
    """Add a line's subagent calls and failed calls, by subagent type."""
    for kind, (calls, errors) in delegated.items():
        stats.subagent_calls[kind] = stats.subagent_calls.get(kind, 0) + calls
        stats.subagent_errors[kind] = stats.subagent_errors.get(kind, 0) + errors
