"""Judging a pipeline stage's exit checks (``exit_when``): the evidence they may ask for,
the words that say what each requires, and the evaluation.

**Evidence.** Judging stays pure by asking everything through the :class:`StageEvidence` it
is handed; the runner's implementation (:mod:`phasegate.workspace.checks`) reads the
disk and runs the commands. What the work directory holds (file contents, command output) is
untrusted: it only ever appears as data in an outcome's detail, never as something to act on.

**Words.** :func:`describe` says what a check requires as a short clause. The clauses appear
twice: in the stage prompt, so the agent knows what "done" means before it starts, and in
each :class:`CheckOutcome`, so feedback and reports say what must hold. The small helpers
(:func:`counted`, :func:`listing`, :func:`command_text`) phrase commands, counts and lists the
same way in descriptions and in what evaluation found.

**Evaluation.** Every check is evaluated, in order, and each yields a :class:`CheckOutcome`
that says what must hold, what was found and, when it fails, what would make it hold: the
remedy the stage feedback carries. A remedy depends on what was found (a missing file needs
creating, a short one needs more lines), so it is worded here.

One concept in one module (about 540 lines): the three parts change together whenever a
check kind is added.
"""

from __future__ import annotations

import json
import shlex
import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

from phasegate._files.globs import glob_matches
from phasegate.evidence.transcript import Usage
from phasegate.phases.checks import (
    Changed,
    Check,
    CommandCheck,
    DirFiles,
    FileExists,
    JsonValid,
    MinLines,
    Rubric,
    Said,
    ToolsUsed,
)
from phasegate.phases.promises import (
    code_point,
    invisible_characters,
    mentioned_promises,
    promise_tag,
    said_promises,
    tagged,
    visible,
)
from phasegate.phases.schemas import schema_validator
from phasegate.validators.grading import NO_GRADER, CriterionVerdict, describe_rubric

DETAIL_OUTPUT_LINES = 40
"""At most this many last lines of a command's output go into an outcome's detail."""
DETAIL_OUTPUT_CHARS = 2000
"""At most this many last characters of a command's output go into an outcome's detail."""


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

    def files_under(self, path: str) -> Sequence[str]:
        """The relative POSIX paths of the files inside directory ``path``, at any depth,
        as a workspace snapshot sees them (what snapshots skip is not there).

        Raises :class:`FileNotFoundError` when it does not exist, :class:`NotADirectoryError`
        when it is not a directory, and :class:`ValueError` when it leads outside the work
        directory.
        """
        ...

    def assistant_texts(self) -> Sequence[str]:
        """The agent's own text blocks during the stage, in order (never tool inputs, tool
        results or user messages)."""
        ...


def output_tail(
    text: str, *, max_lines: int = DETAIL_OUTPUT_LINES, max_chars: int = DETAIL_OUTPUT_CHARS
) -> str:
    """The end of ``text``: at most its last ``max_lines`` lines and ``max_chars``
    characters, with a leading ``…`` when something was cut. Control characters but tab and
    line end (an escape sequence, a lone carriage return, a NUL) are shown as visible
    escapes (``\\x1b``): a command's output reaches the model, terminals and pages."""
    stripped = text.replace("\r\n", "\n").rstrip()
    lines = visible_controls(stripped).split("\n") if stripped else []
    kept = "\n".join(lines[-max_lines:])
    cut = len(lines) > max_lines
    if len(kept) > max_chars:
        kept, cut = kept[-max_chars:], True
    return f"…{kept}" if cut else kept


_CONTROLS = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\t\n"
}
_CONTROLS[ord("\r")] = "\\r"


def visible_controls(text: str) -> str:
    """``text`` with each control character but tab and line feed written as an escape
    (``\\x1b``, ``\\r``), so that none acts on what shows it."""
    return text.translate(_CONTROLS)


LISTED_NAMES = 10
"""Names a detail lists before it says "and N more"."""


def describe(check: Check) -> str:
    """What ``check`` requires, as a short clause (``architecture.md exists``)."""
    match check:
        case FileExists():
            return f"{check.path} exists"
        case MinLines():
            return f"{check.path} has at least {counted(check.n, 'line')}"
        case JsonValid():
            if check.schema_ is None:
                return f"{check.path} holds valid JSON"
            return f"{check.path} holds JSON valid against its schema"
        case CommandCheck():
            return (
                f"{command_text(check.argv)} exits with {check.exit_code} "
                f"within {check.timeout:g} s"
            )
        case Changed():
            return f"a file matching {check.glob} is added or modified"
        case ToolsUsed():
            return f"{either(check.tools)} is used successfully at least once"
        case DirFiles():
            if check.min == 0:
                return f"the directory {check.path} exists"
            return (
                f"{check.path} holds at least {counted(check.min, 'file')} (subdirectories count)"
            )
        case Said():
            return (
                f"you say {promise_tag(check.text)} yourself in this stage, on a line of its "
                "own, outside code"
            )
        case Rubric():
            return describe_rubric(check)
        case _:
            assert_never(check)


def describe_task(name: str) -> str:
    """What a stage's phased task requires, worded like :func:`describe`."""
    return f"every phase of task {name} is accepted by the gate"


def command_text(argv: Sequence[str]) -> str:
    """``argv`` quoted as a shell would need it, in backticks."""
    # For display only: the command never runs in a shell.
    return f"`{shlex.join(argv)}`"


def counted(n: int, noun: str) -> str:
    """``1 line``, ``7 lines``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def either(names: Sequence[str]) -> str:
    """``Edit``; ``Edit, MultiEdit or Write``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def listing(names: Sequence[str]) -> str:
    """``names`` joined by commas, at most :data:`LISTED_NAMES` of them, then a count."""
    shown = ", ".join(names[:LISTED_NAMES])
    more = len(names) - LISTED_NAMES
    return shown if more <= 0 else f"{shown} and {more} more"


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
    exit_code: int | None = None
    """For a ``command`` check, the exit status it ended with (None: it did not finish or
    could not start; for every other kind, always None)."""
    criteria: tuple[CriterionVerdict, ...] = ()
    """For a ``rubric`` a grader judged, its verdict on each criterion (empty otherwise)."""
    grader_usage: Usage | None = None
    """For a ``rubric``, what its grader's sessions cost in this outcome (None: no grader
    session ran for it, as for every other kind; an answer kept for equal evidence cost
    nothing again)."""

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready data: ``kind``, ``description``, ``ok``, ``detail``, and
        for a graded rubric its ``criteria``."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "description": self.description,
            "ok": self.ok,
            "detail": self.detail,
        }
        if self.criteria:
            data["criteria"] = [verdict.as_dict() for verdict in self.criteria]
        return data


def evaluate(check: Check, evidence: StageEvidence) -> CheckOutcome:
    """Judge one check against ``evidence``."""
    exit_code: int | None = None
    match check:
        case FileExists():
            ok, detail, remedy = _file_exists(check, evidence)
        case MinLines():
            ok, detail, remedy = _min_lines(check, evidence)
        case JsonValid():
            ok, detail, remedy = _json_valid(check, evidence)
        case CommandCheck():
            ok, detail, remedy, exit_code = _command_check(check, evidence)
        case Changed():
            ok, detail, remedy = _changed(check, evidence)
        case ToolsUsed():
            ok, detail, remedy = _tools_used(check, evidence)
        case DirFiles():
            ok, detail, remedy = _dir_files(check, evidence)
        case Said():
            ok, detail, remedy = said_verdict(check, evidence.assistant_texts())
        case Rubric():
            # Judged by a grader, which the check disk runs (workspace/checks.py); evaluated
            # alone, no reader judged it, and it never counts as met.
            ok, detail, remedy = NO_GRADER
        case _:
            assert_never(check)
    return CheckOutcome(
        kind=check.kind,
        description=describe(check),
        ok=ok,
        detail=detail,
        remedy="" if ok else remedy,
        exit_code=exit_code,
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
    import referencing.exceptions  # loaded with the first schema checked

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


def _command_check(
    check: CommandCheck, evidence: StageEvidence
) -> tuple[bool, str, str, int | None]:
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
    if outcome.error is None and not tail:
        head += "\n(no output)"
    elif outcome.error is None:
        cut = tail.startswith("…")
        # Say when the output was cut, so nobody reads the tail as the whole of it.
        label = (
            f"last output (the end only: at most {DETAIL_OUTPUT_LINES} lines and "
            f"{DETAIL_OUTPUT_CHARS} characters are kept)"
            if cut
            else "last output"
        )
        head += f"\n{label}:\n{tail}"
    remedy = f"it must exit with {check.exit_code}"
    if outcome.timed_out:
        remedy = f"it must finish within {check.timeout:g} s and exit with {check.exit_code}"
    exit_code = None if outcome.timed_out else outcome.exit_code
    return ok, head, remedy, exit_code


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


# ---- said: did the agent keep its promise in its own words? -------------------------------
# The agent's text blocks of the stage are searched for <promise>TEXT</promise> on a line of
# prose of its own (phases.promises). When the promise was not said, the detail tells the
# agent what it said instead: another promise, the right one only mentioned inside a
# sentence or a quote, or only inside code.

PROMISE_SHOWN = 80
"""Characters of a promise the agent said that a detail quotes."""


def said_verdict(check: Said, texts: Iterable[str]) -> tuple[bool, str, str]:
    """(ok, detail, remedy) of ``check`` against the agent's text blocks of the stage."""
    wanted = promise_tag(check.text)
    said: list[str] = []
    mentioned: list[str] = []
    quoted: list[str] = []
    for text in texts:
        said.extend(said_promises(text))
        mentioned.extend(mentioned_promises(text))
        quoted.extend(tagged(text))
    remedy = (
        f"only when it is true, say {wanted} on a line of its own in your own reply, as prose "
        "outside code and quotes; mentioning it in a sentence, or writing it into a file or a "
        "tool call, does not count"
    )
    if check.text in said:
        return True, f"you said {wanted}", ""
    if said:
        other = sorted({promise_tag(visible(_clipped(promise))) for promise in said})
        hidden = sorted({c for promise in said for c in invisible_characters(promise)})
        if hidden:
            # Said and asked for would look the same: say what differs, escaped.
            named = ", ".join(code_point(c) for c in hidden)
            return (
                False,
                (
                    f"you said {listing(other)} (invisible characters escaped: {named}), not "
                    f"{wanted}; leave the invisible characters out"
                ),
                remedy,
            )
        return False, f"you said {listing(other)}, not {wanted}", remedy
    if check.text in mentioned:
        return (
            False,
            f"{wanted} appears in your replies only inside a sentence or a quote, not on a "
            "line of its own",
            remedy,
        )
    if check.text in quoted:
        return False, f"{wanted} appears in your replies only inside code", remedy
    return False, f"you did not say {wanted} in this stage", remedy


def _clipped(text: str) -> str:
    return text if len(text) <= PROMISE_SHOWN else text[: PROMISE_SHOWN - 1] + "…"
