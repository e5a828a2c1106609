"""The ``phasegate`` command, run as a user runs it: exit codes, stdout, stderr."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE


def test_check_prints_the_phased_prompt_and_exits_zero() -> None:
    """check validates the file and prints the exact prompt, marker lines included."""
    done = phasegate("check", EXAMPLE / "task.yaml")
    assert done.returncode == 0, done.stderr
    assert "PHASE 1 COMPLETE: Files have been edited" in done.stdout
    assert "valid task 'fix-vulnerability' with 2 phase(s)" in done.stderr


def test_check_of_a_bad_task_file_exits_two_naming_the_file_and_field(tmp_path: Path) -> None:
    """A typo in a key is reported with the file, the field and the keys that exist."""
    bad = tmp_path / "task.yaml"
    bad.write_text(
        "name: t\nphases:\n  - name: edit\n    instructions: do it\n    requires_tools: [Edit]\n"
    )
    done = phasegate("check", bad)
    assert done.returncode == 2
    assert str(bad) in done.stderr and "phases.0.requires_tools" in done.stderr
    assert "require_tools" in done.stderr  # the known keys are listed
    assert "Traceback" not in done.stderr


CHECKED = "name: t\nphases:\n  - name: fix\n    instructions: fix it\n    checks:\n{checks}"


@pytest.mark.parametrize(
    ("checks", "field"),
    [
        ("      - command: []\n", "phases.0.checks.0.command.argv"),
        ("      - lines_at_least: a.md\n", "phases.0.checks.0"),
        ("      - min_lines: {path: ../a.md, n: 3}\n", "phases.0.checks.0.min_lines.path"),
    ],
)
def test_check_of_a_bad_phase_check_exits_two_naming_its_field(
    tmp_path: Path, checks: str, field: str
) -> None:
    bad = tmp_path / "task.yaml"
    bad.write_text(CHECKED.format(checks=checks))
    done = phasegate("check", bad)
    assert done.returncode == 2, done.stderr
    assert f"{bad}: {field}" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_warns_when_a_command_check_runs_and_nothing_is_protected(tmp_path: Path) -> None:
    """The tests are the author's oracle: unprotected, the agent could make them pass."""
    task = tmp_path / "task.yaml"
    task.write_text(CHECKED.format(checks="      - command: [pytest, -q]\n"))
    done = phasegate("check", task)
    assert done.returncode == 0, done.stderr
    assert "warning: phase 1 (fix) runs a command check (pytest -q)" in done.stderr
    assert "list them under protect" in done.stderr

    task.write_text("protect: [tests]\n" + task.read_text())
    assert "warning" not in phasegate("check", task).stderr


def test_run_with_the_scripted_agent_prints_a_json_report_and_exits_by_verdict(
    tmp_path: Path,
) -> None:
    """--json prints the run report; the lazy model alone is rejected (exit 1)."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--workdir", work, "--agent", "scripted",
        "--script", EXAMPLE / "model.yaml", "--mode", "single-query", "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "rejected" and report["schema_version"] == 1
    assert report["phases"][0]["status"] == "rejected"
    assert "transcript" not in report
    assert "✗ gate check 1" in done.stderr  # progress goes to stderr


def test_run_in_gate_mode_exits_zero_when_the_feedback_gets_the_work_done(tmp_path: Path) -> None:
    """Same model, gate mode: accepted after feedback; the human summary says so."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "-w", work, "--agent", "scripted",
        "--script", EXAMPLE / "model.yaml", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("fix-vulnerability: ACCEPTED (gate, 2 gate check(s))")
    assert done.stderr == ""


@pytest.mark.cli
def test_run_with_a_model_script_drives_the_real_cli_offline(tmp_path: Path) -> None:
    """--model-script: the bundled Claude Code CLI against the scripted model server, no key."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "-w", work, "--model-script", EXAMPLE / "model.yaml",
        "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["agent"] == "claude" and report["verdict"] == "accepted"
    assert "eval(" not in (work / "app.py").read_text()


def test_a_script_that_stops_matching_is_named_in_a_warning_after_the_run(tmp_path: Path) -> None:
    """--script too: a reply waiting for feedback that never comes is a warning on stderr
    naming the script, the reply, what it expected and what came."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    script = tmp_path / "waits.yaml"
    script.write_text(
        "replies:\n  - text: I looked.\n"
        "  - when: user\n    contains: no feedback says this\n    text: fixed\n"
    )
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "-w", work, "--agent", "scripted", "--script", script,
        "--quiet", "--max-attempts", "2",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("phasegate: warning")]
    assert len(warnings) == 1, done.stderr  # one per unmatched request: one feedback turn
    assert (
        f"model script {script}: script reply 2 (when: user, contains: 'no feedback"
        in (warnings[0])
    )


def test_a_library_error_names_the_flag_that_fixes_it(tmp_path: Path) -> None:
    """The library names a keyword argument; the command line adds its own spelling of it."""
    done = phasegate("check", EXAMPLE / "task.yaml", "--prompts-dir", tmp_path / "absent")
    assert done.returncode == 2
    assert "prompts directory" in done.stderr and "does not exist" in done.stderr
    assert done.stderr.rstrip().endswith("(command line: --prompts-dir)")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "scripted"], "--script FILE"),
        (["--agent", "scripted", "--script", "missing.yaml"], "missing.yaml: file not found"),
        (["--agent", "scripted", "--script", "model.yaml", "-w", "nowhere"], "nowhere"),
        (["--max-attempts", "0"], "max-attempts"),
        (["--mode", "sometimes"], "sometimes"),
        (["--agent", "scripted", "--model-script", "model.yaml"], "drop --agent scripted"),
        # --script is never ignored: without --agent scripted it is an error, not a no-op
        (["--script", "model.yaml"], "--script is for --agent scripted"),
    ],
)
def test_bad_run_arguments_exit_two_with_a_message(args: list[str], message: str) -> None:
    """Bad arguments never start an agent and never print a traceback."""
    done = phasegate("run", "task.yaml", *args, cwd=EXAMPLE)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "log", ["runs.jsonl", "logs/runs.jsonl", "../into-work/runs.jsonl"],
    ids=["in-place", "subdirectory", "through-a-link"],
)  # fmt: skip
def test_run_logging_into_its_work_directory_is_accepted_and_never_judged_on_the_log(
    tmp_path: Path, log: str
) -> None:
    """`cd work && phasegate run ... --log-file runs.jsonl`: the log is phasegate's, not the
    agent's work, so the lazy model is accepted after its fix and no gate check names it."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    (work / "logs").mkdir()
    (tmp_path / "into-work").symlink_to(work, target_is_directory=True)
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--agent", "scripted", "--script", EXAMPLE / "model.yaml",
        "--log-file", log, "--json", "--quiet", cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["files_changed"] == ["app.py"] and report["findings"] == []
    lines = [json.loads(line) for line in (work / log).read_text().splitlines()]
    assert lines[-1]["event"] == "run.completed" and lines[-1]["verdict"] == "accepted"
    gate_issues = {
        code for line in lines if line["event"] == "phase.gate" for code in line["issues"]
    }
    assert "changed_not_claimed" not in gate_issues


@pytest.mark.parametrize(
    "target", ["task.yaml", "model.yaml", "task-link.yaml", "prompts/feedback.md"]
)
def test_a_log_file_that_is_one_of_the_inputs_is_refused_and_left_alone(
    tmp_path: Path, target: str
) -> None:
    """`--log-file task.yaml` would append JSON to the task: exit 2 before anything runs,
    however the file is named (a link to it included)."""
    shutil.copy(EXAMPLE / "task.yaml", tmp_path / "task.yaml")
    shutil.copy(EXAMPLE / "model.yaml", tmp_path / "model.yaml")
    (tmp_path / "task-link.yaml").symlink_to(tmp_path / "task.yaml")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "feedback.md").write_text("custom feedback\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    shutil.copytree(EXAMPLE / "project", tmp_path / "work")
    done = phasegate(
        "run", "task.yaml", "-w", "work", "--agent", "scripted",
        "--script", "model.yaml", "--prompts-dir", "prompts", "--log-file", target,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"--log-file {target} is " in done.stderr and "log to another file" in done.stderr
    assert "Traceback" not in done.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert (tmp_path / "work" / "app.py").read_text() == (
        EXAMPLE / "project" / "app.py"
    ).read_text()


def test_demo_shows_the_rejection_and_the_gated_acceptance() -> None:
    """The demo makes the project's point: same model, rejected alone, accepted at the gate."""
    done = phasegate("demo", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "verdict: REJECTED after 1 gate check(s)" in done.stdout
    assert "verdict: ACCEPTED after 2 gate check(s)" in done.stdout
    assert "disk really changed: nothing" in done.stdout


_HEAVY = {"claude_agent_sdk", "mcp", "opentelemetry"}
_TRANSCRIPT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "edit_then_json.jsonl"
)


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["check", str(EXAMPLE / "task.yaml")],
        ["judge", str(EXAMPLE / "task.yaml"), "-t", str(_TRANSCRIPT), "-w", "{work}"],
        ["report", "{log}"],
    ],
    ids=["help", "check", "judge", "report"],
)
def test_commands_that_run_no_agent_never_load_the_agent_sdk(
    args: list[str], tmp_path: Path
) -> None:
    """claude-agent-sdk, MCP and OpenTelemetry cost a second of imports: only `run` and the
    pipeline commands (and --otel) may pay it."""
    log = tmp_path / "runs.jsonl"
    log.write_text("")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    start = ["commit", "-q", "--allow-empty", "-m", "start"]
    subprocess.run(["git", "-C", str(tmp_path), *who, *start], check=True)
    filled = [a.format(work=tmp_path, log=log) for a in args]
    code = (
        "import sys\n"
        "from phasegate._cli.app import app\n"
        f"ended = app({filled!r}, standalone_mode=False)\n"
        "print('ended', ended or 0)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {_HEAVY!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *_, ended, loaded = done.stdout.strip().splitlines()
    assert ended in ("ended 0", "ended 1"), done.stdout + done.stderr  # the command ran through
    assert loaded == "[]"


def test_a_schema_outside_the_task_folder_names_files_root_and_that_flag_widens_it(
    tmp_path: Path,
) -> None:
    """`check` refuses ../outside.schema.json (exit 2, naming --files-root); with the flag
    set to a folder holding both files, the same task is valid."""
    (tmp_path / "outside.schema.json").write_text(json.dumps({"type": "object"}))
    task = tmp_path / "tasks" / "task.json"
    task.parent.mkdir()
    phase = {"name": "answer", "instructions": "Answer.", "output_schema": "../outside.schema.json"}
    task.write_text(json.dumps({"name": "t", "phases": [phase]}))

    refused = phasegate("check", task)
    widened = phasegate("check", task, "--files-root", tmp_path)

    assert refused.returncode == 2, refused.stderr
    assert "--files-root" in refused.stderr and "Traceback" not in refused.stderr
    assert widened.returncode == 0, widened.stderr


def test_the_command_line_imports_other_commands_only_when_they_are_called() -> None:
    """`phasegate run` pays for no import of the service, the batch runner or reports; a
    command built on first use still answers (its help here)."""
    later = ["phasegate._cli.serve", "phasegate._cli.batch", "phasegate._cli.metrics_report",
             "phasegate._cli.github", "phasegate._cli.pipeline"]  # fmt: skip
    code = (
        "import sys\n"
        "from phasegate._cli.app import app\n"
        f"print(sorted(set(sys.modules) & {set(later)!r}))\n"
        "app(['serve', '--help'], standalone_mode=False)\n"
        "print('serve' in sys.modules['phasegate._cli.serve'].__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "[]"
    assert "--max-concurrent" in done.stdout
    assert lines[-1] == "True"
