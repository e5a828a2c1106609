"""Seed 004's own ``.claude/pipeline.json``, whose exit conditions are sentences, through the
command line: ``pipeline check`` says what each sentence became, ``pipeline convert`` writes
the checks, and ``pipeline run`` gates on them (the real Claude Code CLI, a scripted model)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "seed004" / ".claude" / "pipeline.json"


def _phasegate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``phasegate ARGS`` in a subprocess, everything captured."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def pipeline_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``phasegate pipeline ARGS``."""
    return _phasegate("pipeline", *args)


def _lines(count: int) -> str:
    return "".join(f"- architecture point {number}\n" for number in range(1, count + 1))


MAKEFILE = "test:\n\ttest -s src/main.go\n"
SEED_RUN: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 3: architect",
     "tools": [{"Write": {"file_path": "architecture.md", "content": _lines(20)}}]},
    {"when": "tool_result", "text": "Architecture written."},
    # Answered only when the feedback says what fell short: 20 lines, not more than 100.
    {"when": "user", "contains": "architecture.md has 20 lines",
     "tools": [{"Write": {"file_path": "architecture.md", "content": _lines(120)}}]},
    {"when": "tool_result", "text": "Architecture expanded."},
    {"when": "user", "contains": "Stage 2 of 3: qa",
     "tools": [{"Write": {"file_path": "test-plan.md", "content": "# Test plan\n"}}]},
    {"when": "tool_result", "text": "Test plan written."},
    {"when": "user", "contains": "Stage 3 of 3: implementer",
     "tools": [{"Write": {"file_path": "src/main.go", "content": "package main\n"}},
               {"Write": {"file_path": "Makefile", "content": MAKEFILE}}]},
    {"when": "tool_result", "text": "Implemented."},
]  # fmt: skip


@pytest.fixture
def seed_work(tmp_path: Path) -> Path:
    """A work directory holding the seed's ``.claude/pipeline.json``, as its users keep it."""
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    shutil.copy(SEED, work / ".claude" / "pipeline.json")
    (work / "prd.md").write_text("# PRD\n\nA tool that greets.\n")
    return work


def test_pipeline_check_says_what_each_sentence_of_the_seed_became(seed_work: Path) -> None:
    """One line per stage, the sentence quoted, then its checks as a file writes them."""
    done = pipeline_cli("check", seed_work / ".claude" / "pipeline.json")
    assert done.returncode == 0, done.stderr
    assert (
        'stage architect: "architecture.md exists and has >100 lines" → '
        "file_exists: architecture.md; min_lines: {path: architecture.md, n: 101}"
    ) in done.stderr
    assert 'stage qa: "test-plan.md exists" → file_exists: test-plan.md' in done.stderr
    assert (
        'stage implementer: "src/main.go exists and make test passes" → '
        "file_exists: src/main.go; command: [make, test]"
    ) in done.stderr
    assert "architecture.md has at least 101 lines" in done.stdout  # the stage's prompt


def test_pipeline_convert_writes_the_seed_as_structured_checks(seed_work: Path) -> None:
    """Written back, no sentence is left: the checks they became."""
    done = pipeline_cli("convert", seed_work / ".claude" / "pipeline.json")
    assert done.returncode == 0, done.stderr
    stages = yaml.safe_load(done.stdout)["stages"]
    assert [stage["exit_when"] for stage in stages] == [
        [{"file_exists": "architecture.md"}, {"min_lines": {"path": "architecture.md", "n": 101}}],
        [{"file_exists": "test-plan.md"}],
        [{"file_exists": "src/main.go"}, {"command": ["make", "test"]}],
    ]


def test_a_sentence_phasegate_cannot_run_is_said_to_be_judged_by_a_grader(
    seed_work: Path,
) -> None:
    """``pipeline check`` loads it and says a grader judges it."""
    file = seed_work / ".claude" / "pipeline.json"
    data = json.loads(file.read_text())
    data["stages"][1]["exit_when"] = "test-plan.md covers every requirement of prd.md"
    file.write_text(json.dumps(data))
    done = pipeline_cli("check", file)
    assert done.returncode == 0, done.stderr
    assert (
        'stage qa: "test-plan.md covers every requirement of prd.md" → a grader judges it '
        "(rubric of one criterion)"
    ) in done.stderr


def test_a_sentence_naming_a_path_outside_is_refused_at_load_naming_the_field(
    seed_work: Path,
) -> None:
    """Exit 2, the field, what is wrong."""
    file = seed_work / ".claude" / "pipeline.json"
    data = json.loads(file.read_text())
    data["stages"][1]["exit_when"] = "../test-plan.md exists"
    file.write_text(json.dumps(data))
    done = pipeline_cli("check", file)
    assert done.returncode == 2
    assert "stages.1.exit_when" in done.stderr
    assert "leaves the work directory" in done.stderr


@pytest.mark.cli
def test_the_seeds_pipeline_refuses_a_short_architecture_then_runs_on(seed_work: Path) -> None:
    """The real CLI: 20 lines fail ">100 lines" and the agent hears so; 120 lines pass; the
    test plan, then src/main.go with `make test` passing, end the run accepted."""
    script = seed_work.parent / "model.yaml"
    script.write_text(yaml.safe_dump({"replies": SEED_RUN}))
    done = pipeline_cli(
        "run", seed_work / ".claude" / "pipeline.json", "--workdir", seed_work,
        "--model-script", script, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout)
    assert [(s["name"], s["attempts"]) for s in report["stages"]] == [
        ("architect", 2),
        ("qa", 1),
        ("implementer", 1),
    ]
    assert "✗ check 1: stage architect: failed min_lines" in done.stderr
    assert report["stages"][0]["checks"][1] == {
        "kind": "min_lines",
        "description": "architecture.md has at least 101 lines",
        "ok": True,
        "detail": "architecture.md has 120 lines",
    }
    assert [c["ok"] for c in report["stages"][2]["checks"]] == [True, True]  # make test passed


def test_check_says_what_each_sentence_of_a_task_became(tmp_path: Path) -> None:
    """A phase's checks and the task's own, one line each."""
    task = tmp_path / "task.yaml"
    task.write_text(
        yaml.safe_dump(
            {
                "name": "build",
                "phases": [
                    {"name": "code", "instructions": "Write it.", "checks": "make build passes"}
                ],
                "checks": ["dist/app exists", {"said": "DONE"}],
            }
        )
    )
    done = _phasegate("check", task)
    assert done.returncode == 0, done.stderr
    assert 'phase 1 (code): "make build passes" → command: [make, build]' in done.stderr
    assert 'task: "dist/app exists" → file_exists: dist/app' in done.stderr


def test_check_says_a_task_sentence_in_none_of_the_forms_is_judged_by_a_grader(
    tmp_path: Path,
) -> None:
    """The item of the list that is no form is one criterion of a rubric."""
    task = tmp_path / "task.yaml"
    task.write_text(
        yaml.safe_dump(
            {
                "name": "build",
                "phases": [
                    {"name": "code", "instructions": "Write it.",
                     "checks": ["make passes", "the code reads well"]}
                ],
            }
        )
    )  # fmt: skip
    done = _phasegate("check", task)
    assert done.returncode == 0, done.stderr
    assert (
        'phase 1 (code): "the code reads well" → a grader judges it (rubric of one criterion)'
        in done.stderr
    )


@pytest.mark.cli
def test_a_prose_exit_condition_of_the_seed_is_graded_and_its_reason_fed_back(
    seed_work: Path,
) -> None:
    """``pipeline run --model-script``: the qa stage's prose condition goes to the scripted
    grader; its not met reaches the agent with the reason, the
    fix is met, the run ends accepted, and the grader's cost is the report's apart."""
    file = seed_work / ".claude" / "pipeline.json"
    data = json.loads(file.read_text())
    data["stages"][1]["exit_when"] = "test-plan.md covers every requirement of prd.md"
    file.write_text(json.dumps(data))
    missing = "the greeting"
    replies = [
        *SEED_RUN[:6],
        {"grader": True, "tools": [{"StructuredOutput": {"verdicts": [
            {"id": "c1", "verdict": "not_met", "reason": f"test-plan.md has no case for {missing}"},
        ]}}]},
        {"when": "user", "contains": missing,
         "tools": [{"Write": {"file_path": "test-plan.md",
                              "content": "# Test plan\n\n- it prints the greeting\n"}}]},
        {"when": "tool_result", "text": "Test plan covers the greeting."},
        {"grader": True, "tools": [{"StructuredOutput": {"verdicts": [
            {"id": "c1", "verdict": "met", "reason": "test-plan.md: '- it prints the greeting'"},
        ]}}]},
        *SEED_RUN[6:],
    ]  # fmt: skip
    script = seed_work.parent / "model.yaml"
    script.write_text(yaml.safe_dump({"replies": replies}))
    checked = pipeline_cli("check", file)
    assert 'stage qa: "test-plan.md covers every requirement of prd.md" → a grader judges it' in (
        checked.stderr
    )
    done = pipeline_cli(
        "run", file, "--workdir", seed_work, "--model-script", script, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "unmatched" not in done.stderr.lower()
    report = json.loads(done.stdout)
    assert [(s["name"], s["attempts"]) for s in report["stages"]] == [
        ("architect", 2),
        ("qa", 2),
        ("implementer", 1),
    ]
    (rubric,) = report["stages"][1]["checks"]
    assert rubric["kind"] == "rubric" and rubric["ok"] is True
    assert rubric["criteria"][0]["verdict"] == "met"
    grader = report["grader_usage"]
    assert grader["input_tokens"] > 0
    assert report["stages"][1]["grader_usage"] == grader
