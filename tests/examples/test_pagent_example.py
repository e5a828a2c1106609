"""examples/pagent: pagent's own pipeline file, run as it is through the real Claude Code CLI
against the scripted model, and converted to phasegate YAML with the same verdicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import phasegate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pagent"
MODEL = EXAMPLE / "model.yaml"
PAGENT_FILE = Path(".claude") / "pagent-pipeline.json"


def fresh_project(tmp_path: Path, name: str) -> Path:
    """A copy of the example's work directory, its pagent file inside it."""
    return shutil.copytree(EXAMPLE / "project", tmp_path / name)


def verdicts(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a run decided, stage by stage: status, checks run, and each check's outcome."""
    return [
        (
            stage["name"],
            stage["status"],
            stage["attempts"],
            [(c["kind"], c["ok"], c["description"]) for c in stage["checks"]],
        )
        for stage in report["stages"]
    ]


@pytest.mark.cli
def test_the_pagent_file_runs_to_completion_in_one_session_and_its_conversion_agrees(
    tmp_path: Path,
) -> None:
    """All four condition kinds (file_exists, +min_lines, directory_exists+min_files,
    promise_in_output) map onto phasegate's checks; the run needs one session, the two slips
    each cost one feedback round; `pipeline convert` gives a file with the same verdicts."""
    work = fresh_project(tmp_path, "pagent-run")
    done = phasegate(
        "pipeline", "run", work / PAGENT_FILE, "--workdir", work, "--model-script", MODEL,
        "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["pipeline"], report["verdict"], report["sessions"]) == (
        "prd-to-code",
        "accepted",
        1,
    )
    assert [(name, status, attempts, [k for k, _, _ in checks])
            for name, status, attempts, checks in verdicts(report)] == [
        ("architect", "accepted", 1, ["file_exists", "min_lines"]),
        ("qa", "accepted", 1, ["file_exists"]),
        ("implementer", "accepted", 2, ["dir_files"]),
        ("verifier", "accepted", 2, ["said"]),
    ]  # fmt: skip
    assert "<promise>DONE</promise>" in (work / "verification-report.md").read_text()

    converted = tmp_path / "converted.yaml"
    conversion = phasegate("pipeline", "convert", work / PAGENT_FILE)
    assert conversion.returncode == 0, conversion.stderr
    converted.write_text(conversion.stdout)
    again = fresh_project(tmp_path, "converted-run")
    redone = phasegate(
        "pipeline", "run", converted, "--workdir", again, "--model-script", MODEL, "--json", "-q"
    )
    assert redone.returncode == 0, redone.stderr
    assert verdicts(json.loads(redone.stdout)) == verdicts(report)


def test_the_same_file_with_a_condition_kind_we_do_not_know_is_refused_at_load(
    tmp_path: Path,
) -> None:
    """Exit 2 naming the stage and the kind, before any agent starts (pagent lets it pass)."""
    work = fresh_project(tmp_path, "unknown-kind")
    data = json.loads((work / PAGENT_FILE).read_text())
    data["stages"][2]["exit_when"] = {"kind_we_do_not_know": 1}
    (work / PAGENT_FILE).write_text(json.dumps(data))
    done = phasegate(
        "pipeline", "run", work / PAGENT_FILE, "--workdir", work, "--model-script", MODEL
    )
    assert done.returncode == 2
    assert "stages.2.exit_when: stage 'implementer': unknown condition kind " in done.stderr
    assert "'kind_we_do_not_know'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / ".phasegate").exists()
    converted = phasegate("pipeline", "convert", work / PAGENT_FILE)
    assert converted.returncode == 2 and converted.stdout == ""
