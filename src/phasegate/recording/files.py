"""A recording's files, as bytes by name (pure): the manifest, the report, the transcript,
the checks and the diffs (``docs/recordings.md`` says what each holds)."""

from __future__ import annotations

import json
import re
from typing import Any

from phasegate.modes import RECORDING_PAGE
from phasegate.recording.diffs import part_diff
from phasegate.recording.model import RECORDING_VERSION, PartRecord, RunRecord
from phasegate.workspace.contents import FileContents

MANIFEST = "recording.json"
"""The manifest's name: a folder holding it is a recording."""
REPORT = "report.json"
TRANSCRIPT = "transcript.jsonl"
CHECKS = "checks.jsonl"
DIFFS = "diffs"

ENTRY_CHARS = 256 << 10
"""The most characters of one transcript entry's text or tool result a recording keeps; the
rest is cut, and the manifest's ``cut`` says so."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def recording_files(
    run: RunRecord,
    contents: FileContents | None,
    *,
    written_at: str,
    phasegate_version: str | None,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and every file of the recording of ``run`` but the page, which is
    rendered from them (the manifest names it: ``index.html``)."""
    files: dict[str, bytes] = {}
    parts: list[dict[str, Any]] = []
    cut: list[str] = []
    for position, part in enumerate(run.parts, start=1):
        entry, diff_file, text, left_out = _part(position, part, contents)
        parts.append(entry)
        cut.extend(f"Part {position}: {note}" for note in left_out)
        if diff_file is not None:
            files[diff_file] = text.encode("utf-8")
    if run.report_json is not None:
        files[REPORT] = run.report_json.encode("utf-8")
    entries = [_entry(i, entry.model_dump(mode="json"), cut) for i, entry in
               enumerate(run.transcript.entries)]  # fmt: skip
    files[TRANSCRIPT] = _lines(entries)
    files[CHECKS] = _lines(check.as_dict() for check in run.checks)
    manifest = {
        "recording_version": RECORDING_VERSION,
        "kind": run.kind,
        "name": run.name,
        "run_id": run.run_id,
        "verdict": run.verdict,
        "mode": run.mode,
        "error": run.error,
        "written_at": written_at,
        "phasegate_version": phasegate_version,
        "parts": parts,
        "unowned": _unowned(run, len(run.transcript.entries)),
        "files": {
            "report": REPORT if run.report_json is not None else None,
            "transcript": TRANSCRIPT,
            "checks": CHECKS,
            "page": RECORDING_PAGE,
        },
        "cut": cut,
    }
    return manifest, files


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """``recording.json``'s bytes."""
    return (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _part(
    position: int, part: PartRecord, contents: FileContents | None
) -> tuple[dict[str, Any], str | None, str, tuple[str, ...]]:
    """A part's manifest entry, its diff file's name (None: no diff) and text, and what was
    left out of it for size."""
    name = (
        f"{position:02d}-phase-{part.index}"
        if part.kind == "phase"
        else f"{position:02d}-stage-{_safe(part.name)}-visit-{part.visit}"
    )
    diff_file: str | None = None
    text, files, diff_cut = "", list[str](), False
    left_out: tuple[str, ...] = ()
    note: str | None = part.no_diff
    if note is None and (contents is None or part.before is None or part.after is None):
        note = "The work directory was not seen when this part began and ended."
    elif note is None:
        assert contents is not None and part.before is not None and part.after is not None
        diff = part_diff(part.before, part.after, contents)
        text, files, diff_cut, left_out = diff.text, list(diff.files), diff.cut, diff.left_out
        note = " ".join(diff.notes) or None
        if text:
            diff_file = f"{DIFFS}/{name}.diff"
    usage = part.usage
    entry = {
        "kind": part.kind,
        "index": part.index,
        "name": part.name,
        "visit": part.visit,
        "status": part.status,
        "attempts": part.attempts,
        "entries": [part.start, part.end],
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
        "duration_ms": part.duration_ms,
        "diff": diff_file,
        "diff_files": files,
        "diff_cut": diff_cut,
        "diff_note": note,
    }
    return entry, diff_file, text, left_out


def _unowned(run: RunRecord, length: int) -> dict[str, Any]:
    """The entries no part owns, as ranges, and the agent's tokens and cost no part has: the
    report's totals less the parts' and the grader's."""
    owned = [False] * length
    for part in run.parts:
        for position in range(max(part.start, 0), min(part.end, length)):
            owned[position] = True
    ranges: list[list[int]] = []
    for position, is_owned in enumerate(owned):
        if is_owned:
            continue
        if ranges and ranges[-1][1] == position:
            ranges[-1][1] = position + 1
        else:
            ranges.append([position, position + 1])
    parts = sum((part.usage for part in run.parts), run.grader)
    rest = {
        name: getattr(run.total, name) - getattr(parts, name)
        for name in ("input_tokens", "output_tokens")
    }
    total_cost = run.total.cost_usd
    part_costs = [part.usage.cost_usd or 0.0 for part in run.parts]
    spent = sum(part_costs) + (run.grader.cost_usd or 0.0)
    cost = None if total_cost is None else round(total_cost - spent, 6)
    return {"entries": ranges, **rest, "cost_usd": cost}


def _entry(position: int, fields: dict[str, Any], cut: list[str]) -> dict[str, Any]:
    """Transcript entry ``position`` as its line holds it: its text or tool result cut at
    :data:`ENTRY_CHARS` (noted in ``cut``)."""
    for name in ("text", "content"):
        value = fields.get(name)
        if isinstance(value, str) and len(value) > ENTRY_CHARS:
            fields[name] = value[:ENTRY_CHARS]
            cut.append(
                f"Entry {position}: its {name} was cut at {ENTRY_CHARS} of its "
                f"{len(value)} characters."
            )
    return {"i": position, **fields}


def _lines(objects: Any) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode("utf-8")


def _safe(name: str) -> str:
    """A stage name as a piece of a file name: letters, digits, ``_`` and ``-`` only."""
    return _UNSAFE.sub("-", name).strip("-")[:60] or "stage"
