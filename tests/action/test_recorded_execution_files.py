"""Recording the execution files judge mode is tested on, with the real Claude Code CLI.

claude-code-action keeps a run as one pretty-printed JSON array of the CLI's stream-json
messages. Each test here runs the CLI bundled with claude-agent-sdk offline against the
scripted model server (tests/fixtures/action/good.yaml or lazy.yaml), with the task's phased
prompt, in a git checkout of the example project, and compares the array with the kept
fixture by shape. Set ``PHASEGATE_UPDATE_TRANSCRIPTS=1`` to rewrite the fixtures.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from phasegate import judge_transcript, load_task, read_transcript
from phasegate.evidence.message_kinds import message_kind
from phasegate.prompts.templates import PromptTemplates
from phasegate.tasks.request import first_prompt
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.action import EXAMPLE, FIXTURES, RECORDED_CWD, project_checkout

pytestmark = pytest.mark.cli


def record(cli: Path, servers: ScriptedServerFactory, root: Path, script: str) -> list[Any]:
    """Run the CLI in a fresh checkout under ``root``; its messages, as an execution file
    holds them, with this machine's paths replaced by a GitHub runner's."""
    work, home = root / "project", root / "home"
    project_checkout(work)
    server = servers(FIXTURES / script)
    env = {"PATH": os.environ.get("PATH", ""), **server.env(home=home, timeout_ms=30_000)}
    prompt = first_prompt(load_task(EXAMPLE / "task.yaml"), "gate", PromptTemplates(None))
    command = [str(cli), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    command += ["--permission-mode", "acceptEdits", "--setting-sources", ""]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout.replace(str(home), "/home/runner").replace(str(work), RECORDED_CWD)
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(work)), re.sub(r"/", "-", RECORDED_CWD))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shape(values: list[Any]) -> list[tuple[str, list[str]]]:
    """The conversation messages as (type, content block types), in order."""
    out = []
    for value in values:
        if message_kind(value) == "conversation":
            content = value.get("message", {}).get("content", [])
            blocks = [b["type"] for b in content] if isinstance(content, list) else ["str"]
            out.append((value["type"], blocks))
    return out


def keep(name: str, values: list[Any]) -> Path:
    """Save ``values`` as the pretty-printed fixture ``name`` (with the update variable)."""
    file = FIXTURES / name
    if os.environ.get("PHASEGATE_UPDATE_TRANSCRIPTS"):
        file.write_text(json.dumps(values, indent=2, ensure_ascii=False) + "\n")
    assert file.exists(), f"{file} is missing: run with PHASEGATE_UPDATE_TRANSCRIPTS=1"
    return file


@pytest.mark.parametrize(
    ("script", "fixture", "verdict"),
    [
        ("good.yaml", "good_execution_file.json", "accepted"),
        ("lazy.yaml", "lazy_execution_file.json", "rejected"),
    ],
)
def test_a_recorded_run_is_kept_as_an_execution_file_and_judged_by_what_it_did(
    claude_cli_path: Path,
    scripted_model_server: ScriptedServerFactory,
    tmp_path: Path,
    script: str,
    fixture: str,
    verdict: str,
) -> None:
    """The fresh recording, judged in the checkout it changed, gets the verdict its script
    earns; the kept fixture has the same conversation shape and records the runner's cwd."""
    values = record(claude_cli_path, scripted_model_server, tmp_path, script)
    kept = keep(fixture, values)
    saved = json.loads(kept.read_text())
    assert isinstance(saved, list)
    assert shape(saved) == shape(values)
    assert saved[0]["cwd"] == RECORDED_CWD

    transcript, stats = read_transcript(kept)
    assert stats.skipped == 0
    report = judge_transcript(
        load_task(EXAMPLE / "task.yaml"), transcript, tmp_path / "project", before="HEAD"
    )
    assert report.verdict == verdict
