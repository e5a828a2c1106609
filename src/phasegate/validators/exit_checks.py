"""Judging a pipeline stage's exit checks (``exit_when``) from evidence handed in.

This module is pure: it reads files, runs commands and asks what changed only through a
:class:`StageEvidence` it is given (:class:`phasegate.sdk.pipelines.evidence.DiskEvidence` is the
real one). Every check is evaluated, in order, and each yields a :class:`CheckOutcome` that
says what must hold, what was found and, when it fails, what would make it hold (the
remedy the stage feedback carries, :func:`phasegate.prompts.stages.failed_checks_json`).

What the work directory holds (file contents, command output) is untrusted: it only ever
appears as data in an outcome's ``detail``, never as something to act on.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

import jsonschema
import referencing.exceptions

from phasegate.phases.pipeline import (
    Changed,
    Check,
    CommandCheck,
    FileExists,
    JsonValid,
    MinLines,
    ToolsUsed,
)

DETAIL_OUTPUT_LINES = 40
"""At most this many last lines of a command's output go into an outcome's detail."""
DETAIL_OUTPUT_CHARS = 2000
"""At most this many last characters of a command's output go into an outcome's detail."""
_SCHEMA_ERRORS_SHOWN = 3
_LISTED = 10  # names listed in a detail before "and N more"


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How one run of a check's command ended."""

    exit_code: int | None
    """The exit status (negative: killed by that signal); None when it did not finish or
    could not start."""
    output: str
    """The tail of its combined stdout and stderr."""
    timed_out: bool = False
    """Whether it was stopped for running past its timeout."""
    error: str | None = None
    """Why it could not start (``"program not found: foo"``), or None."""


class StageEvidence(Protocol):
    """What the exit checks may learn about the work directory at the end of a stage."""

    def read_text(self, path: str) -> str:
        """The text of the file at ``path`` (relative to the work directory).

        Raises an :class:`OSError` subclass when it is missing, unreadable or a directory,
        and :class:`ValueError` when the path leads outside the work directory.
        """
        ...

    def run_command(self, argv: Sequence[str], timeout: float) -> CommandOutcome:
        """Run ``argv`` (no shell) in the work directory, for at most ``timeout`` seconds."""
        ...

    def changed_paths(self) -> Sequence[str]:
        """Relative POSIX paths added or modified during the stage."""
        ...

    def tool_successes(self) -> Mapping[str, int]:
        """Successful calls per tool name during the stage."""
        ...


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


def describe(check: Check) -> str:
    """What ``check`` requires, as a short clause (``architecture.md exists``)."""
    match check:
        case FileExists():
            return f"{check.path} exists"
        case MinLines():
            return f"{check.path} has at least {_count(check.n, 'line')}"
        case JsonValid():
            if check.schema_ is None:
                return f"{check.path} holds valid JSON"
            return f"{check.path} holds JSON valid against its schema"
        case CommandCheck():
            return f"{_command(check.argv)} exits with {check.exit_code} within {check.timeout:g} s"
        case Changed():
            return f"a file matching {check.glob} is added or modified"
        case ToolsUsed():
            return f"{_either(check.tools)} is used successfully at least once"
        case _:
            assert_never(check)


def describe_task(name: str) -> str:
    """What a stage's phased task requires, worded like :func:`describe`."""
    return f"every phase of task {name} is accepted by the gate"


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


def glob_matches(glob: str, path: str) -> bool:
    """Whether the relative POSIX ``path`` matches ``glob``.

    ``*``, ``?`` and ``[...]`` never cross a ``/``; a ``**`` segment matches any number of
    directories, none included (``src/**/*.py`` matches ``src/a.py`` and ``src/x/y/a.py``).
    """
    return _glob_regex(glob).fullmatch(path) is not None


def output_tail(
    text: str, *, max_lines: int = DETAIL_OUTPUT_LINES, max_chars: int = DETAIL_OUTPUT_CHARS
) -> str:
    """The end of ``text``: at most its last ``max_lines`` lines and ``max_chars``
    characters, with a leading ``…`` when something was cut."""
    lines = text.rstrip().splitlines()
    kept = "\n".join(lines[-max_lines:])
    cut = len(lines) > max_lines
    if len(kept) > max_chars:
        kept, cut = kept[-max_chars:], True
    return f"…{kept}" if cut else kept


# --- the checks ----------------------------------------------------------------------------

_Verdict = tuple[bool, str, str]
"""(ok, detail, remedy)."""


def _file_exists(check: FileExists, evidence: StageEvidence) -> _Verdict:
    text, problem, remedy = _read(evidence, check.path, "")
    if text is None:
        return False, problem, remedy
    return True, f"{check.path} exists", ""


def _min_lines(check: MinLines, evidence: StageEvidence) -> _Verdict:
    text, problem, remedy = _read(evidence, check.path, f" with at least {_count(check.n, 'line')}")
    if text is None:
        return False, problem, remedy
    lines = len(text.splitlines())
    return (
        lines >= check.n,
        f"{check.path} has {_count(lines, 'line')}",
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
            jsonschema.validators.validator_for(schema)(schema).iter_errors(value),
            key=lambda error: _path_key(error.absolute_path),
        )
    except referencing.exceptions.Unresolvable as exc:
        # The schema was checked when the pipeline loaded, but a $ref is only followed now.
        return False, f"the schema for {check.path} cannot be applied: {exc}", "fix the schema"
    if not errors:
        return True, f"{check.path} holds JSON valid against its schema", ""
    shown = "; ".join(
        f"at {error.json_path}: {error.message}" for error in errors[:_SCHEMA_ERRORS_SHOWN]
    )
    more = len(errors) - _SCHEMA_ERRORS_SHOWN
    if more > 0:
        shown += f"; and {_count(more, 'more error')}"
    return False, f"{check.path} does not match its schema: {shown}", "make it match the schema"


def _command_check(check: CommandCheck, evidence: StageEvidence) -> _Verdict:
    command = _command(check.argv)
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
        return True, f"changed: {_listing(matching)}", ""
    if not changed:
        return False, "no file was added or modified", remedy
    return False, f"no changed file matches {check.glob} (changed: {_listing(changed)})", remedy


def _tools_used(check: ToolsUsed, evidence: StageEvidence) -> _Verdict:
    successes = evidence.tool_successes()
    used = sorted(name for name, count in successes.items() if count > 0)
    listed = (
        f"tools used: {_listing([f'{name} ({successes[name]})' for name in used])}"
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
    return False, f"{missing} ({listed})", f"use {_either(check.tools)} successfully at least once"


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


# --- wording -------------------------------------------------------------------------------


def _command(argv: Sequence[str]) -> str:
    # Quoted as a shell would need it, for display only: the command never runs in a shell.
    return f"`{shlex.join(argv)}`"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _either(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown if len(names) <= _LISTED else f"{shown} and {len(names) - _LISTED} more"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _path_key(parts: Iterable[object]) -> list[tuple[int, int, str]]:
    # Array indexes sort numerically ($.items[2] before $.items[10]), keys alphabetically.
    return [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in parts]


# --- globs ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``glob`` as a regex for :meth:`re.Pattern.fullmatch` (Python 3.11 has no
    ``PurePath.full_match``, and ``fnmatch`` lets ``*`` cross ``/``)."""
    segments = glob.split("/")
    pattern = ""
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            # Zero or more whole directories; at the end, everything below.
            pattern += ".*" if last else "(?:[^/]+/)*"
        else:
            pattern += _segment_regex(segment) + ("" if last else "/")
    return re.compile(pattern, re.DOTALL)


def _segment_regex(segment: str) -> str:
    """One path segment (no ``/`` in it) of a glob, as a regex that never matches ``/``."""
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        i += 1
        if char == "*":
            if not out or out[-1] != "[^/]*":  # "**" inside a segment is just "*"
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = i + 1 if i < n and segment[i] == "!" else i
            end += 1 if end < n and segment[end] == "]" else 0  # a leading "]" is literal
            end = segment.find("]", end)
            if end < 0:
                out.append(re.escape(char))  # no closing "]": a literal "["
                continue
            body, i = segment[i:end], end + 1
            negated = body.startswith("!")
            # Escape every member but "-" (ranges), so "^", "\\", "[" and "&&" stay literal.
            members = "".join(
                "-" if c == "-" else re.escape(c) for c in (body[1:] if negated else body)
            )
            out.append(f"[^/{members}]" if negated else f"[{members}]")
        else:
            out.append(re.escape(char))
    return "".join(out)
