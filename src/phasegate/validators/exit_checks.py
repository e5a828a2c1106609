"""Judging a pipeline stage's exit checks (``exit_when``) from evidence handed in.

This module is pure: it reads files, runs commands and asks what changed only through the
:class:`~phasegate.validators.stage_evidence.StageEvidence` it is given. Every check is
evaluated, in order, and each yields a :class:`CheckOutcome` that says what must hold (its
description, :mod:`phasegate.validators.exit_describe`), what was found and, when it fails,
what would make it hold: the remedy the stage feedback carries. A remedy depends on what was
found (a missing file needs creating, a short one needs more lines), so it is worded here.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, assert_never

import referencing.exceptions

from phasegate.phases.checks import (
    Changed,
    Check,
    CommandCheck,
    DirFiles,
    FileExists,
    JsonValid,
    MinLines,
    Said,
    ToolsUsed,
)
from phasegate.phases.schemas import schema_validator
from phasegate.validators.exit_describe import (
    command_text,
    counted,
    describe,
    either,
    listing,
)
from phasegate.validators.globs import glob_matches
from phasegate.validators.said import said_verdict
from phasegate.validators.stage_evidence import StageEvidence, output_tail

SCHEMA_ERRORS_SHOWN = 3
"""Schema errors a ``json_valid`` detail lists, in document order, before "and N more"."""


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """The verdict on one exit check."""

    kind: str
    """The check's kind (``min_lines``, ``command``, ...)."""
    description: str
    """What must hold, e.g. ``architecture.md has at least 20 lines``."""
    ok: bool
    """Whether it holds."""
    detail: str
    """What was found, e.g. ``architecture.md has 7 lines``; for a command, the output's
    tail follows the first line."""
    remedy: str = ""
    """For a failed check, what would make it hold (``it needs at least 20``)."""

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready data: ``kind``, ``description``, ``ok``, ``detail``."""
        return {
            "kind": self.kind,
            "description": self.description,
            "ok": self.ok,
            "detail": self.detail,
        }


def evaluate(check: Check, evidence: StageEvidence) -> CheckOutcome:
    """Judge one check against ``evidence``."""
    match check:
        case FileExists():
            ok, detail, remedy = _file_exists(check, evidence)
        case MinLines():
            ok, detail, remedy = _min_lines(check, evidence)
        case JsonValid():
            ok, detail, remedy = _json_valid(check, evidence)
        case CommandCheck():
            ok, detail, remedy = _command_check(check, evidence)
        case Changed():
            ok, detail, remedy = _changed(check, evidence)
        case ToolsUsed():
            ok, detail, remedy = _tools_used(check, evidence)
        case DirFiles():
            ok, detail, remedy = _dir_files(check, evidence)
        case Said():
            ok, detail, remedy = said_verdict(check, evidence.assistant_texts())
        case _:
            assert_never(check)
    return CheckOutcome(
        kind=check.kind,
        description=describe(check),
        ok=ok,
        detail=detail,
        remedy="" if ok else remedy,
    )


def evaluate_all(checks: Iterable[Check], evidence: StageEvidence) -> tuple[CheckOutcome, ...]:
    """Judge every check, in order. A failure does not stop the rest: the agent is told
    everything that is wrong at once, not one thing per round."""
    return tuple(evaluate(check, evidence) for check in checks)


_Verdict = tuple[bool, str, str]
"""(ok, detail, remedy)."""


def _file_exists(check: FileExists, evidence: StageEvidence) -> _Verdict:
    text, problem, remedy = _read(evidence, check.path, "")
    if text is None:
        return False, problem, remedy
    return True, f"{check.path} exists", ""


def _min_lines(check: MinLines, evidence: StageEvidence) -> _Verdict:
    text, problem, remedy = _read(
        evidence, check.path, f" with at least {counted(check.n, 'line')}"
    )
    if text is None:
        return False, problem, remedy
    lines = len(text.splitlines())
    return (
        lines >= check.n,
        f"{check.path} has {counted(lines, 'line')}",
        f"it needs at least {check.n}",
    )


def _json_valid(check: JsonValid, evidence: StageEvidence) -> _Verdict:
    text, problem, remedy = _read(evidence, check.path, " holding valid JSON")
    if text is None:
        return False, problem, remedy
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return (
            False,
            f"{check.path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            "write valid JSON to it",
        )
    if check.schema_ is None:
        return True, f"{check.path} holds valid JSON", ""
    schema = check.schema_
    try:
        errors = sorted(
            schema_validator(schema).iter_errors(value),
            key=lambda error: _path_key(error.absolute_path),
        )
    except referencing.exceptions.Unresolvable as exc:
        # A loaded schema holds what its $refs need; one built in code may not.
        return False, f"the schema for {check.path} cannot be applied: {exc}", "fix the schema"
    except RecursionError:
        return False, f"{check.path} nests too deeply to check", "write flatter JSON"
    if not errors:
        return True, f"{check.path} holds JSON valid against its schema", ""
    shown = "; ".join(
        f"at {error.json_path}: {error.message}" for error in errors[:SCHEMA_ERRORS_SHOWN]
    )
    more = len(errors) - SCHEMA_ERRORS_SHOWN
    if more > 0:
        shown += f"; and {counted(more, 'more error')}"
    return False, f"{check.path} does not match its schema: {shown}", "make it match the schema"


def _command_check(check: CommandCheck, evidence: StageEvidence) -> _Verdict:
    command = command_text(check.argv)
    outcome = evidence.run_command(check.argv, check.timeout)
    ok = outcome.exit_code == check.exit_code and not outcome.timed_out
    if outcome.error is not None:
        head = f"{command} could not start: {outcome.error}"
    elif outcome.timed_out:
        head = f"{command} did not finish within {check.timeout:g} s"
    elif outcome.exit_code is None:
        head = f"{command} did not finish"
    elif outcome.exit_code < 0:
        head = f"{command} was killed by {_signal_name(-outcome.exit_code)}"
    else:
        head = f"{command} exited with {outcome.exit_code}"
    tail = output_tail(outcome.output)
    if outcome.error is None:
        head += f"\nlast output:\n{tail}" if tail else "\n(no output)"
    remedy = f"it must exit with {check.exit_code}"
    if outcome.timed_out:
        remedy = f"it must finish within {check.timeout:g} s and exit with {check.exit_code}"
    return ok, head, remedy


def _changed(check: Changed, evidence: StageEvidence) -> _Verdict:
    changed = sorted(evidence.changed_paths())
    matching = [path for path in changed if glob_matches(check.glob, path)]
    remedy = f"add or modify a file matching {check.glob}"
    if matching:
        return True, f"changed: {listing(matching)}", ""
    if not changed:
        return False, "no file was added or modified", remedy
    return False, f"no changed file matches {check.glob} (changed: {listing(changed)})", remedy


def _tools_used(check: ToolsUsed, evidence: StageEvidence) -> _Verdict:
    successes = evidence.tool_successes()
    used = sorted(name for name, count in successes.items() if count > 0)
    listed = (
        f"tools used: {listing([f'{name} ({successes[name]})' for name in used])}"
        if used
        else "no tool was used successfully"
    )
    if any(successes.get(tool, 0) > 0 for tool in check.tools):
        return True, listed, ""
    missing = (
        f"{check.tools[0]} was not used successfully"
        if len(check.tools) == 1
        else f"none of {', '.join(check.tools)} was used successfully"
    )
    return False, f"{missing} ({listed})", f"use {either(check.tools)} successfully at least once"


def _dir_files(check: DirFiles, evidence: StageEvidence) -> _Verdict:
    wanted = f" holding at least {counted(check.min, 'file')}" if check.min else ""
    try:
        files = sorted(evidence.files_under(check.path))
    except (FileNotFoundError, NotADirectoryError) as exc:
        found = "is a file" if isinstance(exc, NotADirectoryError) else "does not exist"
        return False, f"{check.path} {found}", f"create the directory {check.path}{wanted}"
    except OSError as exc:
        problem = exc.strerror or str(exc)
        return False, f"{check.path} cannot be listed: {problem}", "make it a readable directory"
    except ValueError as exc:
        return False, str(exc), "make it a directory inside the work directory"
    held = f"{check.path} holds {counted(len(files), 'file')}"
    if files:
        held += f": {listing(files)}"
    if len(files) >= check.min:
        return True, held, ""
    missing = check.min - len(files)
    return False, held, f"it needs at least {check.min}: add {counted(missing, 'more file')}"


def _read(evidence: StageEvidence, path: str, wanted: str) -> tuple[str | None, str, str]:
    """(text, "", "") for a readable file; (None, problem, remedy) otherwise. ``wanted``
    completes the remedy for a missing file: "create it" + " with at least 20 lines"."""
    try:
        return evidence.read_text(path), "", ""
    except (FileNotFoundError, NotADirectoryError):
        return None, f"{path} does not exist", f"create it{wanted}"
    except IsADirectoryError:
        return None, f"{path} is a directory, not a file", f"it must be a file{wanted}"
    except PermissionError:
        return None, f"{path} cannot be read (permission denied)", "make it readable"
    except OSError as exc:
        return None, f"{path} cannot be read: {exc.strerror or exc}", "make it a readable file"
    except ValueError as exc:
        return None, str(exc), "make it a regular file inside the work directory"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _path_key(parts: Iterable[object]) -> list[tuple[int, int, str]]:
    # Array indexes sort numerically ($.items[2] before $.items[10]), keys alphabetically.
    return [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in parts]
