"""``phasegate judge``: saved Claude Code transcripts (recorded from the real CLI against the
scripted model, in a directory that no longer exists) judged in a fresh git checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
TASK = EXAMPLE / "task.yaml"
APP = "def parse(x):\n    return eval(x)\n"
"""app.py as the recorded runs found it (see tests/agents/scripted/test_model_server.py)."""

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")


def git(work: Path, *args: str) -> None:
    """Run git in ``work`` with a fixed identity, failing the test on error."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository holding app.py as the recorded run started from, committed."""
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "app.py").write_text(APP)
    git(work, "init", "-q")
    git(work, "add", "app.py")
    git(work, "commit", "-qm", "start")
    return work


def test_the_good_transcript_with_its_edit_on_disk_is_accepted(checkout: Path) -> None:
    """The run edited app.py (recorded under /work/project); this checkout holds that edit."""
    (checkout / "app.py").write_text(APP.replace("eval(x)", "int(x)"))

    done = phasegate(
        "judge", TASK, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json",
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "accepted"
    assert report["agent"] == "transcript"
    assert report["files_changed"] == ["app.py"] == report["files_claimed"]
    assert report["phases"][0]["tools"] == {"Edit": 1, "Read": 1}
    assert report["phases"][0]["files_changed"] == ["app.py"]
    assert report["reconciliation"]["tool_reported"] == ["app.py"]
    assert report["findings"] == []


def test_json_without_edits_is_rejected_with_the_missing_work_named(checkout: Path) -> None:
    """The lazy transcript: marker and JSON, no tool, no change on disk. Exit 1."""
    done = phasegate(
        "judge", TASK, "--transcript", TRANSCRIPTS / "json_without_edit.jsonl",
        "--workdir", checkout,
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    assert "REJECTED" in done.stdout
    for code in ("tool_not_used", "no_changes", "claimed_not_changed"):
        assert code in done.stdout


def test_the_good_transcript_without_its_edit_on_disk_is_rejected(checkout: Path) -> None:
    """The transcript claims an edit, but this checkout does not hold it: the disk decides."""
    done = phasegate(
        "judge", TASK, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json",
    )  # fmt: skip

    assert done.returncode == 1
    report = json.loads(done.stdout)
    codes = {issue["code"] for phase in report["phases"] for issue in phase["issues"]}
    assert codes == {"no_changes", "claimed_not_changed"}
    assert report["reconciliation"]["edit_not_on_disk"] == ["app.py"]


def test_before_names_the_commit_the_run_started_from(checkout: Path) -> None:
    """The edit already committed: judged since the commit before it, it still counts."""
    (checkout / "app.py").write_text(APP.replace("eval(x)", "int(x)"))
    git(checkout, "commit", "-qam", "the agent's edit")

    since_head = phasegate("judge", TASK, "-t", TRANSCRIPTS / "edit_then_json.jsonl",
                           "-w", checkout)  # fmt: skip
    since_start = phasegate("judge", TASK, "-t", TRANSCRIPTS / "edit_then_json.jsonl",
                            "-w", checkout, "--before", "HEAD~1")  # fmt: skip

    assert since_head.returncode == 1
    assert since_start.returncode == 0, since_start.stdout + since_start.stderr


def test_an_api_failure_transcript_is_an_error_exit_three(checkout: Path) -> None:
    """A transcript whose run died on the API reports the error, like `run` would."""
    done = phasegate("judge", TASK, "-t", TRANSCRIPTS / "api_error_500.jsonl", "-w", checkout)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "HTTP 500" in done.stdout


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing-transcript", "cannot read transcript"),
        ("not-json", "holds no Claude Code messages"),
        ("not-git", "is not inside a git work tree"),
        ("bad-ref", "git does not know the revision 'nope'"),
    ],
)
def test_bad_judge_input_exits_two_with_a_message(
    tmp_path: Path, checkout: Path, setup: str, message: str
) -> None:
    """Each bad input is named, with what to do; never a traceback."""
    transcript = TRANSCRIPTS / "edit_then_json.jsonl"
    workdir, before = checkout, "HEAD"
    if setup == "missing-transcript":
        transcript = tmp_path / "absent.jsonl"
    elif setup == "not-json":
        transcript = tmp_path / "notes.txt"
        transcript.write_text("just some notes\n")
    elif setup == "not-git":
        workdir = tmp_path / "plain"
        workdir.mkdir()
    else:
        before = "nope"

    done = phasegate("judge", TASK, "-t", transcript, "-w", workdir, "--before", before)

    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_work_directory_is_named_with_its_flag(tmp_path: Path) -> None:
    """The same check, and the same advice, as for `run`."""
    transcript = next(TRANSCRIPTS.glob("*.jsonl"))
    done = phasegate("judge", TASK, "-t", transcript, "-w", tmp_path / "nowhere")
    assert done.returncode == 2
    assert f"work directory {tmp_path / 'nowhere'} does not exist" in done.stderr
    assert done.stderr.rstrip().endswith("(command line: --workdir)")


def test_a_judged_run_logged_with_log_file_is_counted_by_report(
    checkout: Path, tmp_path: Path
) -> None:
    """judge --log-file writes the events a run closes with, so `report` reads judged runs."""
    (checkout / "app.py").write_text(APP.replace("eval(x)", "int(x)"))
    log = tmp_path / "judge.jsonl"

    done = phasegate(
        "judge", TASK, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json", "--log-file", log,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    names = [e["event"] for e in events]
    calls = names.count("tool.called")
    assert calls > 0  # each judged call, as a run logs it, so report counts its errors
    assert names == [
        "run.started", *["tool.called"] * calls, "phase.completed", "phase.completed",
        "run.completed",
    ]  # fmt: skip
    assert {e["run_id"] for e in events} == {run_id}
    assert events[-1]["verdict"] == "accepted"
    summary = json.loads(phasegate("report", log, "--format", "json").stdout)
    assert summary["runs"] == 1
    assert {e["mode"] for e in events} == {"judge"}  # no gate ran: not a gate run


def test_report_by_mode_keeps_judged_transcripts_apart_from_gate_runs(
    checkout: Path, tmp_path: Path
) -> None:
    """A judged transcript and a gated run of the same task are two rows of report --by mode,
    not one gate row of two runs."""
    (checkout / "app.py").write_text(APP.replace("eval(x)", "int(x)"))
    log = tmp_path / "runs.jsonl"
    done = phasegate(
        "judge", TASK, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json", "--log-file", log,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    gated = [json.loads(line) | {"run_id": "gated-run-01", "mode": "gate"}
             for line in log.read_text().splitlines()]  # fmt: skip
    with log.open("a") as file:
        file.writelines(json.dumps(event) + "\n" for event in gated)

    summary = json.loads(phasegate("report", log, "--by", "mode", "--format", "json").stdout)

    rows = {group["mode"]: group["runs"] for group in summary["groups"]}
    assert rows == {"judge": 1, "gate": 1}


def _with_check(tmp_path: Path, argv: list[str]) -> Path:
    """The example task with a command check on its edit phase, written beside the test."""
    text = TASK.read_text().replace(
        "    require_changes: true\n",
        f"    require_changes: true\n    checks:\n      - command: {json.dumps(argv)}\n",
        1,
    )
    checked = tmp_path / "checked-task.yaml"
    checked.write_text(text)
    return checked


@pytest.mark.parametrize(
    ("fixed", "verdict", "code"),
    [("int(x)", "accepted", 0), ("float(eval(x))", "rejected", 1)],
)
def test_judge_runs_the_phases_checks_on_the_checkout_as_it_is_now(
    checkout: Path, tmp_path: Path, fixed: str, verdict: str, code: int
) -> None:
    """The check refuses any eval left in app.py: it decides between two edits on disk."""
    (checkout / "app.py").write_text(APP.replace("eval(x)", fixed))
    no_eval = "import sys; sys.exit('eval' in open('app.py').read())"
    task = _with_check(tmp_path, [sys.executable, "-c", no_eval])

    done = phasegate(
        "judge", task, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json",
    )  # fmt: skip

    assert done.returncode == code, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == verdict
    (check,) = report["phases"][0]["checks"]
    assert check["passed"] is (verdict == "accepted")
    assert check["exit_code"] == (0 if verdict == "accepted" else 1)
    assert "checks_skipped" not in report


def test_judge_without_checks_runs_nothing_and_says_so(checkout: Path, tmp_path: Path) -> None:
    (checkout / "app.py").write_text(APP.replace("eval(x)", "int(x)"))
    marker = tmp_path / "ran"
    task = _with_check(tmp_path, ["touch", str(marker)])

    done = phasegate(
        "judge", task, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, "--json", "--no-checks",
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["checks_skipped"] is True
    assert "checks" not in report["phases"][0]
    assert not marker.exists()
