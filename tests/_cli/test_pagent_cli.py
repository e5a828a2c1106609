"""Spoofing a pagent promise: what pagent's hook would accept and phasegate's ``said`` refuses.

pagent passes ``promise_in_output`` when ``<promise>TEXT</promise>`` appears anywhere in the
session's transcript file. The scripted model here puts the promise everywhere but in its own
prose of the stage: in its text *before* the stage started, in a file it writes (a tool
input) and reads back (a tool result), in a code block, a code span and an HTML comment. The
real Claude Code CLI runs it; the transcript it keeps holds the promise (pagent's grep would
pass), and phasegate rejects the stage. The converted YAML gives the same verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script

PROMISE = "<promise>DONE</promise>"
PAGENT: dict[str, Any] = {
    "stage": "notes",
    "max_stages": 0,
    "iterations": {},
    "stages": [
        {"name": "notes", "prompt": "Write notes.md.", "exit_when": {"file_exists": "notes.md"}},
        {
            "name": "verify",
            "prompt": "Verify the notes. When they hold, say <promise>DONE</promise>.",
            "exit_when": {"promise_in_output": "DONE"},
        },
    ],
}
SPOOFING: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 2: notes", "text": f"Starting. {PROMISE}",
     "tools": [{"Write": {"file_path": "notes.md", "content": f"# Notes\n\n{PROMISE}\n"}}]},
    {"when": "tool_result", "text": "Notes written."},
    {"when": "user", "contains": "Stage 2 of 2: verify",
     "tools": [{"Read": {"file_path": "notes.md"}}]},
    {"when": "tool_result", "text": f"The notes say:\n\n```\n{PROMISE}\n```"},
    {"when": "user", "contains": "exit_condition_failed", "text": f"As they put it: `{PROMISE}`."},
    {"when": "user", "contains": "exit_condition_failed", "text": f"<!-- {PROMISE} --> Checking."},
]  # fmt: skip


def run_cli(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``phasegate ...`` in a subprocess, with ``env`` over this one's."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


@pytest.fixture
def pagent_file(tmp_path: Path) -> Path:
    """The two-stage pagent file, in a work directory's .claude/."""
    path = tmp_path / "work" / ".claude" / "pagent-pipeline.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(PAGENT))
    return path


@pytest.mark.cli
@pytest.mark.parametrize("form", ["pagent", "converted"])
def test_a_promise_written_to_a_file_quoted_or_said_too_early_never_passes_said(
    pagent_file: Path, tmp_path: Path, form: str
) -> None:
    """pagent's rule (the promise anywhere in the transcript file) holds; phasegate rejects
    the stage after its checks, exit 1, saying the promise was only inside code."""
    work = pagent_file.parent.parent
    definition = pagent_file
    if form == "converted":
        converted = run_cli("pipeline", "convert", pagent_file, env={})
        assert converted.returncode == 0, converted.stderr
        definition = tmp_path / "converted.yaml"
        definition.write_text(converted.stdout)
        assert yaml.safe_load(converted.stdout)["stages"][1]["exit_when"] == [{"said": "DONE"}]
    home = tmp_path / "home"
    with ScriptedModelServer(Script.model_validate({"replies": SPOOFING})) as server:
        done = run_cli(
            "pipeline", "run", definition, "--workdir", work, "--json", "-q",
            env=server.env(home=home),
        )  # fmt: skip

    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(s["name"], s["status"], s["attempts"]) for s in report["stages"]] == [
        ("notes", "accepted", 1),
        ("verify", "rejected", 3),
    ]
    (said,) = report["stages"][1]["checks"]
    assert (said["kind"], said["ok"]) == ("said", False)
    assert said["detail"] == f"{PROMISE} appears in your replies only inside code"
    # pagent's rule, a grep of the transcript file, passes: the promise is in the Write
    # call's input and in the Read call's result (and in the prompt itself).
    lines = [
        line
        for path in (home / ".claude" / "projects").rglob("*.jsonl")
        for line in path.read_text().splitlines()
        if PROMISE in line
    ]
    assert any('"tool_use"' in line and '"Write"' in line for line in lines)
    assert any('"tool_result"' in line for line in lines)
