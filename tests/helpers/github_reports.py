"""Report files whose every free-text field holds one given text, for the GitHub step's tests.

A report is written by phasegate, but the step reads it from a file that anything before it
may have replaced: each string in it (names, messages, paths, how a phase completed, the kind
of a pipeline check, a task check's description and output, a grader's criteria and reasons)
is untrusted, and these reports put the same text in all of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.state import CheckResult, StageRecord
from phasegate.tasks.report import CheckReport, CriterionReport, PhaseReport, RunReport
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.reconcile import reconcile
from phasegate.validators.subagents import SubagentWork


def hostile_run_report(text: str) -> RunReport:
    """A rejected task run whose every free-text field is ``text``."""
    issue = Issue(
        code=IssueCode.CLAIMED_NOT_CHANGED,
        message=text,
        phase=1,
        provided=text,
        requirement=text,
        path=text,
    )
    finding = Issue(code=IssueCode.CHANGE_WITHOUT_TOOL, message=text, path=text)
    criteria = [
        CriterionReport(id=text, criterion=text, verdict="not_met", reason=text),
        CriterionReport(id="c2", criterion=text, verdict="cannot_tell", reason=text),
    ]
    failed = CheckReport(kind=text, description=text, passed=False, detail=text, exit_code=1,
                         duration_ms=1500, run=2, criteria=criteria)  # fmt: skip
    graded = Usage(input_tokens=30, output_tokens=4, cost_usd=0.0125)
    passed = failed.model_copy(update={"passed": True, "exit_code": None, "duration_ms": 30})
    phase = PhaseReport(
        index=1,
        name=text,
        status="rejected",
        attempts=2,
        marker_seen=True,
        completed_by=text,
        duration_ms=5,
        tools={text: 1},
        tool_errors=0,
        files_changed=[text],
        subagents=[SubagentWork(agent=text, type=text, parent=text, tools={text: 1}, files=[text])],
        checks=[failed],
        check_ms=1500,
        issues=[issue],
        grader_usage=graded,
    )
    return RunReport(
        run_id=text,
        task=text,
        mode="gate",
        agent=text,
        verdict="rejected",
        success=False,
        attempts=2,
        phases=[phase],
        summary={text: text},
        files_changed=[text],
        files_claimed=[text],
        reconciliation=reconcile([text], [text, "b.py"], [text, "c.py"]),
        findings=[finding],
        checks=[passed],
        check_ms=1530,
        usage=Usage(input_tokens=31, output_tokens=6, cost_usd=0.2625),
        grader_usage=graded,
        duration_ms=9,
        error=text,
        session_id=text,
        final_message=text,
    )


def hostile_pipeline_report(text: str) -> PipelineReport:
    """A rejected pipeline whose every free-text field is ``text``."""
    verdict = CriterionReport(id=text, criterion=text, verdict="not_met", reason=text)
    check = CheckResult(kind=text, description=text, ok=False, detail=text, criteria=[verdict])
    graded = Usage(input_tokens=30, output_tokens=4, cost_usd=0.0125)
    stage = StageRecord(
        index=1, name=text, status="rejected", attempts=1, visits=2, checks=[check],
        files_changed=[text], grader_usage=graded,
    )  # fmt: skip
    return PipelineReport(
        pipeline=text,
        run_id=text,
        agent=text,
        isolation="session",
        verdict="rejected",
        success=False,
        stages=(stage,),
        sessions=1,
        usage=graded,
        grader_usage=graded,
        duration_ms=3,
        error=text,
        state_file=text,
        session_id=text,
        final_message=text,
    )


def write_report(path: Path, report: RunReport | PipelineReport, **extra: Any) -> Path:
    """Write ``report`` as ``phasegate ... --json`` does, with ``extra`` keys added."""
    data = json.loads(report.model_dump_json())
    data.update(extra)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
