"""examples/batch: the bundled examples as a batch, offline, show what its README says."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from phasegate.batches.loading import load_batch
from tests.helpers.cli import phasegate

ROOT = Path(__file__).resolve().parents[2]
BATCH = ROOT / "examples" / "batch" / "batch.yaml"


def test_the_example_batch_is_eleven_offline_units() -> None:
    """fix-vulnerability three times in each of three modes, prd-to-code twice, all scripted."""
    units = load_batch(BATCH).units
    assert Counter((unit.item, unit.mode or unit.kind) for unit in units) == {
        ("fix-vulnerability", "gate"): 3,
        ("fix-vulnerability", "single-query"): 3,
        ("fix-vulnerability", "unstructured"): 3,
        ("prd-to-code", "pipeline"): 2,
    }
    assert all(unit.model_script is not None for unit in units)


@pytest.mark.cli
def test_the_lazy_model_is_accepted_only_behind_the_gate(tmp_path: Path) -> None:
    """Run through the CLI, the gate's units are accepted and the other modes' rejected; the
    pipeline's are accepted; the merged report's difference interval lies above zero."""
    out = tmp_path / "out"
    done = phasegate("batch", "run", BATCH, "--out", out, "--concurrency", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    verdicts: Counter[tuple[str, str, str]] = Counter()
    for record in (out / "units").glob("*/unit.json"):
        data = json.loads(record.read_text())
        unit = data["unit"]
        verdicts[(unit["item"], unit["mode"] or unit["kind"], data["outcome"]["verdict"])] += 1
    assert verdicts == {
        ("fix-vulnerability", "gate", "accepted"): 3,
        ("fix-vulnerability", "single-query", "rejected"): 3,
        ("fix-vulnerability", "unstructured", "rejected"): 3,
        ("prd-to-code", "pipeline", "accepted"): 2,
    }
    report = phasegate("batch", "report", out, "--format", "json")
    assert report.returncode == 0, report.stderr
    (row,) = json.loads(report.stdout)["mode_comparison"]
    assert row["task"] == "fix-vulnerability"
    assert row["gate_minus_single_query"] == row["gate_minus_unstructured"] == 1.0
    assert row["gate_minus_single_query_interval_95"][0] > 0
    assert row["gate_minus_unstructured_interval_95"][0] > 0
