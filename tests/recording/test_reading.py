"""Reading a recording folder back (phasegate.recording.reading): a foreign or damaged folder
is a RecordingError naming the file and what is wrong, never a trace or a read outside it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import RecordingError, UsageError
from phasegate.evidence.transcript import ToolCall
from phasegate.recording.reading import is_recording, read_recording
from tests.helpers.recording_fixtures import gate_run, pipeline_run


def edit_manifest(folder: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """Rewrite ``recording.json`` with ``change`` applied."""
    data = json.loads((folder / "recording.json").read_text())
    change(data)
    (folder / "recording.json").write_text(json.dumps(data))


def test_a_recording_reads_back_with_its_parts_entries_checks_and_diffs(tmp_path: Path) -> None:
    recording = read_recording(pipeline_run(tmp_path / "run"))

    assert recording.kind == "pipeline"
    assert [(p.name, p.visit) for p in recording.parts] == [
        ("implement", 1), ("review", 1), ("implement", 2), ("review", 2)]  # fmt: skip
    assert recording.parts[0].diff is not None and "+def health()" in recording.parts[0].diff
    assert [c.part for c in recording.checks] == [0, 1, 2, 3]
    assert any(isinstance(e, ToolCall) for e in recording.entries)
    assert is_recording(tmp_path / "run") and not is_recording(tmp_path)


def test_a_missing_folder_and_a_foreign_folder_are_usage_errors_that_say_so(
    tmp_path: Path,
) -> None:
    with pytest.raises(RecordingError, match="does not exist"):
        read_recording(tmp_path / "nothing")
    with pytest.raises(RecordingError, match=r"is not a recording: it holds no recording\.json"):
        read_recording(tmp_path)
    assert issubclass(RecordingError, UsageError)


def replace_with_folder(path: Path) -> None:
    """A folder where the file ``path`` was."""
    path.unlink()
    path.mkdir()


DAMAGES: list[tuple[str, Callable[[Path], object], str]] = [
    ("a manifest that is not JSON", lambda f: (f / "recording.json").write_text("{"),
     r"recording\.json: invalid JSON"),
    ("a manifest that is a list", lambda f: (f / "recording.json").write_text("[]"),
     r"recording\.json: expected a JSON object, found a list"),
    ("a newer version", lambda f: edit_manifest(f, lambda d: d.update(recording_version=9)),
     r"recording_version: is 9; this phasegate reads version 1"),
    ("no version", lambda f: edit_manifest(f, lambda d: d.pop("recording_version")),
     r"recording_version: is missing"),
    ("a part's range past the transcript",
     lambda f: edit_manifest(f, lambda d: d["parts"][0].update(entries=[0, 999])),
     r"parts\.0\.entries: \[0, 999\) is not a range"),
    ("a token count as text",
     lambda f: edit_manifest(f, lambda d: d["parts"][0].update(input_tokens="many")),
     r"parts\.0\.input_tokens: must be a whole number"),
    ("a diff named outside the folder",
     lambda f: edit_manifest(f, lambda d: d["parts"][0].update(diff="../../etc/passwd")),
     r"parts\.0\.diff: '\.\./\.\./etc/passwd' is not a file name inside"),
    ("an absolute transcript",
     lambda f: edit_manifest(f, lambda d: d["files"].update(transcript="/etc/passwd")),
     r"files\.transcript: '/etc/passwd' is not a file name inside"),
    ("a missing transcript", lambda f: (f / "transcript.jsonl").unlink(),
     r"transcript\.jsonl: is missing; the recording is incomplete"),
    ("a transcript line that is not JSON",
     lambda f: (f / "transcript.jsonl").write_text('{"i": 0, "kind": "user", "text": "x"}\n{\n'),
     r"transcript\.jsonl: line 2: invalid JSON"),
    ("entries out of order",
     lambda f: (f / "transcript.jsonl").write_text('{"i": 3, "kind": "user", "text": "x"}\n'),
     r"transcript\.jsonl: line 1: \"i\" is 3, expected 0"),
    ("an entry of an unknown kind",
     lambda f: (f / "transcript.jsonl").write_text('{"i": 0, "kind": "dance"}\n'),
     r"transcript\.jsonl: line 1: "),
    ("a check of a part that is not there",
     lambda f: (f / "checks.jsonl").write_text('{"part": 7, "trigger": "", "accepted": true}'),
     r"checks\.jsonl: line 1: part 7 is not one of the 2 parts"),
    ("a diff that is not UTF-8", lambda f: (f / "diffs" / "01-phase-1.diff").write_bytes(b"\xff"),
     r"01-phase-1\.diff: is not UTF-8 text"),
    ("a transcript that is a folder",
     lambda f: replace_with_folder(f / "transcript.jsonl"),
     r"transcript\.jsonl: is a directory, not a regular file"),
]  # fmt: skip


@pytest.mark.parametrize(("damage", "message"), [(d, m) for _, d, m in DAMAGES],
                         ids=[name for name, _, _ in DAMAGES])  # fmt: skip
def test_a_damaged_recording_is_an_error_naming_the_file_and_the_problem(
    tmp_path: Path, damage: Callable[[Path], object], message: str
) -> None:
    folder = gate_run(tmp_path / "run")
    damage(folder)

    with pytest.raises(RecordingError, match=message):
        read_recording(folder)


def test_files_in_the_folder_are_never_read_through_a_link(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")
    secret = tmp_path / "secret.diff"
    secret.write_text("--- a/x\n+++ b/x\n+secret\n")
    diff = folder / "diffs" / "01-phase-1.diff"
    diff.unlink()
    diff.symlink_to(secret)

    with pytest.raises(RecordingError, match="is a symbolic link"):
        read_recording(folder)


def test_a_fifo_planted_as_the_transcript_is_refused_without_waiting(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")
    (folder / "transcript.jsonl").unlink()
    os.mkfifo(folder / "transcript.jsonl")

    with pytest.raises(RecordingError, match="FIFO"):
        read_recording(folder)
