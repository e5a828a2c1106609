"""``phasegate github``: a report's outputs, summary and annotations, in and out of Actions.

The reports are real: a scripted run of the example task that claims a file it never
changed (rejected), and one that does the work (accepted), written by ``phasegate run``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.github_reports import hostile_pipeline_report, hostile_run_report, write_report
from tests.helpers.github_runner import as_shown, command_like_lines, commands_in, read_outputs
from tests.helpers.scenarios import BUGGY_LINE, EXAMPLE, FIXED_LINE, GOOD_JSON, MARKER

LAZY_JSON = GOOD_JSON.replace("app.py", "ghost.py")


def scripted_run(tmp_path: Path, edit: bool, answer: str) -> tuple[Path, Path, Path]:
    """Run the example task with the scripted agent; return (report, log, project)."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", project)
    tools = [{"Edit": {"file_path": "app.py", "old_string": BUGGY_LINE, "new_string": FIXED_LINE}}]
    reply = {"text": f"{MARKER}\n\n{answer}", "tools": tools if edit else []}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [reply] * 3}))
    report, log = tmp_path / "report.json", tmp_path / "events.jsonl"
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--workdir", project, "--agent", "scripted",
        "--script", script, "--json", "--log-file", log, "-q",
    )  # fmt: skip
    report.write_text(done.stdout)
    return report, log, project


@pytest.fixture
def runner_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """GITHUB_ACTIONS=true with the step's files, the workspace being ``tmp_path``."""
    files = {name: tmp_path / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    for name, path in files.items():
        path.touch()
        monkeypatch.setenv(name, str(path))
    return files


def test_a_rejected_run_fails_the_step_with_its_exit_code_and_annotates_the_file(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    report, log, project = scripted_run(tmp_path, edit=False, answer=LAZY_JSON)
    html = tmp_path / "report.html"

    done = phasegate(
        "github", report, "--log", log, "--html-report", html, "--workdir", project
    )  # fmt: skip

    assert done.returncode == 1, done.stderr
    data = json.loads(report.read_text())
    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert outputs["verdict"] == "rejected" == data["verdict"]
    assert outputs["issue_codes"].split(",") == list(
        dict.fromkeys(i["code"] for p in data["phases"] for i in p["issues"])
    )
    assert outputs["log_file"] == str(log) and outputs["html_report"] == str(html)
    assert "<html" in html.read_text().lower()
    claimed = [c for c in commands_in(done.stdout) if c.properties.get("file")]
    assert {c.properties["file"] for c in claimed} == {"project/ghost.py"}
    assert "❌ phasegate: rejected" in runner_files["GITHUB_STEP_SUMMARY"].read_text()


@pytest.mark.parametrize(
    ("fail_on", "code"), [("rejected", 1), ("error", 0), ("never", 0)]
)  # fmt: skip
def test_fail_on_decides_whether_a_rejection_fails_the_step(
    tmp_path: Path, runner_files: dict[str, Path], fail_on: str, code: int
) -> None:
    report, _, _ = scripted_run(tmp_path, edit=False, answer=LAZY_JSON)

    done = phasegate("github", report, "--fail-on", fail_on)

    assert done.returncode == code
    assert read_outputs(runner_files["GITHUB_OUTPUT"])["exit_code"] == "1"


def test_an_accepted_run_passes_and_its_answer_is_one_compact_line(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    report, _, project = scripted_run(tmp_path, edit=True, answer=GOOD_JSON)

    done = phasegate("github", report, "--no-summary", "--workdir", project)

    assert done.returncode == 0, done.stdout + done.stderr
    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert json.loads(outputs["summary_json"]) == json.loads(GOOD_JSON.strip("`json\n"))
    assert "\n" not in outputs["summary_json"]
    assert outputs["session_id"] == json.loads(report.read_text())["session_id"]
    assert runner_files["GITHUB_STEP_SUMMARY"].read_text() == ""
    assert done.stdout == ""


@pytest.mark.parametrize("fail_on", ["rejected", "error"])
def test_a_command_that_wrote_no_report_is_an_error_that_fails_both_ways(
    tmp_path: Path, runner_files: dict[str, Path], fail_on: str
) -> None:
    empty = tmp_path / "report.json"
    empty.write_text("")

    done = phasegate("github", empty, "--exit-code", "2", "--fail-on", fail_on)

    assert done.returncode == 2
    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert (outputs["verdict"], outputs["exit_code"]) == ("error", "2")
    (annotation,) = commands_in(done.stdout)
    assert "exited 2 before it wrote a report" in annotation.data


def test_a_missing_or_empty_report_without_an_exit_code_is_refused_naming_the_file(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    """With no code given there is no run to speak of: no made-up exit code 3, no outputs,
    exit 2 naming the file and what to give instead."""
    empty = tmp_path / "empty.json"
    empty.write_text("")
    for report in (tmp_path / "missing.json", empty):
        done = phasegate("github", report)
        assert done.returncode == 2
        assert f"{report}: no report here" in done.stderr
        assert "--exit-code" in done.stderr and "Traceback" not in done.stderr
        assert runner_files["GITHUB_OUTPUT"].read_text() == ""
        assert done.stdout == ""


def test_a_report_that_cannot_be_read_is_refused_naming_the_file(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    """A folder where the report should be is exit 2, even with an exit code given."""
    folder = tmp_path / "report.json"
    folder.mkdir()
    done = phasegate("github", folder, "--exit-code", "1")
    assert done.returncode == 2
    assert f"{folder}: cannot read the report" in done.stderr
    assert runner_files["GITHUB_OUTPUT"].read_text() == ""


@pytest.mark.parametrize("code", ["256", "-1"])
def test_an_exit_code_no_process_can_have_is_refused_instead_of_wrapping_to_zero(
    tmp_path: Path, runner_files: dict[str, Path], code: str
) -> None:
    """256 would wrap to 0 and let a failing step pass: it is bad input (exit 2)."""
    empty = tmp_path / "report.json"
    empty.write_text("")
    done = phasegate("github", empty, "--exit-code", code)
    assert done.returncode == 2
    assert "Invalid value for '--exit-code'" in done.stderr
    assert "Traceback" not in done.stderr
    assert runner_files["GITHUB_OUTPUT"].read_text() == ""


def test_a_file_that_is_not_a_report_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"phases": "many"}')

    done = phasegate("github", bad)

    assert done.returncode == 2
    assert f"{bad}: " in done.stderr
    assert "not a phasegate report" in done.stderr
    assert "Traceback" not in done.stderr


def test_outside_actions_it_prints_what_it_would_write_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "must-not-exist"))
    report, _, _ = scripted_run(tmp_path, edit=False, answer=LAZY_JSON)

    done = phasegate("github", report, "--fail-on", "never")

    assert done.returncode == 0
    assert "== outputs (GITHUB_OUTPUT) ==\nverdict=rejected\n" in done.stdout
    assert "== summary (GITHUB_STEP_SUMMARY) ==\n### ❌" in done.stdout
    assert "== annotations ==\n::error " in done.stdout
    assert not (tmp_path / "must-not-exist").exists()


def test_a_pipeline_report_gives_stage_counts_and_failed_check_kinds(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    stage = {
        "index": 1, "name": "build", "status": "rejected", "attempts": 2,
        "checks": [{"kind": "file_exists", "description": "out.txt exists", "ok": False,
                    "detail": "no such file"}],
    }  # fmt: skip
    report = tmp_path / "pipeline.json"
    report.write_text(
        json.dumps(
            {
                "pipeline": "p", "run_id": "abc", "agent": "claude", "isolation": "session",
                "verdict": "rejected", "success": False, "stages": [stage], "sessions": 1,
                "duration_ms": 5, "state_file": "s.json", "session_id": "sess-1",
            }
        )
    )  # fmt: skip

    done = phasegate("github", report, "--fail-on", "never")

    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert done.returncode == 0
    assert (outputs["phases_accepted"], outputs["phases_rejected"]) == ("0", "1")
    assert (outputs["issue_codes"], outputs["session_id"]) == ("file_exists", "sess-1")
    assert "| stage | name |" in runner_files["GITHUB_STEP_SUMMARY"].read_text()


@pytest.mark.parametrize("fail_on", ["rejected", "error"])
def test_a_failing_step_never_exits_0_even_when_the_command_before_did(
    tmp_path: Path, runner_files: dict[str, Path], fail_on: str
) -> None:
    """No report after an exit code of 0 (the report went elsewhere) is still an error."""
    done = phasegate("github", tmp_path / "missing.json", "--exit-code", "0", "--fail-on", fail_on)

    assert done.returncode == 3
    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert (outputs["verdict"], outputs["exit_code"]) == ("error", "0")


HOSTILE = (
    "a\x1b[31mred\x1b[0m %0A %25 \r::add-mask::x\n::error::forged ##[set-output name=v;]x "
    "::stop-commands::t `|<b>"
)


def test_hostile_report_text_reaches_the_runner_only_as_meant(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    """Messages come back exactly (``##[`` shown escaped), one annotation each; nothing else
    is a command, on stdout or stderr; every value reads back as the report has it."""
    report = write_report(tmp_path / "report.json", hostile_run_report(HOSTILE))

    done = phasegate("github", report, "--workdir", tmp_path)

    assert done.returncode == 1, done.stderr
    commands = commands_in(done.stdout)
    assert [(c.name, c.properties.get("title")) for c in commands] == [
        ("error", "phasegate claimed_not_changed"),
        ("warning", "phasegate change_without_tool"),
    ]
    text = as_shown(HOSTILE)
    assert commands[0].data == f"phase 1 ({text}): {text} Requirement: {text}"
    assert commands[1].data == f"run: {text}"
    assert commands_in(done.stderr) == []
    outputs = read_outputs(runner_files["GITHUB_OUTPUT"])
    assert outputs["final_message"] == outputs["session_id"] == HOSTILE
    assert json.loads(outputs["summary_json"]) == {HOSTILE: HOSTILE}


def test_a_report_holding_half_a_surrogate_pair_is_reported_not_a_crash(
    tmp_path: Path, runner_files: dict[str, Path]
) -> None:
    report = write_report(tmp_path / "report.json", hostile_run_report("a-HALF-b"))
    report.write_text(report.read_text().replace("HALF", "\\udc00"))

    done = phasegate("github", report, "--fail-on", "never")

    assert done.returncode == 0, done.stderr
    assert read_outputs(runner_files["GITHUB_OUTPUT"])["final_message"] == "a-\ufffd-b"
    assert "a-\ufffd-b" in commands_in(done.stdout)[0].data


@pytest.mark.parametrize(
    "text",
    ['{"phases": ' + "[" * 50_000 + "]" * 50_000 + "}", '{"phases": [], "\\n::error::x": 1}'],
)
def test_a_file_no_report_could_be_is_refused_without_a_trace_or_a_command(
    tmp_path: Path, runner_files: dict[str, Path], text: str
) -> None:
    bad = tmp_path / "report.json"
    bad.write_text(text)

    done = phasegate("github", bad)

    assert done.returncode == 2
    assert done.stderr.startswith(f"phasegate: error: {bad}")
    assert "Traceback" not in done.stderr
    assert commands_in(done.stderr) == []


@pytest.mark.parametrize("over", ["log", "report"])
def test_the_html_report_is_never_written_over_the_log_or_the_report(
    tmp_path: Path, runner_files: dict[str, Path], over: str
) -> None:
    report, log, _ = scripted_run(tmp_path, edit=False, answer=LAZY_JSON)
    kept = {"log": log, "report": report}[over]
    before = kept.read_text()

    done = phasegate("github", report, "--log", log, "--html-report", kept)

    assert done.returncode == 2
    assert "--html-report" in done.stderr and "choose another file" in done.stderr
    assert kept.read_text() == before


PLANTED = [
    "##[error]FORGED",
    "a ##[add-mask]FORGED",
    "::error::FORGED",
    "  ::warning file=a.py::FORGED",
    "%0A::error::FORGED",
    "x\r::error::FORGED",
    "x\n##[set-output name=verdict;]accepted",
    "src/##[group]FORGED.py",
]


@pytest.mark.parametrize("planted", PLANTED)
def test_commands_planted_in_any_field_of_a_report_never_reach_a_line_of_stdout(
    tmp_path: Path, runner_files: dict[str, Path], planted: str
) -> None:
    """Claimed paths, issue messages, phase names, summaries and errors all hold the text:
    only phasegate's two annotations are commands, no line holds ``##[``, and the only lines
    starting with ``::`` are those two."""
    report = write_report(tmp_path / "report.json", hostile_run_report(planted))

    done = phasegate("github", report, "--workdir", tmp_path)

    assert done.returncode == 1, done.stderr
    commands = commands_in(done.stdout)
    assert [(c.name, c.properties["title"]) for c in commands] == [
        ("error", "phasegate claimed_not_changed"),
        ("warning", "phasegate change_without_tool"),
    ]
    assert commands[0].properties["file"] == as_shown(planted.strip())
    assert commands[1].data == f"run: {as_shown(planted)}"
    assert command_like_lines(done.stdout) == [c.line for c in commands]
    assert "##[" not in done.stdout
    assert command_like_lines(done.stderr) == []


@pytest.mark.parametrize("planted", PLANTED)
def test_outside_actions_the_preview_of_a_planted_report_holds_no_command_but_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """A container started in a step does not inherit GITHUB_ACTIONS, yet the runner reads its
    output: the outputs and summary it previews are inert there too."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    report = write_report(tmp_path / "report.json", hostile_run_report(planted))

    done = phasegate("github", report, "--workdir", tmp_path, "--fail-on", "never")

    assert done.returncode == 0, done.stderr
    commands = commands_in(done.stdout)
    assert [c.name for c in commands] == ["error", "warning"]
    assert command_like_lines(done.stdout) == [c.line for c in commands]
    assert "##[" not in done.stdout
    assert "== outputs (GITHUB_OUTPUT) ==\nverdict=rejected\n" in done.stdout


@pytest.mark.parametrize("planted", PLANTED)
def test_commands_planted_in_a_pipeline_report_never_reach_a_line_of_stdout(
    tmp_path: Path, runner_files: dict[str, Path], planted: str
) -> None:
    """Stage names, check kinds and details, the error: the only command is the error's
    annotation, and no line holds ``##[``."""
    report = write_report(tmp_path / "report.json", hostile_pipeline_report(planted))

    done = phasegate("github", report, "--workdir", tmp_path, "--fail-on", "never")

    assert done.returncode == 0, done.stderr
    commands = commands_in(done.stdout)
    assert all(c.properties.get("title", "").startswith("phasegate ") for c in commands)
    assert command_like_lines(done.stdout) == [c.line for c in commands]
    assert "##[" not in done.stdout
    assert command_like_lines(done.stderr) == []
