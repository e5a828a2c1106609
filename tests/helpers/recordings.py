"""Reading a recording folder back in tests: its manifest, checks, transcript and diffs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER

MANIFEST_KEYS = {
    "recording_version", "kind", "name", "run_id", "verdict", "mode", "error", "written_at",
    "phasegate_version", "parts", "unowned", "files", "cut",
}  # fmt: skip
PART_KEYS = {
    "kind", "index", "name", "visit", "status", "attempts", "entries", "input_tokens",
    "output_tokens", "cost_usd", "duration_ms", "diff", "diff_files", "diff_cut", "diff_note",
}  # fmt: skip


CLAIM_FIRST: list[dict[str, Any]] = [
    {"text": MARKER},  # claims the phase before the edit: the gate refuses it
    {"when": "user", "tools": [EDIT]},
    {"when": "tool_result", "text": f"{MARKER}\n{GOOD_JSON}"},
]
"""A gate run with feedback: the early claim is refused, the edit made, then accepted."""
COMPLETION_SUMMARY = {
    "files_changed": ["app.py"],
    "description": "Replaced eval with float parsing.",
}
COMPLETION_TOOLS: list[dict[str, Any]] = [
    {"tools": [{"phase_complete": {"phase": 1, "note": "done"}}]},
    {"when": "tool_error", "tools": [EDIT]},
    {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "fixed"}}]},
    {"when": "tool_result", "tools": [{"submit_summary": {"summary": COMPLETION_SUMMARY}}]},
    {"text": "Done."},
]
"""A task completed through the completion tools: phase_complete refused before the edit,
accepted after it, then submit_summary."""
SPEC_V2 = "import sys; sys.exit('v2' not in open('spec.md').read())"
REVISION: dict[str, Any] = {
    "name": "revise",
    "stages": [
        {"name": "architect", "prompt": "Write spec.md.",
         "exit_when": [{"file_exists": "spec.md"}]},
        {"name": "implement", "prompt": "Implement spec.md.",
         "exit_when": [{"command": {"argv": ["python3", "-c", SPEC_V2]}}],
         "on_fail": {"retry": 0, "back_to": "architect"}},
    ],
}  # fmt: skip
"""implement passes only once spec.md says v2: its first visit sends the run back."""


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording folder as read back."""

    folder: Path
    manifest: dict[str, Any]
    checks: list[dict[str, Any]]
    transcript: list[dict[str, Any]]
    report: dict[str, Any] | None

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The manifest's parts."""
        return list(self.manifest["parts"])

    def diff(self, part: int) -> str:
        """The diff text of part ``part`` (empty when it has none)."""
        name = self.parts[part]["diff"]
        return "" if name is None else (self.folder / name).read_text(encoding="utf-8")


def read_recording(folder: Path) -> Recording:
    """Read ``folder`` and check the shape docs/recordings.md promises."""
    manifest = json.loads((folder / "recording.json").read_text(encoding="utf-8"))
    assert set(manifest) == MANIFEST_KEYS, set(manifest) ^ MANIFEST_KEYS
    assert manifest["recording_version"] == 1
    for part in manifest["parts"]:
        assert set(part) == PART_KEYS, set(part) ^ PART_KEYS
    files = manifest["files"]
    report_name = files["report"]
    report = json.loads((folder / report_name).read_text()) if report_name else None
    lines = (folder / files["transcript"]).read_text(encoding="utf-8").splitlines()
    transcript = [json.loads(line) for line in lines]
    assert [entry["i"] for entry in transcript] == list(range(len(transcript)))
    checks_text = (folder / files["checks"]).read_text(encoding="utf-8")
    checks = [json.loads(line) for line in checks_text.splitlines()]
    assert not any(p.name.startswith("phasegate-recording-") for p in folder.parent.iterdir()), (
        "a scratch folder was left beside the recording"
    )
    return Recording(folder, manifest, checks, transcript, report)


def assert_adds_up(recording: Recording) -> None:
    """The parts' tokens and cost plus ``unowned`` are the report's totals."""
    assert recording.report is not None
    usage = recording.report["usage"]
    parts, unowned = recording.parts, recording.manifest["unowned"]
    for name in ("input_tokens", "output_tokens"):
        assert sum(p[name] for p in parts) + unowned[name] == usage[name], name
    if usage["cost_usd"] is not None:
        cost = sum(p["cost_usd"] or 0.0 for p in parts) + unowned["cost_usd"]
        assert abs(cost - usage["cost_usd"]) < 1e-6
