"""``phasegate judge`` on every session Claude Code writes today: subagents, plan mode,
bookkeeping lines, a result alone, pretty-printed JSON, and what is not a transcript.

The sessions are written from the public formats (tests/helpers/sessions.py), judged in a
git checkout whose ``a.md`` the subagent changed, through the command a user runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.sessions import (
    AGENT,
    PLAN_TASK,
    TASK,
    TASK_CALL,
    plan_mode_session,
    result,
    run_result,
    session_v1,
    session_v2,
    stream_json,
    use,
    write_session,
)
from tests.helpers.wild import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository whose a.md was changed since its commit (by the subagent)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.md").write_text("old\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "start")
    (work / "a.md").write_text("new\n")
    return work


@pytest.fixture
def task(tmp_path: Path) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    return path


def judged(task: Path, transcript: Path, work: Path, *more: str | Path) -> tuple[int, Any, str]:
    done = phasegate("judge", task, "-t", transcript, "-w", work, "--json", *more)
    report = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, report, done.stderr


def test_an_edit_a_subagent_made_in_a_v2_session_is_accepted_and_named_as_its(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    """Progress records, the subagent's file beside the log, and bookkeeping lines: the
    phase that requires an Edit is accepted, its figures hold the subagent's calls, and the
    report says which were the subagent's; no warning about any line."""
    log, sub = session_v2(str(checkout))
    transcript = write_session(tmp_path, log, {AGENT: sub})

    code, report, stderr = judged(task, transcript, checkout)

    assert code == 0, (stderr, report)
    phase = report["phases"][0]
    assert phase["tools"] == {"Read": 2, "Task": 1, "Edit": 1}
    assert phase["tool_errors"] == 1
    assert phase["subagents"] == [
        {"agent": AGENT, "type": "general-purpose", "parent": TASK_CALL,
         "tools": {"Edit": 1, "Read": 1}, "tool_errors": 1, "files": ["a.md"]}
    ]  # fmt: skip
    assert report["subagents"] == phase["subagents"]
    assert stderr == ""


def test_the_human_report_says_what_the_main_agent_and_each_subagent_did(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    log, sub = session_v2(str(checkout))
    transcript = write_session(tmp_path, log, {AGENT: sub})

    done = phasegate("judge", task, "-t", transcript, "-w", checkout)

    assert done.returncode == 0, done.stderr
    assert "    main agent: Read×1, Task×1\n" in done.stdout
    assert f"    subagent general-purpose {AGENT}: Edit×1, Read×1; 1 error(s); files: a.md" in (
        done.stdout
    )


def test_the_main_agents_failed_calls_are_its_share_of_the_phases_errors(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    """A subagent that fails: its failed Edit is its error, the Agent call that came back
    an error is the main agent's, and the two add up to the phase's."""
    stream = [json.loads(line) for line in stream_json(str(checkout)).splitlines()]
    for line in stream:
        for block in line.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["is_error"] = True  # the subagent's Edit, and the Task call it ran in
    main_edit = {"file_path": f"{checkout}/a.md", "old_string": "old", "new_string": "new"}
    stream[-2:-2] = [
        {"type": "assistant", "parent_tool_use_id": None, "session_id": "s",
         "message": {"id": "msg_9", "content": [use("toolu_main_edit", "Edit", main_edit)]}},
        {"type": "user", "parent_tool_use_id": None, "session_id": "s",
         "message": {"role": "user", "content": [result("toolu_main_edit")]}},
    ]  # fmt: skip
    transcript = tmp_path / "failed.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in stream))

    done = phasegate("judge", task, "-t", transcript, "-w", checkout)
    code, report, _ = judged(task, transcript, checkout)

    assert code == 0 and report["phases"][0]["tool_errors"] == 2
    assert "    main agent: Edit×1; 1 error(s)\n" in done.stdout
    assert f"    subagent general-purpose {TASK_CALL}: no tools; 1 error(s)\n" in done.stdout


@pytest.mark.parametrize("shape", ["v1", "stream-json"])
def test_a_v1_sidechain_and_a_stream_json_subagent_count_alike(
    task: Path, checkout: Path, tmp_path: Path, shape: str
) -> None:
    """The same rule for every source: the Edit is the subagent's, the Task call the
    main agent's, and the subagent's own claim is not the phase's."""
    text = session_v1(str(checkout)) if shape == "v1" else stream_json(str(checkout))
    transcript = tmp_path / "run.jsonl"
    transcript.write_text(text)

    code, report, stderr = judged(task, transcript, checkout)

    assert code == 0, (stderr, report)
    (work,) = report["phases"][0]["subagents"]
    assert (work["agent"], work["type"], work["tools"]) == (
        TASK_CALL, "general-purpose", {"Edit": 1}
    )  # fmt: skip
    assert report["phases"][0]["tools"] == {"Task": 1, "Edit": 1}


def test_judged_subagent_work_reaches_the_log_and_phasegate_report(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    """phase.completed and run.completed carry it (events version 5); the report counts
    it by subagent type, and its failed call among the group's and the phase's tool
    errors (the judged calls are logged as tool.called, as a run logs them)."""
    log, sub = session_v2(str(checkout))
    transcript = write_session(tmp_path, log, {AGENT: sub})
    events = tmp_path / "events.jsonl"

    code, _, stderr = judged(task, transcript, checkout, "--log-file", events)
    report = phasegate("report", events, "--format", "json")

    assert code == 0, stderr
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    closing = {line["event"]: line for line in lines if line["event"].endswith(".completed")}
    assert closing["phase.completed"]["subagents"][0]["tools"] == {"Edit": 1, "Read": 1}
    assert closing["run.completed"]["subagents"][0]["agent"] == AGENT
    assert {line["schema_version"] for line in lines} == {5}
    (group,) = json.loads(report.stdout)["groups"]
    assert group["subagents"] == [{"type": "general-purpose", "calls": 2, "errors": 1}]
    assert group["phases"][0]["subagents"] == group["subagents"]
    assert (group["tool_errors"], group["phases"][0]["tool_errors"]) == (1, 1)
    assert closing["phase.completed"]["tool_errors"] == 1
    table = phasegate("report", events)
    assert "Subagents" in table.stdout and "general-purpose" in table.stdout


def test_a_read_only_phase_that_writes_its_plan_is_accepted(checkout: Path, tmp_path: Path) -> None:
    """Plan mode writes and edits Claude Code's plan file and reads a background task's
    output: neither an escape, nor a finding, nor a read-only violation."""
    git(checkout, "checkout", "--", "a.md")  # nothing changed: the task only plans
    task = tmp_path / "plan.yaml"
    task.write_text(PLAN_TASK)
    transcript = tmp_path / "plan.jsonl"
    transcript.write_text(plan_mode_session(str(checkout)))

    code, report, stderr = judged(task, transcript, checkout)

    assert code == 0, (stderr, report)
    assert report["findings"] == []
    assert report["phases"][0]["tools"] == {"Read": 2, "Write": 1, "Edit": 1, "ExitPlanMode": 1}


def test_writing_claude_codes_settings_is_still_an_escape(
    checkout: Path, tmp_path: Path, task: Path
) -> None:
    """Only a plan may be written: settings can grant permissions and add hooks."""
    text = stream_json(str(checkout)).replace(
        json.dumps(f"{checkout}/a.md"), json.dumps("/home/dev/.claude/settings.json"), 1
    )
    transcript = tmp_path / "run.jsonl"
    transcript.write_text(text)

    code, report, _ = judged(task, transcript, checkout)

    assert code == 1
    codes = [issue["code"] for issue in report["phases"][0]["issues"]]
    assert "path_outside_workdir" in codes


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "pretty-printed"])
def test_a_result_alone_is_refused_saying_how_to_keep_a_transcript(
    task: Path, checkout: Path, tmp_path: Path, indent: int | None
) -> None:
    """What ``claude -p --output-format json`` prints: exit 2, no traceback; ``--json``
    still gives the cost, turns and duration the result records."""
    transcript = tmp_path / "result.json"
    transcript.write_text(json.dumps(run_result(), indent=indent) + "\n")

    code, figures, stderr = judged(task, transcript, checkout)

    assert code == 2, stderr
    assert "holds a run's result ($0.320000, 15 turn(s), 48210 ms) and no messages" in stderr
    assert "--output-format stream-json --verbose" in stderr
    assert "Traceback" not in stderr
    assert (figures["cost_usd"], figures["num_turns"], figures["duration_ms"]) == (
        0.32, 15, 48210
    )  # fmt: skip


def test_pretty_printed_messages_are_read(task: Path, checkout: Path, tmp_path: Path) -> None:
    """Each message indented over several lines, one after another (``jq .``)."""
    lines = [json.loads(line) for line in stream_json(str(checkout)).splitlines()]
    transcript = tmp_path / "pretty.json"
    transcript.write_text("".join(json.dumps(line, indent=2) + "\n" for line in lines))

    code, report, stderr = judged(task, transcript, checkout)

    assert code == 0, (stderr, report)
    assert stderr == ""
    assert report["phases"][0]["subagents"][0]["tools"] == {"Edit": 1}


def test_a_pretty_printed_array_is_read(task: Path, checkout: Path, tmp_path: Path) -> None:
    lines = [json.loads(line) for line in stream_json(str(checkout)).splitlines()]
    transcript = tmp_path / "array.json"
    transcript.write_text(json.dumps(lines, indent=4))

    code, report, stderr = judged(task, transcript, checkout)

    assert code == 0, (stderr, report)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[]\n", "is an empty JSON array: no messages to judge; judge reads"),
        (
            "SystemMessage(subtype='init', data={'cwd': '/w'})\n"
            "AssistantMessage(content=[TextBlock(text='hi')], model='claude-sonnet-4-5')\n"
            "ResultMessage(subtype='success', duration_ms=10, is_error=False)\n",
            "holds Python reprs of claude-agent-sdk messages (3 line(s) such as "
            "AssistantMessage(...)), which are not JSON; judge reads",
        ),
    ],
    ids=["empty-array", "sdk-dump"],
)
def test_what_is_not_a_transcript_is_named_in_one_line_with_the_formats_read(
    task: Path, checkout: Path, tmp_path: Path, text: str, said: str
) -> None:
    transcript = tmp_path / "not.json"
    transcript.write_text(text)

    done = phasegate("judge", task, "-t", transcript, "-w", checkout)

    assert done.returncode == 2
    assert said in done.stderr
    assert "stream-json lines" in done.stderr and "session log" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_recording_page_of_a_judged_session_shows_the_subagents_work(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    """Per phase, a table of each subagent's work, and every subagent call named as its."""
    log, sub = session_v2(str(checkout))
    transcript = write_session(tmp_path, log, {AGENT: sub})
    folder = tmp_path / "recorded"

    code, _, stderr = judged(task, transcript, checkout, "--record", folder)
    page = phasegate("view", folder, "-o", tmp_path / "page.html")

    assert code == 0 and page.returncode == 0, (stderr, page.stderr)
    html = (tmp_path / "page.html").read_text()
    assert f'<tr data-agent="{AGENT}"><td>general-purpose {AGENT}</td>' in html
    assert f"subagent general-purpose {AGENT} · tool call" in html
