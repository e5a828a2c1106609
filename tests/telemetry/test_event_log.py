"""Run events as log lines: the documented schemas, secrets, shared files, formats."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest
import structlog
import yaml

from phasegate import Runner, Sandbox, Task, UsageError
from phasegate._secrets import REDACTED, redact
from phasegate.agents.retry import RetryPolicy
from phasegate.evidence.transcript import SandboxBlocked
from phasegate.modes import EventName
from phasegate.phases.checks import FileExists
from phasegate.telemetry.events import (
    AttemptBlocked,
    EventData,
    PhaseStarted,
    RetryScheduled,
    RunCancelled,
    RunCompleted,
    RunDone,
    RunEvent,
    RunInterrupted,
    RunQueued,
    ToolCalled,
    fan_out,
    output_files,
)
from phasegate.telemetry.log import EventLog
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.cli import phasegate
from tests.helpers.event_schemas import documented_schemas
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON

EVENT_NAMES = get_args(EventName)
PIPELINE_EVENT_NAMES = tuple(n for n in EVENT_NAMES if n.startswith(("pipeline.", "stage.")))
SERVICE_EVENT_NAMES = ("run.queued", "run.cancelled", "run.interrupted", "done")
TASK_EVENT_NAMES = tuple(
    n for n in EVENT_NAMES if n not in PIPELINE_EVENT_NAMES and n not in SERVICE_EVENT_NAMES
)


def event(data: EventData) -> RunEvent:
    """``data`` as an event of run abc123def456 of task t."""
    return RunEvent(data, "abc123def456", "t", "gate")


def retry(reason: str) -> RetryScheduled:
    """A retry.scheduled event's fields with ``reason``."""
    return RetryScheduled(attempt=1, reason=reason, delay_ms=10, source="phasegate")


def lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a log file."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_event_the_runner_emits_is_documented_with_a_schema() -> None:
    """docs/events.md has one valid Draft 2020-12 schema per event name of task and pipeline
    runs, no more, no fewer."""
    schemas = documented_schemas()
    assert set(schemas) == set(EVENT_NAMES)
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_what_the_runner_writes_validates_against_the_documented_schemas(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """A recorded run in a sandbox with a retry, a summary refused before the work, a write
    outside the work directory refused (an attempt to leave), a phase's check, tool
    completions, feedback and an acceptance: every line valid, every event name present."""
    early: dict[str, Any] = {"submit_summary": {"summary": {"files_changed": []}}}
    outside = {"Write": {"file_path": str(tmp_path / "outside.txt"), "content": "x"}}
    script = Script.model_validate({"replies": [
        {"error": {"status": 529}},
        {"tools": [early, outside]},
        {"when": "tool_error", "text": "Fixing.", "tools": [EDIT]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "done"}}]},
        {"when": "tool_result", "text": "```json\n{\"files_changed\": []}\n```"},
        {"when": "user", "text": GOOD_JSON},
    ]})  # fmt: skip
    log_file = tmp_path / "events.jsonl"
    with EventLog(file=log_file) as log:
        retry = RetryPolicy(session_retries=1, initial_delay=0.01, max_delay=0.02)
        runner = Runner(ScriptedAgent(script), on_event=log, retry=retry)
        checked = task.phases[0].model_copy(update={"checks": (FileExists(path="app.py"),)})
        confined = task.model_copy(
            update={"sandbox": Sandbox(mode="optional"), "phases": (checked, *task.phases[1:])}
        )
        report = runner.run_sync(confined, project, record=tmp_path / "recording")

    assert report.verdict == "accepted", report.issues
    schemas = documented_schemas()
    written = lines(log_file)
    for line in written:
        jsonschema.validate(line, schemas[line["event"]])
    assert {line["event"] for line in written} == set(TASK_EVENT_NAMES)
    assert written[0]["event"] == "run.started" and written[-1]["event"] == "run.completed"
    assert written[-1]["recording"] == str(tmp_path / "recording")  # a recorded run says where
    assert list(written[0])[:6] == [
        "event",
        "timestamp",
        "run_id",
        "task",
        "mode",
        "schema_version",
    ]


REVISE: dict[str, Any] = {
    "name": "revise",
    "stages": [
        {
            "name": "architect",
            "prompt": "Write spec.md.",
            "exit_when": [{"file_exists": "spec.md"}],
        },
        {
            "name": "implement",
            "prompt": "Implement spec.md.",
            "exit_when": [{"min_lines": {"path": "spec.md", "n": 2}}],
            "on_fail": {"retry": 0, "back_to": "architect"},
        },
    ],
}
"""implement needs a 2-line spec.md; failing once sends the run back to architect."""

SPEC_V1 = {"Write": {"file_path": "spec.md", "content": "v1\n"}}
SPEC_V2 = {"Write": {"file_path": "spec.md", "content": "v1\nv2\n"}}
EDIT_MISSING = {"Edit": {"file_path": "missing.py", "old_string": "a", "new_string": "b"}}
FIRST_RUN: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 2: architect", "tools": [SPEC_V1]},
    {"when": "tool_result", "text": "Spec v1."},
    {"contains": "Stage 2 of 2: implement", "tools": [EDIT_MISSING]},
    {"when": "tool_error", "text": "Nothing to change."},
    {"contains": "goes back to stage architect", "tools": [SPEC_V2]},
    {"when": "tool_result", "text": "Spec v2."},
    {"contains": "Stage 2 of 2: implement", "error": {"status": 500}},
]
"""A failed tool call, a failed check, a revision, then stage 2 fails for good (--retries 0)."""

RESUME: list[dict[str, Any]] = [
    {"when": "user", "contains": "was interrupted", "error": {"status": 500}},
    {"contains": "was interrupted", "text": "Implemented."},
]
"""The resumed session fails once (retried), then the stage passes on the spec on disk."""


def test_what_a_pipeline_run_and_its_resume_write_validates_against_the_documented_schemas(
    tmp_path: Path,
) -> None:
    """Through the CLI, both processes appending to one log: a failed tool call, a failed
    check, a revision, an error (exit 3), a resume in the saved session with a retry, and an
    acceptance. Every line is valid; every pipeline event name is present."""
    pipeline, first, resume = (
        tmp_path / name for name in ("revise.yaml", "first.yaml", "resume.yaml")
    )
    pipeline.write_text(yaml.safe_dump(REVISE))
    first.write_text(yaml.safe_dump({"replies": FIRST_RUN}))
    resume.write_text(yaml.safe_dump({"replies": RESUME}))
    work = tmp_path / "work"
    work.mkdir()
    log_file = tmp_path / "pipeline.jsonl"
    common: list[str | Path] = [pipeline, "--workdir", work, "--agent", "scripted", "-q",
                                "--log-file", log_file]  # fmt: skip

    stopped = phasegate("pipeline", "run", *common, "--script", first, "--retries", "0")
    resumed = phasegate("pipeline", "resume", *common, "--script", resume, "--retries", "1")

    assert stopped.returncode == 3, stopped.stderr
    assert resumed.returncode == 0, resumed.stderr
    schemas = documented_schemas()
    written = lines(log_file)
    for line in written:
        jsonschema.validate(line, schemas[line["event"]])
    assert {line["event"] for line in written} == {
        *PIPELINE_EVENT_NAMES,
        "tool.called",
        "retry.scheduled",
    }
    assert {(w["run_id"], w["task"], w["mode"], w["isolation"]) for w in written} == {
        (written[0]["run_id"], "revise", "gate", "session")
    }
    assert [w["verdict"] for w in written if w["event"] == "pipeline.completed"] == [
        "error",
        "accepted",
    ]
    (back,) = (w for w in written if w["event"] == "pipeline.resumed")
    assert (back["stage"], back["name"], back["how"], "reason" in back) == (
        2,
        "implement",
        "session",
        False,
    )
    checked = [
        (w["name"], w["passed"], w["failed"]) for w in written if w["event"] == "stage.checked"
    ]
    assert checked == [
        ("architect", True, []),
        ("implement", False, ["min_lines"]),
        ("architect", True, []),
        ("implement", True, []),
    ]
    (revision,) = (w for w in written if w["event"] == "stage.revision")
    assert (revision["to_stage"], revision["to_name"], revision["revision"]) == (1, "architect", 1)
    completed = [(w["name"], w["status"]) for w in written if w["event"] == "stage.completed"]
    assert completed == [
        ("architect", "accepted"),
        ("implement", "pending"),
        ("architect", "accepted"),
        ("implement", "accepted"),
    ]
    tools = [(w["stage"], w["tool"], w["ok"]) for w in written if w["event"] == "tool.called"]
    assert tools == [(1, "Write", True), (2, "Edit", False), (1, "Write", True)]
    assert not any("phase" in w for w in written)


def test_a_tool_call_names_its_phase_in_a_task_run_or_its_stage_in_a_pipeline_never_both() -> None:
    """The tool.called schema requires exactly one of ``phase`` and ``stage``."""
    schema = documented_schemas()["tool.called"]
    task_run = event(ToolCalled(phase=1, tool="Edit", tool_use_id="toolu_1", ok=True))
    line = task_run.as_dict()
    pipeline_line = {**line, "isolation": "session", "stage": 2}
    del pipeline_line["phase"]

    jsonschema.validate(line, schema)
    jsonschema.validate(pipeline_line, schema)
    for wrong in ({**line, "stage": 2}, {k: v for k, v in line.items() if k != "phase"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)


def test_a_blocked_attempt_names_its_phase_or_its_stage_and_keeps_its_lines_short() -> None:
    """The sandbox.blocked schema requires exactly one of ``phase`` and ``stage``, and at most
    300 characters of what was kept in and of the line that says so."""
    schema = documented_schemas()["sandbox.blocked"]
    deny = "deny network-outbound example.com:443"
    entry = SandboxBlocked(
        blocked="host", tool="Bash", tool_use_id="toolu_1", target="example.com:443", detail=deny
    )
    line = event(AttemptBlocked.of(entry, phase=1)).as_dict()
    pipeline_line = {**event(AttemptBlocked.of(entry, stage=2)).as_dict(), "isolation": "session"}
    jsonschema.validate(line, schema)
    jsonschema.validate(pipeline_line, schema)
    assert (line["kind"], line["target"]) == ("host", "example.com:443")
    for wrong in ({**line, "stage": 2}, {k: v for k, v in line.items() if k != "phase"},
                  {**line, "target": "x" * 301}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)


def test_secrets_never_reach_a_log_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Key-named fields, headers, bearer tokens, sk- keys and env secrets are all redacted."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-secret-value-1234")
    log_file = tmp_path / "log.jsonl"
    with EventLog(file=log_file) as log:
        log(event(retry(
            "401: Authorization: Bearer abcdefgh12345678 x-api-key: sk-ant-api03-XYZ9876; "
            "the key plain-secret-value-1234 leaked into a message"
        )))  # fmt: skip
    fields = redact({
        "api_key": "sk-live-000000000",
        "detail": {"headers": {"authorization": "Basic dXNlcjpwYXNzd29yZA=="}},
        "note": "the key plain-secret-value-1234 leaked into a message",
        "input_tokens": 120,
    }, ["plain-secret-value-1234"])  # fmt: skip

    text = log_file.read_text() + json.dumps(fields)
    for secret in ("abcdefgh12345678", "sk-ant-api03", "sk-live", "dXNlcjpwYXNz",
                   "plain-secret-value-1234"):  # fmt: skip
        assert secret not in text
    (line,) = lines(log_file)
    assert line["reason"].endswith(f"the key {REDACTED} leaked into a message")
    assert fields["api_key"] == REDACTED
    assert fields["detail"] == {"headers": {"authorization": REDACTED}}
    assert fields["input_tokens"] == 120  # a count named like a token is not a secret
    assert fields["note"] == f"the key {REDACTED} leaked into a message"


def test_redaction_leaves_ordinary_text_alone() -> None:
    """Words like 'task' or 'skip' and short values are not mistaken for secrets."""
    value = {"reason": "sk-short is fine; Authorization failed", "task": "fix", "tool": "Bash"}

    assert redact(value) == value


def test_several_processes_appending_to_one_file_never_interleave_lines(tmp_path: Path) -> None:
    """Four writers, 300 long lines each: 1200 whole JSON lines come out."""
    log_file = tmp_path / "shared.jsonl"
    writer = (
        "import sys\n"
        "from phasegate.telemetry.log import EventLog\n"
        "from phasegate.telemetry.events import RunEvent, ToolCalled\n"
        "log = EventLog(file=sys.argv[1])\n"
        "for n in range(300):\n"
        "    data = ToolCalled(phase=1, tool='x' * 3000, tool_use_id=str(n), ok=True)\n"
        "    log(RunEvent(data, sys.argv[2], 't', 'gate'))\n"
        "log.close()\n"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", writer, str(log_file), f"writer{i}"])
        for i in range(4)
    ]
    assert all(p.wait(timeout=120) == 0 for p in processes)

    written = lines(log_file)
    assert len(written) == 1200
    for i in range(4):
        ids = [int(w["tool_use_id"]) for w in written if w["run_id"] == f"writer{i}"]
        assert ids == list(range(300))


def test_the_console_format_is_one_readable_line_per_event() -> None:
    """Console lines name the event and its fields and are not JSON."""
    stream = io.StringIO()
    EventLog(stream=stream, log_format="console")(event(PhaseStarted(phase=1, name="edit")))

    (line,) = stream.getvalue().splitlines()
    assert "phase.started" in line and "name=edit" in line and "phase=1" in line
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_extra_processors_run_after_redaction() -> None:
    """A processor sees the redacted event and can add fields."""
    seen: list[dict[str, Any]] = []

    def add_host(logger: Any, method: str, event_dict: Any) -> Any:
        seen.append(dict(event_dict))
        return {**event_dict, "host": "ci-1"}

    stream = io.StringIO()
    EventLog(stream=stream, processors=[add_host])(event(retry("token sk-abcdefghijkl")))

    assert seen[0]["reason"] == f"token {REDACTED}"
    assert json.loads(stream.getvalue())["host"] == "ci-1"


def test_your_own_structlog_logger_receives_redacted_events() -> None:
    """Hand in a logger: events go to its info() with the event name and fields."""
    with structlog.testing.capture_logs() as captured:
        log = EventLog(logger=structlog.get_logger("mine"))
        log(event(RunCompleted(
            verdict="accepted", attempts=1, duration_ms=5, files_changed=[], findings=[],
            reverted=False, input_tokens=0, output_tokens=0, cost_usd=None,
            error="Bearer abcdefghijkl",
        )))  # fmt: skip

    (entry,) = captured
    assert entry["event"] == "run.completed"
    assert entry["verdict"] == "accepted"
    assert entry["error"] == f"Bearer {REDACTED}"


def test_your_own_logger_with_a_file_of_ours_is_a_usage_error(tmp_path: Path) -> None:
    """Your logger writes where you configured it: a file given too would stay empty."""
    with pytest.raises(UsageError, match="without file, stream or processors"):
        EventLog(logger=structlog.get_logger("mine"), file=tmp_path / "never.jsonl")

    assert not (tmp_path / "never.jsonl").exists()


def test_run_with_log_file_appends_json_lines_and_a_bad_path_exits_two(tmp_path: Path) -> None:
    """The CLI writes the log next to its progress; an unusable path is a usage error."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text((EXAMPLE / "project" / "app.py").read_text())
    log_file = tmp_path / "run.jsonl"
    args: list[str | Path] = ["run", EXAMPLE / "task.yaml", "-w", work, "--agent", "scripted",
            "--script", EXAMPLE / "model.yaml", "-q"]  # fmt: skip

    done = phasegate(*args, "--log-file", log_file)
    again = phasegate(*args, "--log-file", log_file, "--mode", "single-query")
    bad = phasegate(*args, "--log-file", tmp_path / "missing" / "dir" / "run.jsonl")

    assert done.returncode == 0, done.stderr
    assert again.returncode == 1
    written = lines(log_file)
    assert [w["event"] for w in written].count("run.completed") == 2
    assert len({w["run_id"] for w in written}) == 2
    assert bad.returncode == 2 and "cannot open log file" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_an_unknown_log_format_is_a_usage_error() -> None:
    """Only json and console exist."""
    with pytest.raises(UsageError, match="unknown log format"):
        EventLog(log_format="xml")  # type: ignore[arg-type]


def test_a_log_names_the_file_it_writes_and_a_fan_out_names_those_of_its_sinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """output_files is absolute (fixed when the log opens); a stream writes no file."""
    monkeypatch.chdir(tmp_path)
    with EventLog(file="runs.jsonl") as to_file, EventLog(stream=io.StringIO()) as to_stream:
        assert to_file.output_files == (tmp_path / "runs.jsonl",)
        assert to_stream.output_files == ()
        both = fan_out([print, to_file, to_stream])
        assert output_files(both) == (tmp_path / "runs.jsonl",)
    assert output_files(print) == ()
    assert output_files(None) == ()


def test_the_service_events_validate_against_their_documented_schemas(tmp_path: Path) -> None:
    """run.queued, run.cancelled, run.interrupted and done, for a task and a pipeline run."""
    log_file = tmp_path / "events.jsonl"
    service: list[EventData] = [
        RunQueued(kind="task", position=0),
        RunCancelled(started=True),
        RunInterrupted(reason="the service restarted", resumable=False),
        RunDone(status="cancelled", verdict=None),
        RunDone(status="finished", verdict="accepted"),
    ]
    with EventLog(file=log_file) as log:
        for data in service:
            log(event(data))
        log(RunEvent(RunQueued(kind="pipeline", position=2), "0123456789ab", "p", "gate",
                     isolation="session"))  # fmt: skip
    schemas = documented_schemas()
    written = lines(log_file)
    for line in written:
        jsonschema.validate(line, schemas[line["event"]])
    assert [line["event"] for line in written] == [*SERVICE_EVENT_NAMES, "done", "run.queued"]
