"""Pipelines whose stages run in branches: forked sessions in their own work directories,
joined on evidence. Each test runs with the in-process scripted agent and with the real
Claude Code CLI against the scripted model server (``agent_kind``)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from phasegate import Pipeline, PipelineRunner
from phasegate.phases.stage_graph import StageGraph
from phasegate.pipelines.parallel import ParallelRun, one_after_another
from phasegate.pipelines.state import BranchRecord, PipelineState, stage_records
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.branches import branch_stage, branch_work, write_call
from tests.helpers.pipelines import FinishedPipeline

RunPipeline = Callable[..., FinishedPipeline]


FAN_OUT = {
    "name": "fan-out",
    "stages": [
        branch_stage("plan"),
        branch_stage("backend", ["plan"]),
        branch_stage("frontend", ["plan"]),
        branch_stage("docs", ["plan"]),
        {
            "name": "integrate",
            "needs": ["backend", "frontend", "docs"],
            "prompt": "Check every part is there and write integrate.txt.",
            "exit_when": [
                {"file_exists": "integrate.txt"},
                {"file_exists": "backend.txt"},
                {"file_exists": "frontend.txt"},
                {"file_exists": "docs.txt"},
            ],
        },
    ],
}


FAN_OUT_REPLIES = [
    *branch_work(None, "plan", "the plan\n"),
    *branch_work("backend", "backend"),
    *branch_work("frontend", "frontend"),
    *branch_work("docs", "docs"),
    *branch_work("backend", "integrate"),  # the join continues its first need's branch
]


def test_branches_run_forked_and_their_work_is_merged_for_the_join(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    """plan, then three branches forked from it, then a join that sees all their files; the
    work directory ends with everything and no branch folder is left."""
    run = run_pipeline(FAN_OUT, FAN_OUT_REPLIES)
    report = run.report
    assert report.verdict == "accepted", report.error
    assert [s.status for s in report.stages] == ["accepted"] * 5
    for name in ("plan", "backend", "frontend", "docs", "integrate"):
        assert (run.workdir / f"{name}.txt").exists(), name
    assert not (run.workdir / ".phasegate" / "branches").exists(), "nothing left behind"
    started = [e for e in run.events if e.event == "stage.started"]
    by_stage = {e.fields["name"]: (e.fields["stage"], e.branch) for e in started}
    assert by_stage == {
        "plan": (1, "plan"),
        "backend": (2, "backend"),
        "frontend": (3, "frontend"),
        "docs": (4, "docs"),
        "integrate": (5, "backend"),
    }
    assert [e.event for e in run.events].count("pipeline.started") == 1
    assert [e.event for e in run.events].count("pipeline.completed") == 1
    if agent_kind == "claude":
        joined = next(t for t in run.instructions if "integrate" in t and "joins" in t)
        assert "branch frontend" in joined and "frontend.txt" in joined


def test_a_single_session_runs_the_stages_in_the_graphs_order_one_after_another() -> None:
    """Where nothing can fork (the plugin, in the user's own session), a stage needed by an
    earlier one in the file runs first, and each stage then needs the one before it."""
    pipeline = Pipeline.model_validate(
        {
            "name": "out-of-order",
            "stages": [
                branch_stage("join", ["b", "a"]),
                branch_stage("a", []),
                branch_stage("b", ["a"]),
            ],
        }
    )
    ordered = one_after_another(pipeline)
    assert [s.name for s in ordered.stages] == ["a", "b", "join"]
    assert StageGraph.of(ordered).sequential
    plain = Pipeline.model_validate(
        {"name": "plain", "stages": [branch_stage("x"), branch_stage("y")]}
    )
    assert one_after_another(plain) is plain


def test_process_isolation_gives_each_stage_of_a_branch_its_own_session(
    run_pipeline: RunPipeline,
) -> None:
    """Branches still fork; inside a branch, each further stage starts a session of its own."""
    pipeline = {
        "name": "isolated",
        "stages": [branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("a2"),
                   branch_stage("b", ["plan"]), branch_stage("join", ["a2", "b"])],
    }  # fmt: skip
    replies = [*branch_work(None, "plan"), *branch_work("a", "a"), *branch_work("a", "a2"),
               *branch_work("b", "b"), *branch_work("a", "join")]  # fmt: skip
    run = run_pipeline(pipeline, replies, isolation="process")
    assert run.report.verdict == "accepted", run.report.error
    assert run.report.sessions == 4 + 1, "four parts, and a2 in a session of its own"
    assert {b.first: b.status for b in run.report.branches} == dict.fromkeys(
        ["plan", "a", "b", "join"], "accepted"
    )


def test_a_script_without_branch_replies_serves_the_branches_by_their_stage_prompts(
    run_pipeline: RunPipeline,
) -> None:
    """Replies told apart by ``contains`` alone: each branch reads the one list from where
    the main conversation stood when it forked, so the order its requests come in does not
    matter; each stage's prompt numbers it in the whole pipeline."""
    replies: list[dict[str, Any]] = []
    for number, name in enumerate(("plan", "backend", "frontend", "docs", "integrate"), 1):
        replies.append({"contains": f"Stage {number} of 5: {name}",
                        "tools": [write_call(f"{name}.txt", f"{name}\n")]})  # fmt: skip
        replies.append({"when": "tool_result", "text": f"{name} done."})
    run = run_pipeline(FAN_OUT, replies)
    assert run.report.verdict == "accepted", run.report.error
    for name in ("plan", "backend", "frontend", "docs", "integrate"):
        assert (run.workdir / f"{name}.txt").read_text() == f"{name}\n"


def test_a_recorded_run_with_branches_keeps_each_stage_s_conversation_checks_and_diff(
    tmp_path: Path,
) -> None:
    """Each stage visit (the main line's, every branch's, the join's) owns its own stretch of
    the transcript with the Write it made, its check, and a diff of its own work directory
    holding only its file; the join's part says what was merged into it."""
    from phasegate.recording.page import render_page
    from tests.helpers.recordings import read_recording

    work, folder = tmp_path / "work", tmp_path / "recording"
    work.mkdir()
    agent = ScriptedAgent(Script.model_validate({"replies": FAN_OUT_REPLIES}))
    report = PipelineRunner(agent).run_sync(Pipeline.model_validate(FAN_OUT), work, record=folder)
    assert report.verdict == "accepted", report.error
    recording = read_recording(folder)
    names = ["plan", "backend", "frontend", "docs", "integrate"]
    branch = {"plan": None, "backend": "backend", "frontend": "frontend", "docs": "docs",
              "integrate": "backend"}  # fmt: skip
    parts = recording.parts
    assert [(p["name"], p["index"], p["status"]) for p in parts] == [
        (name, number, "accepted") for number, name in enumerate(names, start=1)
    ]
    for number, (name, part) in enumerate(zip(names, parts, strict=True)):
        start, end = part["entries"]
        (write,) = [e["input"]["file_path"] for e in recording.transcript[start:end]
                    if e["kind"] == "tool_call"]  # fmt: skip
        own = branch[name]
        workdir = work / ".phasegate" / "branches" / own if own else work
        assert Path(write) == workdir / f"{name}.txt", name
        assert part["diff_files"] == [f"{name}.txt"] and part["diff_note"] is None, name
        assert f"+++ b/{name}.txt\n" in recording.diff(number), name
        (check,) = [c for c in recording.checks if c["part"] == number]
        assert check["accepted"] and start < check["entry"] <= end, name
    ends = [p["entries"] for p in parts]
    assert all(a[1] == b[0] for a, b in pairwise(ends)), "end to end"
    assert ends[-1][1] == len(recording.transcript)
    join = next(b for b in report.branches if b.first == "integrate")
    assert join.merged_files == {"frontend": ["frontend.txt"], "docs": ["docs.txt"]}
    page = render_page(folder)
    merged = page[page.index('<div class="merged">') :]
    merged = merged[: merged.index("</div>")]
    assert page.count('<div class="merged">') == 1
    assert '<li data-branch="frontend">branch frontend: files: frontend.txt</li>' in merged
    assert '<li data-branch="docs">branch docs: files: docs.txt</li>' in merged
    assert "No conflict." in merged


def test_a_stage_waits_until_the_part_before_it_has_ended_not_only_its_stage_accepted(
    tmp_path: Path,
) -> None:
    """b is accepted while its part still runs (its session closing): the join that needs it
    starts only once the part has ended, when its session and forks are recorded."""
    pipeline = Pipeline.model_validate(
        {"name": "race", "stages": [branch_stage("plan"), branch_stage("a", ["plan"]),
                                    branch_stage("b", ["plan"]), branch_stage("join", ["a", "b"])]}
    )  # fmt: skip
    state = PipelineState(pipeline="race", digest=pipeline.digest(), run_id="r",
                          isolation="session", stages=stage_records(pipeline))  # fmt: skip
    for record in state.stages:
        record.status = "pending" if record.name == "join" else "accepted"
    settings = PipelineRunner(
        ScriptedAgent(Script.model_validate({"replies": [{"text": "unused"}]}))
    )._settings(None)
    run = ParallelRun(settings, pipeline, tmp_path, state, max_parallel=None)
    state.branches = [BranchRecord(branch=p.branch, first=p.first, stages=list(p.stages))
                      for p in run.parts.values()]  # fmt: skip
    assert run._ready({"b"}) == []
    assert run._ready(set()) == ["join"]
