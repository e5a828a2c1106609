"""Branches through the real Claude Code CLI against the scripted model server: conflicts
handed to the join or failing the run, a rejected branch stopping the others or letting
them finish, back_to inside a branch, and a run killed with SIGKILL in the middle of a level
resumed branch by branch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate import Pipeline, PipelineRunner, RunEvent
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.state import load_state
from phasegate.testing import Script, ScriptedModelServer
from tests.helpers.branches import branch_stage, branch_work, write_call
from tests.helpers.recordings import assert_adds_up, read_recording
from tests.helpers.usage import assert_usage_adds_up, sent_usage

pytestmark = pytest.mark.cli


def _run(
    pipeline: dict[str, Any],
    replies: list[dict[str, Any]],
    work: Path,
    record: Path | None = None,
    **runner: Any,
) -> tuple[PipelineReport, list[RunEvent], ScriptedModelServer]:
    events: list[RunEvent] = []
    server = ScriptedModelServer(Script.model_validate({"replies": replies})).start()
    try:
        agent = server.claude_agent(timeout=90, request_timeout=20)
        report = PipelineRunner(agent, on_event=events.append, **runner).run_sync(
            Pipeline.model_validate(pipeline), work, record=record
        )
    finally:
        server.close()
    return report, events, server


SHARED = "one\ntwo\nthree\n"
NO_MARKERS = [sys.executable, "-c", "import sys; sys.exit('<<<<<<<' in open('shared.txt').read())"]


def _conflicting(on_conflict: str) -> dict[str, Any]:
    return {
        "name": "conflicting",
        "on_conflict": on_conflict,
        "stages": [
            branch_stage("plan"),
            branch_stage("left", ["plan"]),
            branch_stage("right", ["plan"]),
            {
                "name": "join",
                "needs": ["left", "right"],
                "prompt": "Bring the two sides together.",
                "exit_when": [{"file_exists": "join.txt"}, {"command": {"argv": NO_MARKERS}}],
            },
        ],
    }


def _side(branch: str) -> list[dict[str, Any]]:
    return [
        {"branch": branch, "tools": [
            write_call(f"{branch}.txt", "done\n"),
            write_call("shared.txt", SHARED.replace("two", f"two by {branch}")),
        ]},
        {"branch": branch, "text": f"{branch} is written."},
    ]  # fmt: skip


def test_a_conflict_is_handed_to_the_join_with_its_files_and_hunks(
    work: Path, tmp_path: Path
) -> None:
    """Both branches change the same line: the join's first instruction names the file and
    both sides' lines, the file holds the markers, and the join resolves it; its recorded
    part says what was merged and left in conflict, and its diff is its resolution."""
    (work / "shared.txt").write_text(SHARED)
    resolved = "one\ntwo by left and right\nthree\n"
    replies = [
        *branch_work(None, "plan"),
        *_side("left"),
        *_side("right"),
        {"branch": "left", "contains": "merge_conflict", "tools": [
            {"Read": {"file_path": "shared.txt"}},
        ]},
        {"branch": "left", "when": "tool_result", "contains": "<<<<<<< left", "tools": [
            write_call("shared.txt", resolved), write_call("join.txt", "joined\n"),
        ]},
        {"branch": "left", "text": "Resolved."},
    ]  # fmt: skip
    report, _, server = _run(_conflicting("join"), replies, work, tmp_path / "recording")
    assert report.verdict == "accepted", report.error
    (told,) = [t for t in server.user_texts() if "merge_conflict" in t]
    assert "shared.txt" in told and "two by left" in told and "two by right" in told
    assert (work / "shared.txt").read_text() == resolved
    assert (work / "join.txt").exists() and (work / "right.txt").exists()
    assert not server.unmatched
    recording = read_recording(tmp_path / "recording")
    (join,) = [n for n, p in enumerate(recording.parts) if p["name"] == "join"]
    assert recording.parts[join]["diff_files"] == ["join.txt", "shared.txt"]
    diff = recording.diff(join)
    assert "-<<<<<<< left\n" in diff and "+two by left and right\n" in diff
    page = (tmp_path / "recording" / "index.html").read_text()
    merged = page[page.index('<div class="merged">') :]
    merged = merged[: merged.index("</div>")]
    assert '<li data-branch="right">branch right: files: right.txt, shared.txt</li>' in merged
    assert "Left in conflict for it to resolve: shared.txt" in merged


def test_a_conflict_fails_the_run_with_nothing_written_when_the_pipeline_says_fail(
    work: Path,
) -> None:
    (work / "shared.txt").write_text(SHARED)
    replies = [*branch_work(None, "plan"), *_side("left"), *_side("right")]
    report, _, _ = _run(_conflicting("fail"), replies, work)
    assert report.verdict == "rejected"
    assert report.error is not None and "shared.txt" in report.error
    assert [s.status for s in report.stages] == ["accepted"] * 3 + ["pending"]
    assert "<<<<<<<" not in (work / "shared.txt").read_text()
    assert (work / ".phasegate" / "branches" / "right").is_dir(), "kept for the user"


def test_branches_no_stage_joins_that_conflict_at_the_end_are_named_with_where_they_are_kept(
    work: Path,
) -> None:
    """No join: at the end a is merged into the work directory, b conflicts with it on
    new.txt and (on_conflict: fail) is not merged: the error names b and its directory."""
    pipeline = {
        "name": "no-join",
        "on_conflict": "fail",
        "stages": [branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("b", ["plan"])],
    }
    replies = [
        *branch_work(None, "plan"),
        {"branch": "a", "tools": [write_call("a.txt", "a\n"), write_call("new.txt", "from a\n")]},
        {"branch": "a", "text": "a is written."},
        {"branch": "b", "tools": [write_call("b.txt", "b\n"), write_call("new.txt", "from b\n")]},
        {"branch": "b", "text": "b is written."},
    ]
    report, _, _ = _run(pipeline, replies, work)
    assert report.verdict == "rejected"
    assert report.error is not None
    assert "new.txt (branch b) conflict" in report.error
    assert "branch b (not merged, kept in .phasegate/branches/b)" in report.error
    assert (work / "new.txt").read_text() == "from a\n" and not (work / "b.txt").exists()
    assert (work / ".phasegate" / "branches" / "b" / "b.txt").read_text() == "b\n"


def _failing(on_branch_failure: str) -> dict[str, Any]:
    return {
        "name": "failing",
        "on_branch_failure": on_branch_failure,
        "stages": [
            branch_stage("plan"),
            branch_stage("good", ["plan"]),
            branch_stage("bad", ["plan"], on_fail={"retry": 0}),
            branch_stage("join", ["good", "bad"]),
        ],
    }


def test_a_rejected_branch_stops_the_branches_still_running(work: Path) -> None:
    replies = [
        *branch_work(None, "plan"),
        {"branch": "good", "hang": True},  # still working when bad is rejected
        {"branch": "bad", "text": "I will not write it."},
    ]
    report, _, _ = _run(_failing("stop"), replies, work)
    assert report.verdict == "rejected"
    assert {s.name: s.status for s in report.stages} == {
        "plan": "accepted", "good": "running", "bad": "rejected", "join": "pending"
    }  # fmt: skip
    assert report.error is not None
    assert "branch bad (stage bad) rejected" in report.error and "stopped: good" in report.error
    state = load_state(work)
    assert {b.first: b.status for b in state.branches} == {
        "plan": "accepted", "good": "stopped", "bad": "rejected", "join": "pending"
    }  # fmt: skip
    assert (work / ".phasegate" / "branches" / "good").is_dir(), "kept for the user"


def test_a_rejected_branch_lets_the_others_finish_when_the_pipeline_says_finish(
    work: Path,
) -> None:
    replies = [
        *branch_work(None, "plan"),
        {"branch": "bad", "text": "I will not write it."},
        {"branch": "good", "text": "Thinking first."},
        {"branch": "good", "when": "user", "tools": [write_call("good.txt", "good\n")]},
        {"branch": "good", "text": "Written."},
    ]
    report, _, _ = _run(_failing("finish"), replies, work)
    assert report.verdict == "rejected"
    statuses = {s.name: s.status for s in report.stages}
    assert statuses == {"plan": "accepted", "good": "accepted", "bad": "rejected",
                        "join": "pending"}  # fmt: skip
    assert report.error is not None and "ran on to the end: " in report.error
    # plan was accepted before bad failed: only good ran on; the kept directories are named
    assert report.error.split("ran on to the end: ")[1].split(";")[0] == "good"
    assert report.error.endswith(
        "work directories are kept for you to look at: .phasegate/branches/bad, "
        ".phasegate/branches/good"
    )


def test_back_to_inside_a_branch_revisits_its_earlier_stage_only(work: Path) -> None:
    pipeline = {
        "name": "revising",
        "stages": [
            branch_stage("plan"),
            branch_stage("draft", ["plan"]),
            {
                "name": "review",
                "prompt": "Review draft.txt and write review.txt.",
                "exit_when": [{"file_exists": "review.txt"}],
                "on_fail": {"retry": 0, "back_to": "draft"},
            },
            branch_stage("other", ["plan"]),
            branch_stage("join", ["review", "other"]),
        ],
    }
    replies = [
        *branch_work(None, "plan"),
        *branch_work("draft", "draft"),
        {"branch": "draft", "text": "Nothing to review."},  # review fails: back to draft
        {"branch": "draft", "contains": "draft", "tools": [write_call("draft.txt", "draft v2\n")]},
        {"branch": "draft", "text": "Redrafted."},
        *branch_work("draft", "review"),
        *branch_work("other", "other"),
        *branch_work("draft", "join"),
    ]
    report, _, _ = _run(pipeline, replies, work)
    assert report.verdict == "accepted", report.error
    assert [(r.from_stage, r.to_stage) for r in report.revisions] == [("review", "draft")]
    visits = {s.name: s.visits for s in report.stages}
    assert visits == {"plan": 1, "draft": 2, "review": 2, "other": 1, "join": 1}
    assert (work / "draft.txt").read_text() == "draft v2\n"


def test_a_recorded_run_counts_each_branch_once_and_keeps_each_stage_s_work(
    work: Path, tmp_path: Path
) -> None:
    """Usage adds up over the branches, in the report and in the recording, whose every
    stage visit holds the Write it made (in its own work directory), its check and its diff;
    the join's part says what was merged into it; a branch's markup stays text on the page."""
    pipeline = {
        "name": "usage",
        "stages": [branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("b", ["plan"]),
                   branch_stage("join", ["a", "b"])],
    }  # fmt: skip
    markup = '<script>alert("b")</script><img src=x onerror=alert(1)>\n'
    replies = [
        *branch_work(None, "plan"),
        *branch_work("a", "a"),
        *branch_work("b", "b", markup),
        *branch_work("a", "join"),
    ]
    folder = tmp_path / "recording"
    report, _, server = _run(pipeline, replies, work, record=folder)
    assert report.verdict == "accepted", report.error
    assert_usage_adds_up(report.model_dump(mode="json"))
    sent = sent_usage(server)
    assert (report.usage.input_tokens, report.usage.output_tokens) == (
        sent.input_tokens + sent_usage(server, main=False).input_tokens,
        sent.output_tokens + sent_usage(server, main=False).output_tokens,
    )
    assert all(s.usage.output_tokens > 0 for s in report.stages)

    recording = read_recording(folder)
    assert_adds_up(recording)
    parts = {p["name"]: (n, p) for n, p in enumerate(recording.parts)}
    assert sorted(parts) == ["a", "b", "join", "plan"] and parts["join"][0] == 3
    where = {"plan": work, "join": work / ".phasegate" / "branches" / "a"}
    for stage in report.stages:  # each stage's part is its one visit: the same figures
        number, part = parts[stage.name]
        assert (part["input_tokens"], part["output_tokens"]) == (
            stage.usage.input_tokens, stage.usage.output_tokens,
        ), stage.name  # fmt: skip
        start, end = part["entries"]
        calls = [e for e in recording.transcript[start:end] if e["kind"] == "tool_call"]
        workdir = where.get(stage.name, work / ".phasegate" / "branches" / stage.name)
        assert [(c["name"], Path(c["input"]["file_path"])) for c in calls] == [
            ("Write", workdir / f"{stage.name}.txt")
        ], stage.name
        assert part["diff_files"] == [f"{stage.name}.txt"], stage.name
        assert f"+++ b/{stage.name}.txt\n" in recording.diff(number), stage.name
        assert [c["accepted"] for c in recording.checks if c["part"] == number] == [True]
    unowned = recording.manifest["unowned"]
    assert unowned["output_tokens"] == report.unattributed_usage.output_tokens
    assert '+<script>alert("b")</script>' in recording.diff(parts["b"][0])

    page = (folder / "index.html").read_text()
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;b&quot;)&lt;/script&gt;" in page
    join = page[page.index('id="part-3"') :]
    assert '<li data-branch="b">branch b: files: b.txt</li>' in join[: join.index("</ul>")]


@pytest.mark.parametrize("forked", [False, True], ids=["main-line-joined", "branch-joined"])
def test_a_join_continuing_a_needs_nothing_branch_sees_the_main_lines_work(
    work: Path, forked: bool
) -> None:
    """``free`` forks from the start, before ``plan`` ran; the join continues ``free`` and
    merges ``b``: the main line after plan, or (with ``c`` also forking from plan) a branch
    forked from it. plan.txt comes with it, as it is in what the join needs."""
    others = ["c"] if forked else []
    names = ["plan", "free", "b", *others, "join"]
    pipeline = {
        "name": "mixed",
        "stages": [
            branch_stage("plan"),
            branch_stage("free", []),
            branch_stage("b", ["plan"]),
            *[branch_stage(name, ["plan"]) for name in others],
            branch_stage("join", ["free", "b", *others],
                   exit_when=[{"file_exists": f"{name}.txt"} for name in names]),
        ],
    }  # fmt: skip
    replies = [
        *branch_work(None, "plan"),
        *branch_work("free", "free"),
        *branch_work("b" if forked else None, "b"),
        *[reply for name in others for reply in branch_work(name, name)],
        *branch_work("free", "join"),
    ]
    report, _, _ = _run(pipeline, replies, work)
    assert report.verdict == "accepted", report.error
    assert sorted(p.name for p in work.glob("*.txt")) == sorted(f"{n}.txt" for n in names)
    assert not (work / ".phasegate" / "branches" / "free").exists()


# -- killed in the middle of a level, resumed --------------------------------------------

LEVEL = {
    "name": "level",
    "stages": [branch_stage("plan"), branch_stage("fast", ["plan"]), branch_stage("slow", ["plan"]),
               branch_stage("join", ["fast", "slow"])],
}  # fmt: skip


@pytest.fixture
def killed_mid_level(tmp_path: Path, work: Path) -> Path:
    """A run killed (SIGKILL, its process group) once ``fast`` is accepted while ``slow``
    waits on the model; the folder that served as the CLI's home (its saved sessions)."""
    home = tmp_path / "home"
    home.mkdir()
    path = tmp_path / "level.yaml"
    path.write_text(yaml.safe_dump(LEVEL))
    replies = [
        *branch_work(None, "plan"),
        *branch_work("fast", "fast"),
        {"branch": "slow", "hang": True},
    ]
    with ScriptedModelServer(Script.model_validate({"replies": replies})) as server:
        runner = subprocess.Popen(
            [sys.executable, "-m", "phasegate", "pipeline", "run", str(path), "-w", str(work)],
            env={**os.environ, **server.env(home)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 90
            while not _fast_accepted_and_slow_waiting(work, server, home):
                assert runner.poll() is None, "the run ended before the level was half done"
                assert time.monotonic() < deadline, "the level never got half done"
                time.sleep(0.05)
        finally:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
    return home


def _fast_accepted_and_slow_waiting(work: Path, server: ScriptedModelServer, home: Path) -> bool:
    """fast accepted, slow's request waiting on the model, and slow's forked session saved
    with its conversation (the CLI writes the session file's messages a moment after the
    request: killed before, the resume finds "No conversation found" and starts fresh)."""
    if not any(r.status is None for r in server.main_requests()):
        return False
    try:
        state = load_state(work)
        session = load_state(work, "parts/slow.json").session_id
    except Exception:
        return False
    if {s.name: s.status for s in state.stages}.get("fast") != "accepted" or session is None:
        return False
    saved = [p.read_text() for p in (home / ".claude" / "projects").glob(f"*/{session}.jsonl")]
    return any('"type":"user"' in text.replace(" ", "") for text in saved)


def test_a_run_killed_mid_level_resumes_each_unfinished_branch_in_its_session(
    killed_mid_level: Path, work: Path, tmp_path: Path
) -> None:
    """The resume's recording holds slow's and the join's work as it saw it; plan and fast,
    which ran only in the killed process, are parts without entries that say so."""
    state = load_state(work)
    assert {b.first: b.status for b in state.branches}["slow"] == "running"
    replies = [
        {"branch": "slow", "contains": "was interrupted", "tools": [write_call("slow.txt", "s\n")]},
        {"branch": "slow", "text": "slow is written."},
        *branch_work("fast", "join"),
    ]
    events: list[RunEvent] = []
    with ScriptedModelServer(Script.model_validate({"replies": replies})) as server:
        agent = server.claude_agent(timeout=90, request_timeout=20)
        agent.env.update(server.env(killed_mid_level))
        report = PipelineRunner(agent, on_event=events.append).resume_sync(
            Pipeline.model_validate(LEVEL), work, record=tmp_path / "resumed"
        )
        texts = server.user_texts()
        join_opens = next(
            r for r in server.main_requests() if r.last_text.startswith("The branches")
        )
        this_process = sent_usage(server) + sent_usage(server, main=False)
    assert report.verdict == "accepted", report.error
    # the report holds every process's tokens; this process's pipeline.completed its own
    (completed,) = [e for e in events if e.event == "pipeline.completed"]
    assert (completed.fields["input_tokens"], completed.fields["output_tokens"]) == (
        this_process.input_tokens,
        this_process.output_tokens,
    )
    assert report.usage.output_tokens > this_process.output_tokens
    # fast was killed after its stage was accepted, before its part was: the join still
    # continues fast's conversation (a fork of its session), not a fresh one
    assert "Write fast.txt." in str((join_opens.body or {}).get("messages"))
    fast = next(b for b in report.branches if b.first == "fast")
    assert (fast.status, fast.session_id is not None) == ("accepted", True)
    assert {s.name: s.visits for s in report.stages} == {"plan": 1, "fast": 1, "slow": 1,
                                                          "join": 1}  # fmt: skip
    assert not any("Write fast.txt" in t or "Write plan.txt" in t for t in texts)
    (resumed,) = [e for e in events if e.event == "pipeline.resumed"]
    assert (resumed.fields["name"], resumed.fields["how"], resumed.branch) == (
        "slow",
        "session",
        "slow",
    )
    assert report.resumes == 1
    for name in ("plan", "fast", "slow", "join"):
        assert (work / f"{name}.txt").exists()
    recording = read_recording(tmp_path / "resumed")
    assert_adds_up(recording)
    parts = recording.parts
    assert [(p["name"], p["entries"][0] == p["entries"][1]) for p in parts] == [
        ("plan", True), ("fast", True), ("slow", False), ("join", False)
    ]  # fmt: skip
    for earlier, stage in zip(parts[:2], report.stages[:2], strict=True):
        assert "ran in a process before this one" in earlier["diff_note"]
        # the report's figures (a process killed inside a part has not counted its tokens)
        assert (earlier["status"], earlier["output_tokens"]) == (
            "accepted", stage.usage.output_tokens,
        )  # fmt: skip
    slow_calls = [e["input"]["file_path"] for e in recording.transcript[slice(*parts[2]["entries"])]
                  if e["kind"] == "tool_call"]  # fmt: skip
    assert slow_calls == [str(work / ".phasegate" / "branches" / "slow" / "slow.txt")]
    assert parts[2]["diff_files"] == ["slow.txt"] and parts[3]["diff_files"] == ["join.txt"]


def test_a_resume_whose_saved_sessions_are_gone_forks_the_join_into_a_fresh_session(
    killed_mid_level: Path, work: Path
) -> None:
    """Resumed under another HOME (as `--model-script` gives each command a HOME of its
    own): the slow branch and the join, which forks fast's saved session, start fresh."""
    del killed_mid_level  # its HOME, with the saved sessions, is not the resume's
    replies = [
        {"branch": "slow", "tools": [write_call("slow.txt", "s\n")]},
        {"branch": "slow", "text": "slow is written."},
        *branch_work("fast", "join"),
    ]
    events: list[RunEvent] = []
    with ScriptedModelServer(Script.model_validate({"replies": replies})) as server:
        agent = server.claude_agent(timeout=90, request_timeout=20)
        report = PipelineRunner(agent, on_event=events.append).resume_sync(
            Pipeline.model_validate(LEVEL), work
        )
    assert report.verdict == "accepted", report.error
    fresh = [e for e in events if e.event == "pipeline.resumed" and e.fields["how"] == "fresh"]
    assert {(e.fields["name"], e.branch) for e in fresh} >= {("join", "fast")}
    assert {s.name: s.visits for s in report.stages} == {"plan": 1, "fast": 1, "slow": 1,
                                                          "join": 1}  # fmt: skip
    assert (work / "join.txt").exists() and (work / "slow.txt").exists()


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout


def test_in_a_git_work_tree_branches_are_worktrees_of_the_uncommitted_state(work: Path) -> None:
    """The branches see the plan stage's uncommitted file; the user's index and branch are
    untouched, and no worktree or fork ref is left once the run is accepted."""
    (work / "README.md").write_text("project\n")
    _git(work, "init", "-q")
    _git(work, "add", "README.md")
    _git(work, "commit", "-qm", "start")
    (work / "README.md").write_text("project, changed and not committed\n")
    pipeline = {
        "name": "in-git",
        "stages": [
            branch_stage("plan"),
            branch_stage(
                "a", ["plan"], exit_when=[{"file_exists": "a.txt"}, {"file_exists": "plan.txt"}]
            ),
            branch_stage("b", ["plan"]),
            branch_stage("join", ["a", "b"]),
        ],
    }
    replies = [
        *branch_work(None, "plan"),
        *branch_work("a", "a"),
        *branch_work("b", "b"),
        *branch_work("a", "join"),
    ]
    report, _, _ = _run(pipeline, replies, work)
    assert report.verdict == "accepted", report.error
    assert report.branches[1].workdir == str(work / ".phasegate" / "branches" / "a")
    assert sorted(p.name for p in work.glob("*.txt")) == ["a.txt", "b.txt", "join.txt", "plan.txt"]
    assert _git(work, "status", "--porcelain", "--untracked-files=no") == " M README.md\n"
    assert _git(work, "for-each-ref", "refs/phasegate/") == ""
    assert len(_git(work, "worktree", "list").splitlines()) == 1
    assert _git(work, "log", "--oneline").count("\n") == 1, "no commit on the user's branch"


def test_a_join_going_back_to_its_branchs_earlier_stage_redoes_it_after_the_merge(
    work: Path,
) -> None:
    """``back_to`` from a join to the stage before it on its branch: that stage runs again in
    the join's session and directory (the merged branch's files there), then the join again."""
    pipeline = {
        "name": "join-revising",
        "stages": [
            branch_stage("plan"),
            branch_stage("a", ["plan"]),
            branch_stage("b", ["plan"]),
            branch_stage("join", ["a", "b"], on_fail={"retry": 0, "back_to": "a"}),
        ],
    }
    replies = [
        *branch_work(None, "plan"),
        *branch_work("a", "a"),
        *branch_work("b", "b"),
        {"branch": "a", "contains": "joins", "text": "Not yet."},  # the join fails: back to a
        {"branch": "a", "when": "user", "tools": [write_call("a.txt", "a, redone with b.txt\n")]},
        {"branch": "a", "text": "a redone."},
        *branch_work("a", "join"),
    ]
    report, _, _ = _run(pipeline, replies, work)
    assert report.verdict == "accepted", report.error
    assert [(r.from_stage, r.to_stage) for r in report.revisions] == [("join", "a")]
    assert {s.name: s.visits for s in report.stages} == {"plan": 1, "a": 2, "b": 1, "join": 2}
    assert (work / "a.txt").read_text() == "a, redone with b.txt\n"
    assert (work / "b.txt").exists() and (work / "join.txt").exists()
    assert_usage_adds_up(report.model_dump(mode="json"))
