"""The grader in the event log: a graded rubric's ``check.ran`` carries its criteria and what
its grader session cost; the closing lines carry the grader's usage apart, and the lines add
up to the report (agent + grader + unattributed = the run). Every line keeps to its
documented schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import (
    PipelineReport,
    ProcessFigures,
    completed_event,
    pipeline_report,
)
from phasegate.pipelines.state import PipelineState
from phasegate.tasks.report import RunReport
from phasegate.telemetry.events import CheckRan, grader_usage_field
from phasegate.validators.stage_checks import CheckOutcome
from tests.helpers.graded import (
    GRADER_SESSION,
    HOSTILE_REASON,
    graded,
    graded_pipeline,
    graded_task,
    ran,
    verdict,
)
from tests.helpers.usage import COUNTS
from tests.telemetry.test_event_log import documented_schemas


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _valid(lines: list[dict[str, Any]]) -> None:
    schemas = documented_schemas()
    for line in lines:
        jsonschema.validate(line, schemas[line["event"]])


def _added(objects: list[dict[str, Any]]) -> dict[str, int]:
    return {name: sum(o.get(name, 0) for o in objects) for name in COUNTS}


def test_a_task_runs_lines_carry_the_grader_apart_and_add_up_to_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each graded run of a rubric has its check.ran line with its criteria and session; the
    phases' grader_usage add up to run.completed's and to the check.ran lines'; phases +
    graders + unattributed = run.completed's totals = the report's usage."""
    run = graded_task(tmp_path, monkeypatch, reason=HOSTILE_REASON)
    report = run.report
    assert isinstance(report, RunReport)
    lines = _lines(run.log)
    _valid(lines)

    ran_lines = [line for line in lines if line["event"] == "check.ran"]
    rubrics = [line for line in ran_lines if line["kind"] == "rubric"]
    assert len(rubrics) == 4
    assert all(line["grader_usage"] == GRADER_SESSION.model_dump() for line in rubrics)
    (second,) = [line for line in rubrics if line.get("phase") == 2]
    assert second["criteria"][1] == {"id": "c2", "criterion": "it is short", "verdict": "met",
                                     "reason": HOSTILE_REASON}  # fmt: skip
    assert [line.get("phase") for line in rubrics] == [1, 1, 2, None]  # None: the task's own
    assert all("criteria" not in line and "grader_usage" not in line
               for line in ran_lines if line["kind"] != "rubric")  # fmt: skip
    phases = [line for line in lines if line["event"] == "phase.completed"]
    (closing,) = [line for line in lines if line["event"] == "run.completed"]
    graders = [phase["grader_usage"] for phase in phases]
    assert _added(graders) == _added([closing["grader_usage"]])
    assert _added(graders) == _added([line["grader_usage"] for line in rubrics])
    assert closing["grader_usage"] == report.grader_usage.model_dump()
    shares = [*phases, *graders, closing["unattributed_usage"]]
    assert _added(shares) == {name: closing[name] for name in COUNTS}
    assert {name: closing[name] for name in COUNTS} == {
        name: getattr(report.usage, name) for name in COUNTS
    }
    assert closing["cost_usd"] == pytest.approx(
        sum(p["cost_usd"] for p in shares if p.get("cost_usd") is not None)
    )


def test_a_pipelines_lines_carry_each_stages_verdicts_and_grader_and_add_up_to_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage's exit checks have no check.ran lines: stage.completed carries their criteria
    (in its checks) and the stage's grader_usage; pipeline.completed this process's totals,
    the grader's included and apart."""
    run = graded_pipeline(tmp_path, monkeypatch, reason=HOSTILE_REASON)
    report = run.report
    assert isinstance(report, PipelineReport)
    lines = _lines(run.log)
    _valid(lines)

    stages = [line for line in lines if line["event"] == "stage.completed"]
    assert [line["grader_usage"] for line in stages] == [GRADER_SESSION.model_dump()] * 2
    assert [c["criteria"][1]["reason"] for c in stages[0]["checks"] if "criteria" in c] == [
        HOSTILE_REASON
    ]
    assert "criteria" not in stages[0]["checks"][0]  # file_exists
    (closing,) = [line for line in lines if line["event"] == "pipeline.completed"]
    assert closing["grader_usage"] == report.grader_usage.model_dump()
    assert {name: closing[name] for name in COUNTS} == {
        name: getattr(report.usage, name) for name in COUNTS
    }
    assert closing["cost_usd"] == pytest.approx(report.usage.cost_usd)


def test_lines_without_a_grader_leave_its_fields_out() -> None:
    """A check no grader judged, and a rubric whose answer was kept for equal evidence (its
    criteria stay, no session ran): the line says only what happened."""
    plain = CheckRan.of(ran(CheckOutcome(kind="said", description="d", ok=True, detail="d")))
    kept = CheckRan.of(ran(graded((verdict(),))))

    assert not {"criteria", "grader_usage"} & set(plain.as_fields())
    assert kept.as_fields()["criteria"] == [verdict().as_dict()]
    assert "grader_usage" not in kept.as_fields()
    assert grader_usage_field(Usage()) is None and grader_usage_field(None) is None


def test_each_processs_completed_line_carries_its_own_grader_usage(tmp_path: Path) -> None:
    """A resumed run's figures add up process by process: the grader's part as the rest."""
    state = PipelineState(pipeline="p", digest="d", run_id="r", isolation="session", stages=[])
    report = pipeline_report(state, agent="a", state_file=tmp_path / "s.json")
    first = ProcessFigures(usage=Usage(input_tokens=10) + GRADER_SESSION, grader=GRADER_SESSION)
    second = ProcessFigures(usage=Usage(input_tokens=5))

    fields = completed_event(report, first + second).as_fields()

    assert fields["input_tokens"] == 15 + GRADER_SESSION.input_tokens
    assert fields["grader_usage"] == GRADER_SESSION.model_dump()
    assert "grader_usage" not in completed_event(report, second).as_fields()
