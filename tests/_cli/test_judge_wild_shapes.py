"""``phasegate judge`` on transcripts in every shape they come in from the wild.

The fixtures (tests/fixtures/transcripts/wild, recorded by tests/tasks/
test_saved_transcripts.py with the real CLI) are one run kept five ways: stream-json lines,
claude-code-action's execution file, a capture with partial messages and hook events, Claude
Code's session log, and the run as a Windows runner records it. Each is judged in a fresh
checkout holding the run's edit, through the command a user runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.wild import AFTER, REQUIREMENT, WILD, WILD_TASK, requirement_checkout

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")

SHAPES = [
    "stream_json.jsonl",
    "execution_file.json",
    "partial_messages.jsonl",
    "session_log.jsonl",
    "windows_run.jsonl",
]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout of the requirement project holding the recorded run's edit."""
    work = requirement_checkout(tmp_path / "checkout")
    (work / REQUIREMENT).write_text(AFTER)
    return work


def judge_json(*args: str | Path) -> tuple[int, dict[str, Any], str]:
    """Exit code, JSON report and stderr of ``phasegate judge ... --json``."""
    done = phasegate("judge", *args, "--json")
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def issue_codes(report: dict[str, Any]) -> set[str]:
    """Every issue code of every phase."""
    return {issue["code"] for phase in report["phases"] for issue in phase["issues"]}


@pytest.mark.parametrize("name", SHAPES)
def test_each_wild_shape_of_the_same_run_is_judged_alike(name: str, checkout: Path) -> None:
    """The same run, however it was kept: accepted, one Edit and two Reads (one refused),
    the edit on disk, and the refused read outside the work directory as a finding."""
    code, report, stderr = judge_json(WILD_TASK, "-t", WILD / name, "-w", checkout)

    assert code == 0, (stderr, report.get("phases"))
    assert report["verdict"] == "accepted"
    assert issue_codes(report) == set()
    assert report["phases"][0]["tools"] == {"Read": 1, "Edit": 1}
    assert report["phases"][0]["tool_errors"] == 1
    files = report["reconciliation"]
    assert files["tool_reported"] == files["disk_changed"] == files["claimed"] == [REQUIREMENT]
    assert [finding["code"] for finding in report["findings"]] == ["read_outside_workdir"]
    assert "skipped" not in stderr


def test_the_windows_run_finds_its_edit_once_not_twice(checkout: Path) -> None:
    """Drive-letter paths are made relative: the edit of c:/Users/.../reqs/a.md is the change
    git shows as reqs/a.md, not an edit_not_on_disk plus a change_without_tool."""
    code, report, _ = judge_json(WILD_TASK, "-t", WILD / "windows_run.jsonl", "-w", checkout)

    assert code == 0
    files = report["reconciliation"]
    assert files["edit_not_on_disk"] == files["change_without_tool"] == []
    (finding,) = report["findings"]
    assert finding["provided"] == "D:\\other\\notes.md"


def test_the_windows_run_without_its_edit_on_disk_is_rejected_for_that(tmp_path: Path) -> None:
    """The disk still decides: a checkout without the edit rejects the run, naming the file."""
    checkout = requirement_checkout(tmp_path / "checkout")

    code, report, _ = judge_json(WILD_TASK, "-t", WILD / "windows_run.jsonl", "-w", checkout)

    assert code == 1
    assert issue_codes(report) == {"no_changes", "claimed_not_changed"}
    assert report["reconciliation"]["edit_not_on_disk"] == [REQUIREMENT]


def test_a_task_that_forbids_reads_outside_fails_the_refused_read(
    checkout: Path, tmp_path: Path
) -> None:
    """allow_reads_outside: false turns the read finding into path_outside_workdir."""
    strict = tmp_path / "strict.yaml"
    strict.write_text(WILD_TASK.read_text() + "allow_reads_outside: false\n")

    code, report, _ = judge_json(strict, "-t", WILD / "stream_json.jsonl", "-w", checkout)

    assert code == 1
    assert issue_codes(report) == {"path_outside_workdir"}
    assert report["findings"] == []


def test_cwd_states_the_working_directory_a_transcript_lacks(
    checkout: Path, tmp_path: Path
) -> None:
    """Without its session start the run's paths are outside WORKDIR, and the edit fails the
    gate; --cwd /work/project (where it ran) makes them relative again."""
    lines = (WILD / "stream_json.jsonl").read_text().splitlines(keepends=True)
    headless = tmp_path / "headless.jsonl"
    headless.write_text("".join(line for line in lines if '"subtype":"init"' not in line))

    code, report, stderr = judge_json(WILD_TASK, "-t", headless, "-w", checkout)
    assert code == 1
    assert "path_outside_workdir" in issue_codes(report)
    assert "records no working directory" in stderr

    code, report, stderr = judge_json(
        WILD_TASK, "-t", headless, "-w", checkout, "--cwd", "/work/project"
    )
    assert code == 0, stderr
    assert report["reconciliation"]["tool_reported"] == [REQUIREMENT]


def test_cwd_overrides_the_recorded_one_and_says_so(checkout: Path) -> None:
    """An explicit --cwd wins over the transcript's own, with a warning naming both."""
    code, report, stderr = judge_json(
        WILD_TASK, "-t", WILD / "stream_json.jsonl", "-w", checkout, "--cwd", "/elsewhere"
    )

    assert code == 1
    assert "records the working directory /work/project; using --cwd /elsewhere" in stderr
    assert "path_outside_workdir" in issue_codes(report)


def test_lines_that_are_not_claude_code_messages_are_counted_with_an_example(
    checkout: Path, tmp_path: Path
) -> None:
    """Foreign JSON inside a transcript is skipped with a warning, and the rest is judged."""
    mixed = tmp_path / "mixed.jsonl"
    foreign = '{"event": "run.started", "run_id": "r1"}\n'
    mixed.write_text(foreign + (WILD / "stream_json.jsonl").read_text() + "[1, 2]\n")

    code, _, stderr = judge_json(WILD_TASK, "-t", mixed, "-w", checkout)

    assert code == 0
    assert "skipped 2 JSON value(s) that are not Claude Code messages" in stderr
    assert 'e.g. line 1: {"event": "run.started", "run_id": "r1"}' in stderr


@pytest.mark.parametrize(
    "text",
    [
        '{"event": "run.started"}\n{"event": "run.completed"}\n',
        '[{"role": "user", "content": "hi"}]',
        '{"type": "stream_event", "session_id": "s"}\n',
    ],
    ids=["foreign-lines", "foreign-array", "only-partial-deltas"],
)
def test_a_transcript_with_nothing_understood_is_refused_saying_what_was_expected(
    checkout: Path, tmp_path: Path, text: str
) -> None:
    """Exit 2, never a run with zero tools judged as if it happened."""
    transcript = tmp_path / "foreign.json"
    transcript.write_text(text)

    done = phasegate("judge", WILD_TASK, "-t", transcript, "-w", checkout)

    assert done.returncode == 2, done.stdout
    assert f"{transcript} holds no Claude Code messages" in done.stderr
    assert "expected Claude Code stream-json lines" in done.stderr
    assert "claude-code-action's execution file" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_transcript_saved_inside_the_work_directory_is_not_the_agents_work(
    checkout: Path,
) -> None:
    """`claude -p ... > run.jsonl` in the checkout: run.jsonl is untracked, yet no change."""
    inside = checkout / "run.jsonl"
    inside.write_text((WILD / "stream_json.jsonl").read_text())

    code, report, stderr = judge_json(WILD_TASK, "-t", inside, "-w", checkout)

    assert code == 0, stderr
    assert report["files_changed"] == [REQUIREMENT]
