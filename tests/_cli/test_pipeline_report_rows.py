"""A pipeline's row in ``phasegate report`` and ``phasegate batch report``: its attempts (the
exit checks of its stages) and its duration, the same as its own report says; the real Claude
Code CLI runs the bundled prd-to-code pipeline against its scripted model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.metrics.formatting import duration, number
from tests.helpers.cli import phasegate

pytestmark = pytest.mark.cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "prd-to-code"


def pipeline_group(summary: dict[str, Any]) -> dict[str, Any]:
    """The report's one group of the pipeline."""
    groups: list[dict[str, Any]] = [g for g in summary["groups"] if g["task"] == "prd-to-code"]
    (group,) = groups
    return group


def assert_row_matches(group: dict[str, Any], report: dict[str, Any]) -> None:
    """One run; its attempts the sum of its stages' checks; its duration the report's (a
    group of one run has an exact p50); no phase rows and no mismatch rate (a pipeline
    claims no files); its tokens the report's, none of them outside the stages."""
    attempts = sum(stage["attempts"] for stage in report["stages"])
    assert attempts > len(report["stages"])  # the implement stage failed its first check
    assert (group["runs"], group["accepted"], group["mode"]) == (1, 1, "session")
    assert group["mean_attempts"] == attempts
    assert group["attempts_histogram"] == {str(attempts): 1}
    assert group["first_attempt_rate"] == 0.0
    assert group["duration_ms"]["p50"] == report["duration_ms"]
    assert group["mismatch_rate"] is None
    assert (group["input_tokens"], group["output_tokens"]) == (
        report["usage"]["input_tokens"],
        report["usage"]["output_tokens"],
    )
    assert group["phases"] == []
    assert (
        group["unattributed_usage"]["input_tokens"] == report["unattributed_usage"]["input_tokens"]
    )


def test_phasegate_report_over_a_pipeline_run_log_shows_its_attempts_and_duration(
    tmp_path: Path,
) -> None:
    work, log = tmp_path / "work", tmp_path / "runs.jsonl"
    shutil.copytree(EXAMPLE / "project", work)
    script = EXAMPLE / "model.yaml"
    run = phasegate("pipeline", "run", EXAMPLE / "pipeline.yaml", "--workdir", work,
                    "--model-script", script, "--json", "--log-file", log)  # fmt: skip
    assert run.returncode == 0, run.stderr

    done = phasegate("report", log, "--format", "json")
    table = phasegate("report", log, "--format", "markdown")

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["mode_comparison"] == []  # a pipeline has no modes to compare
    group = pipeline_group(summary)
    assert_row_matches(group, json.loads(run.stdout))
    rows = [line for line in table.stdout.splitlines() if line.startswith("| prd-to-code")]
    assert any(f"| {number(group['mean_attempts'])} |" in row for row in rows)
    assert any(f"| {duration(group['duration_ms']['p50'])} |" in row for row in rows)


def test_batch_report_shows_a_pipeline_units_attempts_and_duration(tmp_path: Path) -> None:
    """A batch of the pipeline and a task: the pipeline's row is its unit's report, and the
    verdicts, tokens and cost still add up to the units' records."""
    batch = tmp_path / "batch.yaml"
    fix = EXAMPLE.parent / "fix-vulnerability"
    items = [
        {"pipeline": str(EXAMPLE / "pipeline.yaml"), "workdir": {"copy": str(EXAMPLE / "project")},
         "model_script": str(EXAMPLE / "model.yaml"), "isolation": "session"},
        {"task": str(fix / "task.yaml"), "workdir": str(fix / "project"),
         "model_script": str(fix / "model.yaml"), "modes": ["gate"]},
    ]  # fmt: skip
    batch.write_text(yaml.safe_dump({"name": "rows", "items": items}))
    out = tmp_path / "out"
    ran = phasegate("batch", "run", batch, "--out", out, "--quiet")
    assert ran.returncode == 0, ran.stderr

    done = phasegate("batch", "report", out, "--format", "json")

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    (folder,) = (out / "units").glob("prd-to-code.*")
    report = json.loads((folder / "report.json").read_text())
    record = json.loads((folder / "unit.json").read_text())["outcome"]
    group = pipeline_group(summary)
    assert_row_matches(group, report)
    assert group["cost_usd"] == pytest.approx(record["cost_usd"])
    assert group["duration_ms"]["p50"] <= record["duration_ms"] * 1.05  # the unit's whole time
    task = next(g for g in summary["groups"] if g["task"] == "fix-vulnerability")
    assert task["mean_attempts"] and task["duration_ms"]["p50"] is not None
    assert summary["runs"] == summary["batch"]["finished"] == 2
    assert summary["batch"]["cost_usd"] == pytest.approx(
        sum(g["cost_usd"] for g in summary["groups"])
    )
