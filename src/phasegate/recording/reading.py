"""Reading a recording folder back (``docs/recordings.md``, "The folder"), within bounds.

A recording may come from anywhere (a CI artifact, a colleague's machine), so it is read as
untrusted: each file through the bounded reader, never through a symbolic link (a link in the
folder could lead anywhere), every file a manifest names kept inside the folder, and every
value checked for its type. What cannot be read raises :class:`~phasegate.errors.RecordingError`
naming the file and what is wrong with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from phasegate._files.limits import (
    FileTooLargeError,
    NotRegularFileError,
    ParseProblem,
    describe_bytes,
    read_bounded,
)
from phasegate._files.models import Number, WholeNumber, validate_model
from phasegate._files.parsing import parse_json
from phasegate.errors import RecordingError
from phasegate.evidence.transcript import Entry
from phasegate.modes import RECORDING_PAGE
from phasegate.recording.model import RECORDING_VERSION

MANIFEST = "recording.json"
"""The manifest's file name, the one file that makes a folder a recording."""
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
"""The largest ``recording.json`` read."""
MAX_LOG_BYTES = 64 * 1024 * 1024
"""The largest ``report.json``, ``transcript.jsonl`` or ``checks.jsonl`` read (long tool
results are cut by the writer, so a run of thousands of tool calls stays well below it)."""
MAX_DIFF_BYTES = 16 * 1024 * 1024
"""The largest diff read."""

_ENTRY: TypeAdapter[Any] = TypeAdapter(Entry)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Part(_Model):
    kind: str
    index: WholeNumber | None = None
    name: str
    visit: WholeNumber | None = None
    status: str
    attempts: WholeNumber = 0
    entries: tuple[WholeNumber, WholeNumber]
    input_tokens: WholeNumber = 0
    output_tokens: WholeNumber = 0
    cost_usd: Number | None = None
    duration_ms: Number | None = None
    diff: str | None = None
    diff_files: tuple[str, ...] = ()
    diff_cut: bool = False
    diff_note: str | None = None


class _Unowned(_Model):
    entries: tuple[tuple[WholeNumber, WholeNumber], ...] = ()
    input_tokens: WholeNumber = 0
    output_tokens: WholeNumber = 0
    cost_usd: Number | None = None


class _Files(_Model):
    report: str | None = "report.json"
    transcript: str = "transcript.jsonl"
    checks: str = "checks.jsonl"
    page: str | None = RECORDING_PAGE


class _Manifest(_Model):
    recording_version: WholeNumber
    kind: str
    name: str
    run_id: str | None = None
    verdict: str
    mode: str | None = None
    error: str | None = None
    written_at: str | None = None
    phasegate_version: str | None = None
    parts: tuple[_Part, ...] = ()
    unowned: _Unowned = Field(default_factory=_Unowned)
    files: _Files = Field(default_factory=_Files)
    cut: tuple[str, ...] = ()


class _Issue(_Model):
    code: str
    message: str
    phase: WholeNumber | None = None


class _Check(_Model):
    part: WholeNumber
    attempt: WholeNumber | None = None
    trigger: str
    accepted: bool
    issues: tuple[_Issue, ...] = ()
    feedback: str | None = None
    entry: WholeNumber | None = None


@dataclass(frozen=True, slots=True)
class IssueSeen:
    """One issue a gate check found: its stable ``code``, the ``message`` and the phase."""

    code: str
    message: str
    phase: int | None


@dataclass(frozen=True, slots=True)
class CheckSeen:
    """One gate check (a line of ``checks.jsonl``): the part it judged (an index into
    :attr:`Recording.parts`), the attempt, what ``trigger`` ran it, whether it accepted, the
    issues, the exact ``feedback`` the model received, and the transcript position."""

    part: int
    attempt: int | None
    trigger: str
    accepted: bool
    issues: tuple[IssueSeen, ...]
    feedback: str | None
    entry: int | None


@dataclass(frozen=True, slots=True)
class PartSeen:
    """One phase, or one visit to a stage, with its figures and its diff's text."""

    kind: str
    index: int | None
    name: str
    visit: int | None
    status: str
    attempts: int
    entries: tuple[int, int]
    """The half-open range of transcript positions the part owns."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_ms: float | None
    diff: str | None
    """The diff's text, or None when the part has none."""
    diff_file: str | None
    """The diff's file name inside the folder."""
    diff_files: tuple[str, ...]
    diff_cut: bool
    diff_note: str | None


@dataclass(frozen=True, slots=True)
class Unowned:
    """What no part owns: the transcript ranges, and their tokens and cost."""

    entries: tuple[tuple[int, int], ...]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording folder, read and checked: the manifest's fields, the transcript entries
    (in order, position ``i`` is the index), the gate checks, and the report as a mapping
    (empty when the folder has none)."""

    folder: Path
    kind: str
    name: str
    run_id: str | None
    verdict: str
    mode: str | None
    error: str | None
    """What ended a run that crashed (None otherwise)."""
    written_at: str | None
    phasegate_version: str | None
    parts: tuple[PartSeen, ...]
    unowned: Unowned
    entries: tuple[Any, ...]
    """The transcript entries (:data:`phasegate.evidence.transcript.Entry` models)."""
    checks: tuple[CheckSeen, ...]
    cut: tuple[str, ...]
    report: dict[str, Any]
    page_file: str
    """The page's file name inside the folder (``index.html``, also when the manifest names
    none: the folder was written without its page)."""


def is_recording(folder: Path) -> bool:
    """Whether ``folder`` holds a recording's manifest (a real file, not a link)."""
    manifest = folder / MANIFEST
    return manifest.is_file() and not manifest.is_symlink()


def read_recording(folder: Path) -> Recording:
    """The recording in ``folder``, read whole and checked against the contract.

    Raises :class:`~phasegate.errors.RecordingError` naming the folder or file and what is
    wrong: no such folder, no manifest (not a recording), a newer ``recording_version``, a
    file missing, too large, a link, not UTF-8, not JSON, or a value of the wrong kind.
    """
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise RecordingError(folder, None, f"{what}; expected a recording folder")
    manifest_path = folder / MANIFEST
    if not manifest_path.exists() and not manifest_path.is_symlink():
        raise RecordingError(
            folder, None, f"is not a recording: it holds no {MANIFEST} (the folder a run "
            "records into holds one)"
        )  # fmt: skip
    data = _object(manifest_path, _read(manifest_path, MAX_MANIFEST_BYTES))
    version = data.get("recording_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordingError(manifest_path, "recording_version",
                             "is missing or not a whole number; is this a recording?")  # fmt: skip
    if version > RECORDING_VERSION:
        raise RecordingError(
            manifest_path, "recording_version", f"is {version}; this phasegate reads version "
            f"{RECORDING_VERSION}: view it with a newer phasegate"
        )  # fmt: skip
    manifest = validate_model(_Manifest, data, path=manifest_path, error=RecordingError)
    entries = _transcript(folder, manifest)
    parts = tuple(_part(folder, n, part, len(entries)) for n, part in enumerate(manifest.parts))
    checks = _checks(folder, manifest, len(parts))
    report: dict[str, Any] = {}
    if manifest.files.report is not None:
        report_path = _inside(folder, manifest.files.report, "files.report")
        if report_path.exists() or report_path.is_symlink():
            report = _object(report_path, _read(report_path, MAX_LOG_BYTES))
    unowned = manifest.unowned
    return Recording(
        folder=folder, kind=manifest.kind, name=manifest.name, run_id=manifest.run_id,
        verdict=manifest.verdict, mode=manifest.mode, error=manifest.error,
        written_at=manifest.written_at,
        phasegate_version=manifest.phasegate_version, parts=parts,
        unowned=Unowned(unowned.entries, unowned.input_tokens, unowned.output_tokens,
                        unowned.cost_usd),
        entries=entries, checks=checks, cut=manifest.cut, report=report,
        page_file=_inside(folder, manifest.files.page or RECORDING_PAGE, "files.page").name,
    )  # fmt: skip


def _transcript(folder: Path, manifest: _Manifest) -> tuple[Any, ...]:
    path = _inside(folder, manifest.files.transcript, "files.transcript")
    entries: list[Any] = []
    for number, line in _lines(path):
        data = dict(line)
        position = data.pop("i", None)
        if position != len(entries):
            expected = f"expected {len(entries)}: the entries are numbered in order from 0"
            raise RecordingError(path, f"line {number}", f'"i" is {position!r}, {expected}')
        try:
            entries.append(_ENTRY.validate_python(data))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(step) for step in first["loc"]) or "the entry"
            raise RecordingError(path, f"line {number}", f"{where}: {first['msg']}") from None
    return tuple(entries)


def _checks(folder: Path, manifest: _Manifest, parts: int) -> tuple[CheckSeen, ...]:
    path = _inside(folder, manifest.files.checks, "files.checks")
    checks = []
    for number, line in _lines(path):
        try:
            check = _Check.model_validate(line)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(step) for step in first["loc"])
            raise RecordingError(path, f"line {number}", f"{where}: {first['msg']}") from None
        if not 0 <= check.part < parts:
            raise RecordingError(path, f"line {number}", f"part {check.part} is not one of the "
                                 f"{parts} parts in {MANIFEST}")  # fmt: skip
        issues = tuple(IssueSeen(i.code, i.message, i.phase) for i in check.issues)
        checks.append(CheckSeen(check.part, check.attempt, check.trigger, check.accepted,
                                issues, check.feedback, check.entry))  # fmt: skip
    return tuple(checks)


def _part(folder: Path, number: int, part: _Part, entries: int) -> PartSeen:
    start, end = part.entries
    if not 0 <= start <= end <= entries:
        raise RecordingError(
            folder / MANIFEST, f"parts.{number}.entries", f"[{start}, {end}) is not a range of "
            f"the transcript's {entries} entries"
        )  # fmt: skip
    diff = None
    diff_file = None
    if part.diff is not None:
        path = _inside(folder, part.diff, f"parts.{number}.diff")
        diff_file = PurePosixPath(part.diff).as_posix()
        diff = _decoded(path, _read(path, MAX_DIFF_BYTES))
    return PartSeen(
        kind=part.kind, index=part.index, name=part.name, visit=part.visit, status=part.status,
        attempts=part.attempts, entries=(start, end), input_tokens=part.input_tokens,
        output_tokens=part.output_tokens, cost_usd=part.cost_usd, duration_ms=part.duration_ms,
        diff=diff, diff_file=diff_file, diff_files=part.diff_files, diff_cut=part.diff_cut,
        diff_note=part.diff_note,
    )  # fmt: skip


def _inside(folder: Path, name: str, field: str) -> Path:
    """``folder / name`` for a relative name that stays inside the folder (no ``..``, no
    absolute path): the manifest names files, it never reaches out of its folder."""
    relative = PurePosixPath(name)
    if (not name or "\x00" in name or "\\" in name or relative.is_absolute()
            or any(step in ("..", "") for step in relative.parts)):  # fmt: skip
        problem = f"{name!r} is not a file name inside the recording folder"
        raise RecordingError(folder / MANIFEST, field, problem)
    return folder.joinpath(*relative.parts)


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_bounded(path, limit, follow_links=False)
    except FileNotFoundError:
        raise RecordingError(path, None, "is missing; the recording is incomplete") from None
    except NotRegularFileError as exc:
        raise RecordingError(
            path, None, f"{exc.strerror}; expected a file of the recording"
        ) from None
    except FileTooLargeError:
        raise RecordingError(path, None, f"is larger than {describe_bytes(limit)}, the most "
                             "phasegate reads of it") from None  # fmt: skip
    except OSError as exc:
        problem = exc.strerror or str(exc)
        raise RecordingError(path, None, f"cannot be read: {problem}") from None


def _decoded(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordingError(path, None, f"is not UTF-8 text (byte {exc.start} cannot be "
                             "decoded)") from None  # fmt: skip


def _object(path: Path, raw: bytes, field: str | None = None) -> dict[str, Any]:
    try:
        data = parse_json(_decoded(path, raw))
    except ParseProblem as exc:
        raise RecordingError(path, field, str(exc)) from None
    if not isinstance(data, dict):
        raise RecordingError(path, field, f"expected a JSON object, found {_kind_of(data)}")
    return data


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    text = _decoded(path, _read(path, MAX_LOG_BYTES))
    lines = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                data = parse_json(line)
            except ParseProblem as exc:
                raise RecordingError(path, f"line {number}", str(exc)) from None
            if not isinstance(data, dict):
                raise RecordingError(path, f"line {number}",
                                     f"expected a JSON object, found {_kind_of(data)}")  # fmt: skip
            lines.append((number, data))
    return lines


def _kind_of(data: object) -> str:
    names = {list: "a list", str: "a string", bool: "true or false", int: "a number",
             float: "a number", type(None): "null"}  # fmt: skip
    return names.get(type(data), type(data).__name__)
