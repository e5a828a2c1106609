"""Recording the transcripts from the wild with the real Claude Code CLI, and judging them.

Each test runs the CLI bundled with claude-agent-sdk offline against the scripted model
server, in a git checkout of the requirement project, and keeps what the run leaves behind in
every shape a transcript reaches phasegate in: stream-json lines, claude-code-action's
execution file (the same messages as one pretty-printed JSON array), a capture with partial
messages and hook events, Claude Code's own session log, and a run as it looks on Windows
(the stream-json lines with the paths a Windows runner records). The fresh recording is judged
in the checkout it changed; the saved fixtures are compared with it by shape. Set
``PHASEGATE_UPDATE_TRANSCRIPTS=1`` to rewrite the fixtures in tests/fixtures/transcripts/wild.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate import judge_transcript, load_task, read_transcript
from phasegate.evidence.message_kinds import message_kind
from phasegate.tasks.report import RunReport
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from phasegate.agents.scripted.script import Script
from tests.helpers.wild import (
    AFTER,
    MARKER,
    REQUIREMENT,
    SUMMARY,
    WILD,
    WILD_TASK,
    requirement_checkout,
)

pytestmark = pytest.mark.cli

WINDOWS_ROOT = "C:\\Users\\runner\\work\\project"
"""Where the Windows run worked, as its ``cwd`` says."""
WINDOWS_OUTSIDE = "D:\\other\\notes.md"
"""The file outside the work directory the Windows run tried to read."""
TRIMMED = "[trimmed]"
"""Stands for a long string in a session log's bookkeeping lines (system prompts and such)."""


def json_lines(values: list[Any]) -> str:
    """``values`` as JSON lines, compact as Claude Code writes them."""
    return "".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n" for v in values)


def requirement_script(outside: Path) -> Script:
    """Read the requirement, try a file outside, edit the requirement, claim and report."""
    return Script.model_validate(
        {
            "replies": [
                {"text": "Reading first.", "tools": [{"Read": {"file_path": REQUIREMENT}}]},
                {"tools": [{"Read": {"file_path": str(outside)}}]},
                {
                    "tools": [
                        {
                            "Edit": {
                                "file_path": REQUIREMENT,
                                "old_string": "old text",
                                "new_string": "new text",
                            }
                        }
                    ]
                },
                {"text": f"{MARKER}\n\n```json\n{SUMMARY}\n```"},
            ]
        }
    )


def record(
    cli: Path, servers: ScriptedServerFactory, root: Path, *args: str
) -> tuple[Path, str, Path]:
    """Run the CLI in a fresh checkout under ``root``: the checkout, its stdout, its HOME."""
    work, home, outside = root / "project", root / "home", root / "outside" / "notes.md"
    requirement_checkout(work)
    outside.parent.mkdir()
    outside.write_text("notes\n")
    server = servers(requirement_script(outside))
    env = {"PATH": os.environ.get("PATH", ""), **server.env(home=home, timeout_ms=30_000)}
    command = [str(cli), "-p", "Update reqs/a.md", "--output-format", "stream-json", "--verbose"]
    command += ["--permission-mode", "acceptEdits", "--setting-sources", "", *args]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (work / REQUIREMENT).read_text() == AFTER
    return work, done.stdout, home


def sanitized(text: str, root: Path) -> str:
    """The recording with this machine's paths replaced by the ones the fixtures use."""
    home, work = root / "home", root / "project"
    text = text.replace(str(home), "/home/user").replace(sys.executable, "python3")
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(work)), "-work-project")
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(root)), "-work")
    return text.replace(str(root), "/work")


def messages(text: str) -> list[dict[str, Any]]:
    """The JSON objects of JSON lines."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shape(values: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """The conversation messages as (type, subtype, content block types), in order."""
    out = []
    for value in values:
        if message_kind(value) != "conversation":
            continue
        content = value.get("message", {}).get("content", [])
        blocks = [b["type"] for b in content] if isinstance(content, list) else ["str"]
        out.append((value["type"], value.get("subtype", ""), blocks))
    return out


def keep(name: str, text: str) -> Path:
    """Save ``text`` as fixture ``name`` (with the update variable) and return its path."""
    file = WILD / name
    if os.environ.get("PHASEGATE_UPDATE_TRANSCRIPTS"):
        file.write_text(text)
    assert file.exists(), f"{file} is missing: run with PHASEGATE_UPDATE_TRANSCRIPTS=1"
    return file


def judged(work: Path, transcript_file: Path) -> RunReport:
    """The report of judging ``transcript_file`` in ``work`` through the library."""
    transcript, stats = read_transcript(transcript_file)
    assert stats.skipped == 0
    return judge_transcript(load_task(WILD_TASK), transcript, work)


def windows_run(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run as a Windows runner records it: a drive-letter ``cwd``, tool paths with either
    separator and the drive letter in either case, and the outside file on another drive."""
    converted = [_windows_paths(value) for value in values]
    for value in converted:
        body = value.get("message")
        for block in body.get("content", []) if isinstance(body, dict) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                path = block["input"].get("file_path", "")
                if block["name"] == "Edit":  # forward slashes, as Windows runs often show them
                    forward = path.replace("\\", "/")
                    block["input"]["file_path"] = forward[:1].lower() + forward[1:]
                elif path.startswith(WINDOWS_ROOT):  # lower case: the same directory to Windows
                    block["input"]["file_path"] = path.lower()
    return converted


def _windows_paths(value: Any) -> Any:
    """``value`` with the recorded paths in Windows form (backslashes, drive letters)."""
    if isinstance(value, str):
        value = value.replace("/work/outside/notes.md", WINDOWS_OUTSIDE)
        return re.sub(
            r"/work/project((?:/[\w.-]+)*)",
            lambda m: WINDOWS_ROOT + m.group(1).replace("/", "\\"),
            value,
        )
    if isinstance(value, list):
        return [_windows_paths(item) for item in value]
    if isinstance(value, dict):
        return {key: _windows_paths(item) for key, item in value.items()}
    return value


def test_a_stream_json_run_is_kept_as_lines_as_an_execution_file_and_as_on_windows(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """The plain stream-json recording, its execution-file array and its Windows form."""
    work, stdout, _ = record(claude_cli_path, scripted_model_server, tmp_path)
    fresh = tmp_path / "run.jsonl"
    fresh.write_text(stdout)
    report = judged(work, fresh)
    assert report.verdict == "accepted", report.issues
    assert [f.code.value for f in report.findings] == ["read_outside_workdir"]

    values = messages(sanitized(stdout, tmp_path))
    lines = keep("stream_json.jsonl", sanitized(stdout, tmp_path))
    array = keep("execution_file.json", json.dumps(values, indent=2, ensure_ascii=False) + "\n")
    windows = keep("windows_run.jsonl", json_lines(windows_run(values)))
    assert shape(messages(lines.read_text())) == shape(values)
    assert shape(json.loads(array.read_text())) == shape(values)
    assert shape(messages(windows.read_text())) == shape(values)
    assert str(tmp_path) not in lines.read_text()


def test_a_capture_with_partial_messages_and_hooks_and_its_session_log(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """--include-partial-messages and hook events on stdout; the session log in HOME."""
    hook = f'"{sys.executable}" -c "import sys; sys.stdin.read()"'
    hooks = [{"type": "command", "command": hook}]
    settings = {"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": hooks}],
                          "Stop": [{"hooks": hooks}]}}  # fmt: skip
    work, stdout, home = record(
        claude_cli_path, scripted_model_server, tmp_path,
        "--include-partial-messages", "--include-hook-events", "--settings", json.dumps(settings),
    )  # fmt: skip
    (log,) = (home / ".claude" / "projects").glob("*/*.jsonl")
    capture = tmp_path / "capture.jsonl"
    capture.write_text(stdout)
    for transcript_file in (capture, log):
        report = judged(work, transcript_file)
        assert report.verdict == "accepted", (transcript_file.name, report.issues)
        assert [f.code.value for f in report.findings] == ["read_outside_workdir"]

    types = {value["type"] for value in messages(stdout)}
    subtypes = {value.get("subtype") for value in messages(stdout)}
    assert {"stream_event", "system"} <= types
    assert {"hook_started", "hook_response"} <= subtypes
    kept_capture = keep("partial_messages.jsonl", sanitized(stdout, tmp_path))
    log_values = [_trimmed(v) for v in messages(sanitized(log.read_text(), tmp_path))]
    kept_log = keep("session_log.jsonl", json_lines(log_values))
    assert shape(messages(kept_capture.read_text())) == shape(messages(stdout))
    assert shape(messages(kept_log.read_text())) == shape(log_values)


def _trimmed(value: Any, *, conversation: bool | None = None) -> Any:
    """A session-log line with the long strings of its bookkeeping (the CLI's system prompt,
    its request shapes) cut, so the fixture stays small; conversation lines stay whole."""
    if conversation is None:
        conversation = message_kind(value) == "conversation"
    if conversation:
        return value
    if isinstance(value, str):
        return value if len(value) <= 60 else TRIMMED
    if isinstance(value, list):
        return [_trimmed(item, conversation=False) for item in value]
    if isinstance(value, dict):
        return {key: _trimmed(item, conversation=False) for key, item in value.items()}
    return value
