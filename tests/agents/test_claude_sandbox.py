"""The agent confined by Claude Code's sandbox, through the real CLI against the scripted model
server: Bash writes only in the work directory and never under ``protect``, reaches only the
hosts the task lists, the file tools stay in the work directory, and a sandbox that cannot
run stops the run before the model is asked anything (docs/sandbox.md).

Needs bubblewrap and socat (``make sandbox-tools``): without them these tests skip, or fail
when PHASEGATE_REQUIRE_SANDBOX=1 (as in CI)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from phasegate import Pipeline, RunEvent, UsageError, make_loop
from phasegate.evidence.transcript import ToolRefused
from phasegate.recording.reading import read_recording
from phasegate.running import RunOptions, run_definition
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.cli import phasegate
from tests.helpers.sandboxed import (
    DONE,
    as_recorded,
    confined_task,
    recorded,
    require_sandbox,
    results,
    run_scripted,
)
from tests.helpers.sandboxed import local_server as serving

pytestmark = pytest.mark.cli


@pytest.fixture(autouse=True)
def _sandbox_here() -> None:
    require_sandbox()


@pytest.fixture
def local_server() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 answering ``hello-from-local``; its port."""
    with serving() as server:
        yield server.port


def _bash(*commands: str) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for number, command in enumerate(commands):
        reply: dict[str, Any] = {"tools": [{"Bash": {"command": command}}]}
        if number:
            reply["when"] = "tool_result"
        replies.append(reply)
    return replies


def test_bash_writes_inside_the_work_directory_and_nowhere_else(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """Each write turned away (outside, in a protected folder, on a protected file, in the
    home folder) is one ``blocked`` entry and one ``sandbox.blocked`` line, in its phase."""
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_a.py").write_text("assert True\n")
    (work / "setup.cfg").write_text("[tool]\n")
    replies = _bash(
        f"echo escaped > {outside}; echo rc=$?",
        "echo inside > inside.txt; echo rc=$?",
        "sed -i s/True/False/ tests/test_a.py; echo rc=$?",
        "echo pwned >> ~/.bashrc; echo rc=$?",
        "sed -i s/tool/pwned/ setup.cfg; echo rc=$?",
    )
    replies.append({"when": "tool_result", "text": DONE})
    task = confined_task(protect=["tests/**", "setup.cfg"], sandbox="on")
    events: list[RunEvent] = []
    report = run_scripted(scripted_model_server, task, work, replies, events=events)
    assert not outside.exists()
    assert (work / "inside.txt").read_text() == "inside\n"
    assert (work / "tests" / "test_a.py").read_text() == "assert True\n"
    assert (work / "setup.cfg").read_text() == "[tool]\n"
    escaped, inside, edited, home, replaced = results(report)[:5]
    assert "Read-only file system" in escaped and "rc=1" in escaped
    assert inside == "rc=0"
    assert "rc=0" not in edited  # sed could not replace the read-only file
    assert report.sandbox is not None and report.sandbox.confined
    assert report.verdict == "accepted"  # judged on its work: the attempt is on the record
    # tests/ is read-only whole: sed cannot even create its temporary file there.
    assert "Read-only file system" in home and "rc=1" in home
    # A protected file is a mount of its own: sed makes its temporary file, cannot rename it.
    assert "Device or resource busy" in replaced and "rc=0" not in replaced
    escape, protected, bashrc, protected_file = report.blocked
    assert bashrc.kind == "path" and ".bashrc" in bashrc.detail
    assert escape.kind == protected.kind == "path" and escape.tool == "Bash"
    assert str(outside) in escape.detail and "Read-only file system" in escape.detail
    assert "tests/" in protected.detail and "Read-only file system" in protected.detail
    assert protected_file.kind == "path" and "Device or resource busy" in protected_file.detail
    lines = recorded(report.transcript.entries, events, report.blocked)
    assert [(line["kind"], line["phase"], line["tool"]) for line in lines] == [
        ("path", 1, "Bash")
    ] * 4
    assert [line["target"] for line in lines] == [
        as_recorded(f"echo escaped > {outside}; echo rc=$?"),
        "sed -i s/True/False/ tests/test_a.py; echo rc=$?",
        "echo pwned >> ~/.bashrc; echo rc=$?",
        "sed -i s/tool/pwned/ setup.cfg; echo rc=$?",
    ]


def test_only_the_listed_hosts_answer(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path, local_server: int
) -> None:
    """Through the sandbox's proxy (``--noproxy ''``: curl skips it for loopback names, and
    the sandbox has no loopback of the host's), 127.0.0.1 is listed and answers while
    localhost, the same server under a name not listed, is refused."""
    work = tmp_path / "work"
    work.mkdir()
    replies = _bash(
        f"curl -sS -m 10 --noproxy '' http://127.0.0.1:{local_server}/; echo rc=$?",
        f"curl -sS -m 10 --noproxy '' http://localhost:{local_server}/; echo rc=$?",
    )
    replies.append({"when": "tool_result", "text": DONE})
    sandbox = {"mode": "on", "network": ["127.0.0.1"]}
    events: list[RunEvent] = []
    report = run_scripted(
        scripted_model_server, confined_task(sandbox=sandbox), work, replies, events=events
    )
    allowed, refused = results(report)[:2]
    assert "hello-from-local" in allowed
    assert "hello-from-local" not in refused
    assert "blocked by network allowlist" in refused
    assert "deny network-outbound localhost" in refused
    (blocked,) = report.blocked
    assert blocked.kind == "host" and f"localhost:{local_server}" in blocked.detail
    (line,) = recorded(report.transcript.entries, events, report.blocked)
    assert (line["kind"], line["target"], line["phase"]) == (
        "host", f"localhost:{local_server}", 1,
    )  # fmt: skip


def test_a_write_outside_the_work_directory_is_refused_before_it_runs(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    replies: list[dict[str, Any]] = [
        {"tools": [{"Write": {"file_path": str(outside), "content": "escaped"}}]},
        {"when": "tool_error", "text": DONE},
    ]
    events: list[RunEvent] = []
    report = run_scripted(
        scripted_model_server, confined_task(sandbox="on"), work, replies, events=events
    )
    assert not outside.exists()
    (refusal,) = [e for e in report.transcript.entries if isinstance(e, ToolRefused)]
    assert refusal.name == "Write" and "outside the work directory" in refusal.reason
    assert not report.transcript.results_by_call()[refusal.tool_use_id].ok
    (blocked,) = report.blocked
    assert blocked.kind == "file_tool" and blocked.tool_use_id == refusal.tool_use_id
    (line,) = recorded(report.transcript.entries, events, report.blocked)
    assert (line["kind"], line["tool"], line["target"]) == ("file_tool", "Write", str(outside))
    names = [e.event for e in events]
    # Recorded as the refusal is made, before the CLI hands the model its error.
    assert names.index("sandbox.blocked") == names.index("tool.refused") + 1


def test_without_bubblewrap_the_run_stops_before_any_model_request(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    server = scripted_model_server(Script.model_validate({"replies": [{"text": DONE}]}))
    agent = server.claude_agent(timeout=60)
    with pytest.raises(UsageError, match="bubblewrap") as raised:
        asyncio.run(run_definition(confined_task(sandbox="on"), work, agent))
    assert raised.value.option == "sandbox"
    assert server.requests == []


def test_optional_without_bubblewrap_runs_unconfined_and_says_so(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # The CLI needs a shell on PATH, but no bubblewrap.
    for program in ("bash", "sh"):
        (bin_dir / program).symlink_to(f"/bin/{program}")
    monkeypatch.setenv("PATH", str(bin_dir))
    report = run_scripted(
        scripted_model_server, confined_task(sandbox="optional"), work, [{"text": DONE}]
    )
    assert report.verdict == "accepted"
    assert report.sandbox is not None and not report.sandbox.confined
    assert "bubblewrap" in (report.sandbox.unavailable or "")


def test_the_command_line_exits_2_without_bubblewrap(tmp_path: Path) -> None:
    work, task, script = tmp_path / "work", tmp_path / "task.yaml", tmp_path / "script.yaml"
    work.mkdir()
    task.write_text("name: t\nphases:\n  - name: work\n    instructions: Work.\n")
    script.write_text(f"replies:\n  - text: '{DONE}'\n")
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    done = phasegate("run", task, "-w", work, "--sandbox", "--model-script", script, "-q", env=env)
    assert done.returncode == 2, done.stderr
    assert "bubblewrap" in done.stderr and "--sandbox" in done.stderr


def test_a_pipeline_is_confined_in_every_session(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """Every stage's session is confined; each attempt is recorded in the stage it was made
    in (the recording's transcript holds the entries)."""
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    pipeline = Pipeline.model_validate(
        {
            "name": "confined",
            "sandbox": "on",
            "stages": [
                {"name": "first", "prompt": "Start.", "exit_when": [{"said": "started"}]},
                {"name": "second", "prompt": "Work.", "exit_when": [{"said": "finished"}]},
            ],
        }
    )
    escape = {"Bash": {"command": f"echo escaped > {outside}; echo rc=$?"}}
    replies: list[dict[str, Any]] = [
        {"contains": "Stage 1 of 2", "text": "<promise>started</promise>"},
        {"contains": "Stage 2 of 2", "tools": [escape]},
        {"when": "tool_result", "tools": [{"Bash": {"command": "echo in > in.txt"}}]},
    ]
    replies.append({"when": "tool_result", "text": "<promise>finished</promise>"})
    events: list[RunEvent] = []
    options = RunOptions(retries=0, record=tmp_path / "recording")
    report = run_scripted(scripted_model_server, pipeline, work, replies, options, events)
    assert not outside.exists() and (work / "in.txt").exists()
    assert report.sandbox is not None and report.sandbox.confined
    assert report.verdict == "accepted"
    assert [b.kind for b in report.blocked] == ["path"]
    entries = tuple(read_recording(tmp_path / "recording").entries)
    (line,) = recorded(entries, events, report.blocked)
    assert (line["kind"], line["stage"], line["isolation"]) == ("path", 2, "session")
    assert "phase" not in line
    (completed,) = [e.fields for e in events if e.event == "pipeline.completed"]
    assert completed["blocked"] == 1


def test_a_batch_unit_is_confined(tmp_path: Path) -> None:
    work, outside = tmp_path / "project", tmp_path / "outside.txt"
    work.mkdir()
    (tmp_path / "task.yaml").write_text(
        "name: t\nphases:\n  - name: work\n    instructions: Work.\n"
    )
    replies = _bash(f"echo escaped > {outside}; echo rc=$?", "echo in > in.txt")
    replies.append({"when": "tool_result", "text": DONE})
    (tmp_path / "model.yaml").write_text(json.dumps({"replies": replies}))
    (tmp_path / "batch.yaml").write_text(
        json.dumps(
            {
                "defaults": {"sandbox": "on"},
                "items": [
                    {"task": "task.yaml", "workdir": "project", "model_script": "model.yaml"}
                ],
            }
        )
    )
    out = tmp_path / "out"
    done = phasegate("batch", "run", tmp_path / "batch.yaml", "--out", out, "-q")
    assert done.returncode == 0, done.stderr
    assert not outside.exists()
    (report_file,) = out.glob("units/*/report.json")
    report = json.loads(report_file.read_text())
    assert report["verdict"] == "accepted"
    assert report["sandbox"] == {"mode": "on", "confined": True, "network": [], "unavailable": None}
    transcript = json.loads(report_file.with_name("transcript.json").read_text())
    results = [e["content"] for e in transcript["entries"] if e.get("kind") == "tool_result"]
    assert "Read-only file system" in results[0]
    assert [b["kind"] for b in report["blocked"]] == ["path"]
    recorded = [e for e in transcript["entries"] if e.get("kind") == "blocked"]
    assert [(e["blocked"], e["tool_use_id"]) for e in recorded] == [
        (b["kind"], b["tool_use_id"]) for b in report["blocked"]
    ]


def test_every_view_of_a_command_line_run_counts_the_attempts_its_events_and_entries_record(
    tmp_path: Path,
) -> None:
    """``run --sandbox --log-file --record --json``: a Write refused outside and a command's
    write turned away are two ``sandbox.blocked`` lines and two ``blocked`` transcript entries,
    and so many in the report's ``blocked``, ``run.completed``'s count, ``phasegate report``'s
    column, the page's and the job summary's Sandbox section."""
    work, outside, log = tmp_path / "work", tmp_path / "outside.txt", tmp_path / "events.jsonl"
    recording, work_report = tmp_path / "recording", tmp_path / "report.json"
    work.mkdir()
    task, script = tmp_path / "task.yaml", tmp_path / "script.json"
    task.write_text("name: t\nphases:\n  - name: work\n    instructions: Work.\n")
    replies: list[dict[str, Any]] = [
        {"tools": [{"Write": {"file_path": str(outside), "content": "escaped"}}]},
        {
            "when": "tool_error",
            "tools": [{"Bash": {"command": f"echo escaped > {outside}; echo rc=$?"}}],
        },
        {"when": "tool_result", "text": DONE},
    ]
    script.write_text(json.dumps({"replies": replies}))
    done = phasegate(
        "run", task, "-w", work, "--sandbox", "--model-script", script, "-q", "--json",
        "--log-file", log, "--record", recording,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not outside.exists()
    work_report.write_text(done.stdout)
    blocked = json.loads(done.stdout)["blocked"]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    lines = [e for e in events if e["event"] == "sandbox.blocked"]
    entries = [
        json.loads(line)
        for line in (recording / "transcript.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "blocked"
    ]
    assert (
        [(b["kind"], b["tool_use_id"], b["target"]) for b in blocked]
        == [(e["blocked"], e["tool_use_id"], e["target"]) for e in entries]
        == [(line["kind"], line["tool_use_id"], line["target"]) for line in lines]
    )
    assert [b["kind"] for b in blocked] == ["file_tool", "path"]
    (completed,) = [e for e in events if e["event"] == "run.completed"]
    assert completed["blocked"] == 2
    summary = json.loads(phasegate("report", log, "--format", "json").stdout)
    assert [group["blocked"] for group in summary["groups"]] == [2]
    table = phasegate("report", log, env={**os.environ, "COLUMNS": "200"}).stdout
    assert re.search(r"┃ refused calls ┃ blocked ┃", table)
    assert re.search(r"│ +1 │ +2 │", table)  # the refused Write, and both attempts
    assert "Blocked by the sandbox (2)" in (recording / "index.html").read_text()
    step_summary, outputs = tmp_path / "step-summary.md", tmp_path / "outputs"
    step_summary.touch()
    outputs.touch()
    runner = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path),
              "GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_OUTPUT": str(outputs)}  # fmt: skip
    github = phasegate("github", work_report, "--fail-on", "never", env={**os.environ, **runner})
    assert github.returncode == 0, github.stderr
    assert "**Blocked by the sandbox** (2)" in step_summary.read_text()


def test_without_bubblewrap_a_pipeline_stops_before_any_model_request(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    pipeline = Pipeline.model_validate(
        {
            "name": "confined",
            "sandbox": "on",
            "stages": [{"name": "only", "prompt": "Work.", "exit_when": [{"said": "finished"}]}],
        }
    )
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    server = scripted_model_server(Script.model_validate({"replies": [{"text": "x"}]}))
    with pytest.raises(UsageError, match="bubblewrap"):
        asyncio.run(run_definition(pipeline, work, server.claude_agent(timeout=60)))
    assert server.requests == []


def test_without_bubblewrap_a_batch_unit_ends_in_error_before_any_model_request(
    tmp_path: Path,
) -> None:
    """``batch run --sandbox`` (the flag over a file that says nothing)."""
    work = tmp_path / "project"
    work.mkdir()
    (tmp_path / "task.yaml").write_text(
        "name: t\nphases:\n  - name: work\n    instructions: Work.\n"
    )
    (tmp_path / "model.yaml").write_text(json.dumps({"replies": [{"text": DONE}]}))
    item = {"task": "task.yaml", "workdir": "project", "model_script": "model.yaml"}
    (tmp_path / "batch.yaml").write_text(json.dumps({"items": [item]}))
    out = tmp_path / "out"
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    done = phasegate(
        "batch", "run", tmp_path / "batch.yaml", "--out", out, "-q", "--sandbox", "--json",
        env=env,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    (result,) = out.glob("units/*/unit.json")
    outcome = json.loads(result.read_text())["outcome"]
    # Each unit checks where it runs (a Ray worker may be another machine): an error unit.
    assert outcome["verdict"] == "error" and "apt-get install bubblewrap" in outcome["error"]
    assert outcome["model_requests"] == 0


def test_a_loop_takes_the_callers_switch(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """A loop has no file: ``--sandbox`` (here ``RunOptions(sandbox="on")``) confines it."""
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    loop = make_loop(prompt="Work.", promise="finished", max_iterations=2)
    replies = _bash(f"echo escaped > {outside}; echo rc=$?")
    replies.append({"when": "tool_result", "text": "<promise>finished</promise>"})
    report = run_scripted(
        scripted_model_server, loop, work, replies, RunOptions(retries=0, sandbox="on")
    )
    assert not outside.exists()
    assert report.sandbox is not None and report.sandbox.confined
    assert [b.kind for b in report.blocked] == ["path"]
