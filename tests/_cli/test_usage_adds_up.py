"""Tokens and cost add up in every report, through the real Claude Code CLI and the scripted
model: a task, a pipeline, a loop, a batch and a judged transcript. The phases (or stages)
plus ``unattributed_usage`` are the run's usage, count by count, and the phases' counts are
the responses' final counts, not the 1 the stream repeats with each block."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.agents.claude.cli import bundled_claude_cli
from phasegate.testing import ScriptedModelServer, load_script
from tests.helpers.cli import phasegate
from tests.helpers.usage import COUNTS, assert_usage_adds_up, sent_usage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIX = EXAMPLES / "fix-vulnerability"
PRD = EXAMPLES / "prd-to-code"
RALPH = EXAMPLES / "ralph-loop"

pytestmark = pytest.mark.cli


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _event_sums_hold(log: Path) -> None:
    """In the log, phase.completed lines (with their grader's) plus run.completed's
    unattributed_usage are the run.completed totals; so are the phase rows of ``phasegate
    report`` over it."""
    events = _lines(log)
    (run,) = [e for e in events if e["event"] == "run.completed"]
    phases = [e for e in events if e["event"] == "phase.completed"]
    for name in COUNTS:
        graders = sum(p.get("grader_usage", {}).get(name, 0) for p in phases)
        shares = sum(p[name] for p in phases) + graders + run["unattributed_usage"][name]
        assert shares == run[name], name
    done = phasegate("report", log, "--format", "json")
    assert done.returncode == 0, done.stderr
    (group,) = json.loads(done.stdout)["groups"]
    for name in ("input_tokens", "output_tokens"):
        rows = sum(p[name] + p["grader_usage"][name] for p in group["phases"])
        assert rows + group["unattributed_usage"][name] == group[name] == run[name], name
    costs = [p["cost_usd"] for p in group["phases"]] + [group["unattributed_usage"]["cost_usd"]]
    assert sum(costs) == pytest.approx(group["cost_usd"], abs=1e-6 * len(costs))
    # What the gate added to the input: the report's sums are the lines'.
    for name in ("requests", "input_tokens", "tool_tokens", "text_tokens"):
        assert group["overhead"][name] == run["overhead"][name], name
        rows = [p["overhead"][name] for p in group["phases"]]
        assert rows == [p["overhead"][name] for p in phases], name
    assert group["overhead"]["runs"] == 1


@pytest.mark.parametrize("mode", ["gate", "single-query", "unstructured"])
def test_a_tasks_phases_and_the_unattributed_rest_add_up_to_the_run(
    tmp_path: Path, mode: str
) -> None:
    """In every mode; without markers (unstructured) no phase owns a response."""
    work = shutil.copytree(FIX / "project", tmp_path / "work")
    log = tmp_path / "events.jsonl"
    done = phasegate(
        "run", FIX / "task.yaml", "--workdir", work, "--mode", mode,
        "--model-script", FIX / "model.yaml", "--log-file", log, "--json", "-q",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert_usage_adds_up(report)
    assert report["usage_exact"] is True
    _event_sums_hold(log)
    phases_output = sum(p["usage"]["output_tokens"] for p in report["phases"])
    if mode == "unstructured":
        assert phases_output == 0
        assert report["unattributed_usage"]["output_tokens"] == report["usage"]["output_tokens"]
    else:
        # Before, each response counted the 1 its start announced: 4 over the whole run.
        assert phases_output == report["usage"]["output_tokens"] > 100


def test_a_pipelines_stages_add_up_to_the_run(tmp_path: Path) -> None:
    """prd-to-code: three stages, one with feedback; each stage's tokens are its own."""
    work = shutil.copytree(PRD / "project", tmp_path / "work")
    log = tmp_path / "events.jsonl"
    done = phasegate(
        "pipeline", "run", PRD / "pipeline.yaml", "--workdir", work,
        "--model-script", PRD / "model.yaml", "--log-file", log, "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert_usage_adds_up(report)
    assert all(stage["usage"]["output_tokens"] > 1 for stage in report["stages"])
    (completed,) = [e for e in _lines(log) if e["event"] == "pipeline.completed"]
    assert [completed[name] for name in COUNTS] == [report["usage"][name] for name in COUNTS]
    # Every request is in a stage; a pipeline's share is its own text, no tool definitions.
    overhead = report["overhead"]
    assert completed["overhead"] == overhead
    for name, value in overhead.items():
        assert sum(stage["overhead"][name] for stage in report["stages"]) == value, name
    assert overhead["tool_characters"] == 0 < overhead["text_characters"]
    assert overhead["requests"] >= len(report["stages"])


def test_a_loops_one_stage_holds_the_whole_run(tmp_path: Path) -> None:
    """A Ralph loop is a one-stage pipeline: its stage has every token of the run."""
    work = shutil.copytree(RALPH / "project", tmp_path / "work")
    done = phasegate(
        "loop", "--state", work / ".claude" / "ralph-loop.local.md", "--workdir", work,
        "--model-script", RALPH / "model.yaml", "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert_usage_adds_up(report)
    (stage,) = report["stages"]
    assert stage["usage"]["output_tokens"] == report["usage"]["output_tokens"] > 100


def test_a_batchs_units_add_up_and_its_total_is_theirs(tmp_path: Path) -> None:
    """A task unit and a pipeline unit: each unit's report adds up, and the batch's cost is
    the units' costs."""
    batch = tmp_path / "batch.yaml"
    batch.write_text(
        yaml.safe_dump(
            {
                "name": "sums",
                "items": [
                    {
                        "task": str(FIX / "task.yaml"),
                        "workdir": str(FIX / "project"),
                        "model_script": str(FIX / "model.yaml"),
                    },
                    {
                        "pipeline": str(PRD / "pipeline.yaml"),
                        "workdir": {"copy": str(PRD / "project")},
                        "model_script": str(PRD / "model.yaml"),
                    },
                ],
            }
        )
    )
    out = tmp_path / "out"
    done = phasegate("batch", "run", batch, "--out", out, "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    reports = [json.loads(path.read_text()) for path in sorted(out.glob("units/*/report.json"))]
    assert len(reports) == 2
    for report in reports:
        assert_usage_adds_up(report)
    assert summary["cost_usd"] == pytest.approx(sum(r["usage"]["cost_usd"] for r in reports))


def _record_transcript(work: Path, *, partial: bool) -> tuple[Path, ScriptedModelServer]:
    """Run the real CLI on fix-vulnerability's script and save its stream-json output."""
    cli = bundled_claude_cli()
    assert cli is not None
    flags = ["--include-partial-messages"] if partial else []
    with ScriptedModelServer(load_script(FIX / "model.yaml")) as server:
        done = subprocess.run(
            [str(cli), "-p", "Fix app.py, then report as JSON.", "--output-format",
             "stream-json", "--verbose", *flags, "--permission-mode", "acceptEdits",
             "--allowedTools", "Read,Edit"],
            env={**os.environ, **server.env()}, cwd=work, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    transcript = work.parent / f"transcript-{partial}.jsonl"
    transcript.write_text(done.stdout)
    return transcript, server


@pytest.mark.parametrize("partial", [True, False])
def test_a_judged_transcript_adds_up_exactly_with_partial_messages(
    tmp_path: Path, partial: bool
) -> None:
    """Saved with partial messages, the phases hold exactly what the model sent; saved
    without, the counts are the largest the stream reported, and the report says so."""
    if shutil.which("git") is None:
        pytest.skip("judge needs git")
    work = shutil.copytree(FIX / "project", tmp_path / "work")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
        subprocess.run(git, cwd=work, check=True, capture_output=True)
    transcript, server = _record_transcript(work, partial=partial)
    done = phasegate(
        "judge", FIX / "task.yaml", "--transcript", transcript, "--workdir", work, "--json"
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert_usage_adds_up(report)
    assert report["usage_exact"] is partial
    phases_output = sum(p["usage"]["output_tokens"] for p in report["phases"])
    if partial:
        assert phases_output == sent_usage(server).output_tokens > 100
    else:
        assert phases_output < sent_usage(server).output_tokens


def _tokens(line: str) -> tuple[int, int, float]:
    """The first ``N in / M out tokens, $C`` of a printed line."""
    found = re.search(r"([\d,]+) in / ([\d,]+) out tokens, \$([\d.]+)", line)
    assert found is not None, line
    return int(found[1].replace(",", "")), int(found[2].replace(",", "")), float(found[3])


def test_the_printed_report_of_a_run_adds_up_line_by_line(tmp_path: Path) -> None:
    """A reader adds the phase lines (and the part in no phase) and gets the usage line."""
    work = shutil.copytree(FIX / "project", tmp_path / "work")
    done = phasegate(
        "run", FIX / "task.yaml", "--workdir", work, "--model-script", FIX / "model.yaml", "-q"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    phases = [_tokens(line) for line in lines if line.startswith("  phase ")]
    (total_line,) = [line for line in lines if line.startswith("  usage: ")]
    total = _tokens(total_line)
    assert "in no phase" not in total_line
    assert (sum(p[0] for p in phases), sum(p[1] for p in phases)) == total[:2]
    assert sum(p[2] for p in phases) == pytest.approx(total[2], abs=1e-6 * len(phases))
    # The input lines too: the phases' (indented under each) are the run's.
    inputs = [_input(line) for line in lines if line.startswith("    input: ")]
    (run_input,) = [_input(line) for line in lines if line.startswith("  input: ")]
    assert inputs and tuple(map(sum, zip(*inputs, strict=True))) == run_input


def _input(line: str) -> tuple[int, ...]:
    """The figures of an ``input:`` line: requests, input carried, the gate's, tools, text."""
    found = re.search(
        r"(\d+) requests? carried ([\d,]+) input tokens; the gate's ≈([\d,]+) "
        r"\(tool definitions ≈([\d,]+), text ≈([\d,]+)\)",
        line,
    )
    assert found is not None, line
    return tuple(int(group.replace(",", "")) for group in found.groups())


ONE_STAGE = {
    "name": "spec",
    "stages": [
        {"name": "spec", "prompt": "Write spec.md.", "exit_when": [{"file_exists": "spec.md"}]}
    ],
}


def test_a_resumed_pipelines_report_adds_up_over_both_processes(tmp_path: Path) -> None:
    """The first process reads and then fails; the resume writes the spec. The report's
    usage and duration are the whole run's: the stage's tokens are both processes', and no
    stage took longer than the run."""
    pipeline, first, resume = (tmp_path / n for n in ("p.yaml", "first.yaml", "resume.yaml"))
    pipeline.write_text(yaml.safe_dump(ONE_STAGE))
    first.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"text": "Let me look first.", "tools": [{"Read": {"file_path": "notes.md"}}]},
                    *[{"when": "tool_result", "error": {"status": 529, "retry_after": 0}}] * 3,
                ]
            }
        )
    )  # fmt: skip  (the CLI tries a request three times)
    resume.write_text(yaml.safe_dump({"replies": [
        {"tools": [{"Write": {"file_path": "spec.md", "content": "the spec\n"}}]},
        {"when": "tool_result", "text": "Spec written."},
    ]}))  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("what the spec should say\n")
    log = tmp_path / "events.jsonl"
    common: list[str | Path] = [pipeline, "--workdir", work, "--retries", "0", "-q", "--json",
                                "--log-file", log]  # fmt: skip

    stopped = phasegate("pipeline", "run", *common, "--model-script", first)
    resumed = phasegate("pipeline", "resume", *common, "--model-script", resume)

    assert stopped.returncode == 3, stopped.stderr
    assert resumed.returncode == 0, resumed.stderr
    parts = [json.loads(done.stdout) for done in (stopped, resumed)]
    report = parts[1]
    assert_usage_adds_up(report)
    processes = [e for e in _lines(log) if e["event"] == "pipeline.completed"]
    assert len(processes) == 2 and all(p["output_tokens"] > 0 for p in processes)
    for name in COUNTS:
        assert report["usage"][name] == sum(p[name] for p in processes), name
    assert report["duration_ms"] == sum(p["duration_ms"] for p in processes)
    for name, value in report["overhead"].items():
        assert value == sum(p["overhead"][name] for p in processes), name
    assert all(p["overhead"]["requests"] > 0 for p in processes)
    assert all(s["duration_ms"] <= report["duration_ms"] for s in report["stages"])


def test_the_printed_report_says_the_grader_s_part_and_still_adds_up(tmp_path: Path) -> None:
    """With a rubric graded once: the phase lines, the grader's part and the part in no
    phase add up to the usage line."""
    (tmp_path / "task.yaml").write_text(
        "name: notes\nphases:\n  - name: write\n    instructions: Write NOTES.md.\n"
        "    checks: [{rubric: NOTES.md says how to run the tests}]\n"
    )
    verdict = {"verdicts": [{"id": "c1", "verdict": "met", "reason": "NOTES.md: 'make test'"}]}
    (tmp_path / "model.yaml").write_text(
        yaml.safe_dump({"replies": [
            {"tools": [{"Write": {"file_path": "NOTES.md", "content": "Run make test.\n"}}]},
            {"when": "tool_result", "text": "PHASE 1 COMPLETE: done"},
            {"grader": True, "tools": [{"StructuredOutput": verdict}]},
        ]})
    )  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    done = phasegate(
        "run", tmp_path / "task.yaml", "--workdir", work, "--model-script",
        tmp_path / "model.yaml", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.splitlines()
    phases = [_tokens(line) for line in lines if line.startswith("  phase ")]
    (total_line,) = [line for line in lines if line.startswith("  usage: ")]
    grader = _tokens(total_line.split("the grader: ", 1)[1])
    unowned = (
        _tokens(total_line.split("in no phase: ", 1)[1])
        if "in no phase" in total_line
        else (0, 0, 0.0)
    )
    total = _tokens(total_line)
    assert grader[0] > 0
    assert sum(p[0] for p in phases) + grader[0] + unowned[0] == total[0]
    assert sum(p[1] for p in phases) + grader[1] + unowned[1] == total[1]
