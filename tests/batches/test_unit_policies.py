"""A batch unit runs its definition through the one runner, so a phase's tool policy holds
there as in ``phasegate run``: a summary handed in before the work is refused, and the unit's
report and events say so."""

from __future__ import annotations

import json
from pathlib import Path

from phasegate.testing import Script
from tests.helpers.batch_dirs import make_unit, run_into
from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER

EARLY = {"submit_summary": {"summary": {"files_changed": ["app.py"]}}}


def test_a_units_early_summary_is_refused_and_its_report_says_so(tmp_path: Path) -> None:
    script = Script.model_validate({"replies": [
        {"tools": [EARLY]},
        {"when": "tool_error", "text": "Fixing it.", "tools": [EDIT]},
        {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"},
    ]})  # fmt: skip
    outcome = run_into(tmp_path, make_unit("policy", "gate", 1), script)

    assert outcome.verdict == "accepted"
    report = json.loads(outcome.files["report.json"])
    (refused,) = report["phases"][0]["refusals"]
    assert refused["tool"] == "mcp__phasegate__submit_summary"
    assert "phase 1 (edit) is not complete" in refused["reason"]
    events = [json.loads(line) for line in outcome.files["events.jsonl"].splitlines()]
    assert [e["tool"] for e in events if e["event"] == "tool.refused"] == [refused["tool"]]
