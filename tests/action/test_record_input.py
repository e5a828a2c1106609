"""The action's ``record`` input: ``--record`` reaches the command, the run's page is written
(by the real ``phasegate view``), the folder is handed to actions/upload-artifact, and the
``github`` step is told where the recording is; a damaged recording is a warning whose
details stay out of the log."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import yaml

from tests.helpers.action import REPO
from tests.helpers.composite import ActionRun, CompositeAction
from tests.helpers.recording_fixtures import gate_run

FAKE = """#!/bin/bash
# Stands in for phasegate: keeps the arguments of each command; view is the real one.
if [ "$1" = view ]; then exec "$REAL_PHASEGATE" "$@"; fi
printf '%s\\0' "$@" > "$FAKE_RECORD/args-$1"
if [ "$1" = github ]; then exit 0; fi
echo '{"r": 1}'
exit 0
"""


def run_action(workspace: Path, tmp_path: Path, inputs: dict[str, str]) -> tuple[Path, ActionRun]:
    """The action with a fake phasegate (the real one for ``view``); the fake's folder."""
    record = tmp_path / "fake"
    record.mkdir()
    fake = tmp_path / "phasegate"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    real = shutil.which("phasegate", path=str(Path(sys.executable).parent))
    assert real is not None
    action = CompositeAction(
        REPO, workspace=workspace, runner_temp=tmp_path / "temp",
        python_bin=Path(sys.executable).parent,
        env={"FAKE_RECORD": str(record), "REAL_PHASEGATE": real},
    )  # fmt: skip
    installed = {"phasegate": str(fake), "python": sys.executable}
    return record, action.run(inputs, stand_in={"install": installed})


def args(record: Path, command: str) -> list[str]:
    """The arguments the fake got for ``command``."""
    return (record / f"args-{command}").read_text().split("\0")[:-1]


def test_record_reaches_the_command_the_page_is_written_and_the_summary_step_links_it(
    workspace: Path, tmp_path: Path
) -> None:
    folder = gate_run(workspace / "rec")  # what the run would have recorded
    record, run = run_action(workspace, tmp_path, {"task": "t.yaml", "record": "rec"})

    assert f"--record={folder}" in args(record, "run")
    assert args(record, "run").index(f"--record={folder}") < args(record, "run").index("--")
    page = run.step("page")
    assert page.ran and not page.failed, page.output
    assert page.outputs["recorded"] == "true"
    assert page.outputs["artifact"].startswith("phasegate-recording-")
    assert (folder / "index.html").is_file()
    assert f"--recording={folder}" in args(record, "github")
    assert not [c for c in run.commands if c.name in ("warning", "error")]


def test_the_upload_step_is_actions_upload_artifact_with_the_record_folder() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    (upload,) = [s for s in action["runs"]["steps"] if s.get("id") == "upload"]

    assert upload["uses"] == "actions/upload-artifact@v4"
    assert upload["if"] == "steps.page.outputs.recorded == 'true'"
    assert upload["with"]["path"] == "${{ steps.run.outputs.record }}"
    assert upload["with"]["name"] == "${{ steps.page.outputs.artifact }}"


def test_without_record_nothing_is_recorded_written_or_uploaded(
    workspace: Path, tmp_path: Path
) -> None:
    record, run = run_action(workspace, tmp_path, {"task": "t.yaml"})

    assert not any(a.startswith("--record") for a in args(record, "run"))
    assert not run.step("page").ran
    assert not any(a.startswith("--recording") for a in args(record, "github"))


def test_a_run_that_left_no_recording_is_a_warning_and_no_upload(
    workspace: Path, tmp_path: Path
) -> None:
    _, run = run_action(workspace, tmp_path, {"task": "t.yaml", "record": "rec"})

    page = run.step("page")
    assert page.outputs["recorded"] == "false"
    assert [c.data for c in page.commands if c.name == "warning"] == [
        "the run left no recording in the record folder"
    ]


def test_a_damaged_recording_is_a_warning_and_its_text_never_reaches_the_log(
    workspace: Path, tmp_path: Path
) -> None:
    folder = gate_run(workspace / "rec")
    (folder / "transcript.jsonl").write_text(
        '{"i": 0, "kind": "\\n::error::FORGED\\n::set-output name=x::y"}\n'
    )
    record, run = run_action(workspace, tmp_path, {"task": "t.yaml", "record": "rec"})

    page = run.step("page")
    assert page.outputs["recorded"] == "false"
    assert "FORGED" not in page.output
    assert [c.name for c in page.commands] == ["warning"]
    assert not any(a.startswith("--recording") for a in args(record, "github"))
