"""Recorded runs through the real Claude Code CLI against the scripted model server: a gated
task, a pipeline sent back, a loop, a run that fails, and a judged transcript. Each recording
holds what the model really got, checked against what the server saw."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from phasegate import Pipeline, PipelineRunner, Runner, Task
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.batches import batch_writer
from tests.helpers.cli import phasegate
from tests.helpers.recordings import (
    CLAIM_FIRST,
    COMPLETION_TOOLS,
    REVISION,
    assert_adds_up,
    read_recording,
)
from tests.helpers.scenarios import (
    BUGGY_LINE,
    EDIT,
    EXAMPLE,
    FIXED_LINE,
    NO_RETRIES,
)
from tests.helpers.three_stages import THREE, write_step

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def _write(path: str, word: str) -> dict[str, Any]:
    return {"Write": {"file_path": path, "content": f"{word}\n"}}


@pytest.mark.cli
def test_a_gate_run_records_the_refused_check_with_the_feedback_the_model_got_and_the_diff(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The first check refuses the early claim; its feedback in checks.jsonl is byte for
    byte the instruction the server received next; the second check accepts. Phase 1's diff
    is the edit, line for line; the transcript and report are the run's own."""
    server = scripted_model_server(Script.model_validate({"replies": CLAIM_FIRST}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    folder = tmp_path / "recording"

    report = Runner(agent, retry=NO_RETRIES).run_sync(task, project, record=folder)

    assert report.verdict == "accepted"
    recording = read_recording(folder)
    refused, accepted = recording.checks
    assert (refused["accepted"], refused["trigger"], refused["part"]) == (False, "stop", 0)
    assert [(i["code"], i["phase"]) for i in refused["issues"]] == [
        ("tool_not_used", 1), ("no_changes", 1), ("json_missing", 2),
    ]  # fmt: skip
    assert all(json.dumps(i["message"])[1:-1] in refused["feedback"] for i in refused["issues"])
    assert _as_received(server.user_texts()[1]) == refused["feedback"].rstrip("\n")
    assert accepted["accepted"] is True and accepted["feedback"] is None
    assert recording.manifest["kind"] == "task" and recording.manifest["verdict"] == "accepted"
    assert recording.report == json.loads(report.model_dump_json())
    assert report.transcript is not None
    assert len(recording.transcript) == len(report.transcript.entries)
    assert recording.transcript[refused["entry"]]["text"] == refused["feedback"]
    edit, summary = recording.parts
    assert edit["diff_files"] == ["app.py"] and edit["attempts"] == 2
    removed = [line[1:] for line in recording.diff(0).splitlines() if line.startswith("-")]
    added = [line[1:] for line in recording.diff(0).splitlines() if line.startswith("+")]
    assert removed == ["-- a/app.py", BUGGY_LINE.rstrip("\n")]
    assert added == ["++ b/app.py", FIXED_LINE.rstrip("\n")]
    assert summary["diff"] is None and summary["diff_files"] == []
    assert_adds_up(recording)
    page = (folder / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and report.run_id in page


@pytest.mark.cli
def test_a_pipeline_sent_back_records_each_visit_as_a_part_with_its_own_diff(
    work: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """architect, implement (fails, back_to), architect again, implement again: four parts,
    each stage's second visit numbered 2; the revision's diff is v1 to v2; the failed check
    carries the revision prompt the model got."""
    replies = [
        {"contains": "Stage 1 of 2: architect", "tools": [_write("spec.md", "v1")]},
        {"when": "tool_result", "text": "Spec v1."},
        {"contains": "Stage 2 of 2: implement", "text": "Nothing to change."},
        {"contains": "goes back to stage architect", "tools": [_write("spec.md", "v2")]},
        {"when": "tool_result", "text": "Spec v2."},
        {"contains": "Stage 2 of 2: implement", "text": "Implemented."},
    ]
    server = scripted_model_server(Script.model_validate({"replies": replies}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    folder = tmp_path / "recording"

    report = PipelineRunner(agent, retry=NO_RETRIES).run_sync(
        Pipeline.model_validate(REVISION), work, record=folder
    )

    assert report.verdict == "accepted"
    recording = read_recording(folder)
    assert [(p["name"], p["visit"], p["status"]) for p in recording.parts] == [
        ("architect", 1, "accepted"),
        ("implement", 1, "rejected"),
        ("architect", 2, "accepted"),
        ("implement", 2, "accepted"),
    ]
    assert [p["diff"] for p in recording.parts] == [
        "diffs/01-stage-architect-visit-1.diff", None,
        "diffs/03-stage-architect-visit-2.diff", None,
    ]  # fmt: skip
    assert "+v1" in recording.diff(0).splitlines()
    assert [line for line in recording.diff(2).splitlines() if line in ("-v1", "+v2")] == [
        "-v1",
        "+v2",
    ]
    ends = [p["entries"] for p in recording.parts]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ends))
    assert ends[-1][1] == len(recording.transcript)
    sent_back = recording.checks[1]
    assert (sent_back["part"], sent_back["accepted"]) == (1, False)
    assert sent_back["issues"][0]["code"] == "command"
    received = [_as_received(text) for text in server.user_texts()]
    assert sent_back["feedback"].rstrip("\n") in received
    assert "goes back to stage architect" in sent_back["feedback"]
    assert_adds_up(recording)


@pytest.mark.cli
def test_a_loop_on_the_command_line_records_each_iteration_as_a_check_of_its_one_visit(
    work: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Two iterations: the first check's feedback is what the model got; the report is the
    loop's own (its iterations), and the command says where the recording went."""
    replies = [
        {"tools": [_write("notes.md", "draft")]},
        {"when": "tool_result", "text": "Not done yet."},
        {"when": "user", "text": "All done.\n\n<promise>DONE</promise>"},
    ]
    server = scripted_model_server(Script.model_validate({"replies": replies}))
    folder = tmp_path / "loop-recording"
    done = subprocess.run(
        [*_phasegate_argv(), "loop", "Write notes.", "--promise", "DONE", "--workdir", work,
         "-q", "--record", folder],
        capture_output=True, text=True, env=_env(server.env()), timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert f"recording: {folder}" in done.stderr
    recording = read_recording(folder)
    assert recording.manifest["kind"] == "loop"
    assert recording.report is not None and recording.report["iterations"] == 2
    (part,) = recording.parts
    assert (part["name"], part["visit"], part["attempts"]) == ("loop", 1, 2)
    assert [c["accepted"] for c in recording.checks] == [False, True]
    assert _as_received(server.user_texts()[1]) == recording.checks[0]["feedback"].rstrip("\n")
    assert "+draft" in recording.diff(0).splitlines()
    assert_adds_up(recording)


@pytest.mark.cli
@pytest.mark.parametrize(
    ("after_the_edit", "time_limit", "expected"),
    [
        pytest.param({"error": {"status": 500}}, None, "HTTP 500", id="the API fails"),
        pytest.param({"hang": True}, 3.0, "its timeout of 3 s", id="the time limit"),
    ],
)
def test_a_run_that_fails_still_leaves_a_complete_recording(
    task: Task,
    project: Path,
    tmp_path: Path,
    scripted_model_server: ScriptedServerFactory,
    after_the_edit: dict[str, Any],
    time_limit: float | None,
    expected: str,
) -> None:
    """The model edits app.py, then its API fails or never answers: the run ends in error,
    and the recording has the report, the transcript so far and the edit's diff."""
    replies = [{"tools": [EDIT]}, {"when": "tool_result", **after_the_edit}]
    server = scripted_model_server(Script.model_validate({"replies": replies}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    folder = tmp_path / "recording"

    runner = Runner(agent, retry=NO_RETRIES, timeout=time_limit)
    report = runner.run_sync(task, project, record=folder)

    assert report.verdict == "error" and report.error is not None and expected in report.error
    recording = read_recording(folder)
    assert recording.manifest["verdict"] == "error"
    assert recording.report is not None and recording.report["error"] == report.error
    assert any(e["kind"] == "tool_call" and e["name"] == "Edit" for e in recording.transcript)
    assert "+" + FIXED_LINE.rstrip("\n") in recording.diff(0).splitlines()


@pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")
def test_judge_with_record_writes_a_judged_recording_whose_parts_say_why_there_is_no_diff(
    tmp_path: Path,
) -> None:
    """A transcript saved from the real CLI, judged in a checkout with its edit: the folder
    has the report and the one check, and no diffs (no snapshots of that run exist)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "app.py").write_text("def parse(x):\n    return eval(x)\n")
    for args in (["init", "-q"], ["add", "app.py"], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=checkout, check=True, capture_output=True)  # fmt: skip
    (checkout / "app.py").write_text("def parse(x):\n    return int(x)\n")
    folder = tmp_path / "judged"

    done = phasegate(
        "judge", EXAMPLE / "task.yaml", "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json", "--record", folder,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    recording = read_recording(folder)
    assert recording.manifest["kind"] == "judged"
    assert recording.report == json.loads(done.stdout)
    assert all(p["diff"] is None and "no snapshots" in p["diff_note"] for p in recording.parts)
    (check,) = recording.checks
    assert (check["accepted"], check["trigger"], check["feedback"]) == (True, "end", None)
    assert_adds_up(recording)


def _as_received(text: str) -> str:
    """An instruction as the server received it, without the line Claude Code puts before a
    Stop hook's reason (it also drops the reason's final newline)."""
    return text.removeprefix("Stop hook feedback:\n")


def _phasegate_argv() -> list[str]:
    import sys

    return [sys.executable, "-m", "phasegate"]


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    return {**os.environ, **extra}


@pytest.mark.cli
def test_a_batch_with_record_true_lands_each_units_recording_in_its_result_folder(
    tmp_path: Path,
) -> None:
    """Two units (gate and single-query): each result folder holds recording/, whole, whose
    report is the unit's own; the other files of a result are as before."""
    write = batch_writer(tmp_path)
    item = {
        "task": "example/task.yaml", "workdir": "example/project",
        "model_script": "example/model.yaml", "modes": ["gate", "single-query"], "record": True,
    }  # fmt: skip
    out = tmp_path / "out"

    done = phasegate("batch", "run", write([item]), "--out", out, "--quiet")

    assert done.returncode == 0, done.stderr
    results = sorted((out / "units").glob("*/unit.json"))
    assert len(results) == 2
    for unit_file in results:
        unit = json.loads(unit_file.read_text())
        assert unit["unit"]["record"] is True
        folder = unit_file.parent
        assert {p.name for p in folder.iterdir()} == {
            "unit.json", "report.json", "events.jsonl", "transcript.json", "recording",
        }  # fmt: skip
        recording = read_recording(folder / "recording")
        assert recording.report == json.loads((folder / "report.json").read_text())
        assert recording.manifest["verdict"] == unit["outcome"]["verdict"]
        assert_adds_up(recording)


@pytest.mark.cli
def test_completion_tool_checks_are_recorded_with_the_answer_the_model_got(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """phase_complete before the edit is refused, after it accepted, then submit_summary:
    each is a check with trigger tool, on the phase it named, whose feedback is the tool
    result the transcript holds for that call."""
    server = scripted_model_server(Script.model_validate({"replies": COMPLETION_TOOLS}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    folder = tmp_path / "recording"

    report = Runner(agent, retry=NO_RETRIES).run_sync(task, project, record=folder)

    assert report.verdict == "accepted"
    recording = read_recording(folder)
    tools = [c for c in recording.checks if c["trigger"] == "tool"]
    assert [(c["part"], c["accepted"]) for c in tools] == [(0, False), (0, True), (1, True)]
    results = [e["content"] for e in recording.transcript if e["kind"] == "tool_result"]
    assert all(c["feedback"] in results for c in tools)
    assert "validation_failed" in tools[0]["feedback"]


def test_pipeline_run_with_record_writes_the_recording_and_says_where(tmp_path: Path) -> None:
    """``phasegate pipeline run --record`` with the scripted agent: three visits, one diff
    each, the page written, and the folder named on stderr."""
    pipeline_file, script_file = tmp_path / "three.yaml", tmp_path / "script.yaml"
    pipeline_file.write_text(json.dumps(THREE))
    replies = [
        {"contains": f"Stage {n} of 3", "tools": [write_step(name)]}
        for n, name in enumerate(("one", "two", "three"), start=1)
    ]
    script_file.write_text(json.dumps({"replies": replies}))
    work, folder = tmp_path / "work", tmp_path / "recording"
    work.mkdir()

    done = phasegate(
        "pipeline", "run", pipeline_file, "--workdir", work, "--agent", "scripted",
        "--script", script_file, "--quiet", "--record", folder,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert f"recording: {folder}" in done.stderr
    recording = read_recording(folder)
    assert [(p["name"], p["diff_files"]) for p in recording.parts] == [
        ("one", ["one.md"]), ("two", ["two.md"]), ("three", ["three.md"]),
    ]  # fmt: skip
    assert (folder / "index.html").is_file()
