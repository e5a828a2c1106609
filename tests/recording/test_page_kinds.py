"""The page of every kind of recording, each made for real: a Ralph loop through the command
line, a judged saved transcript, the units of a batch with ``record: true`` (linked from
``batch report``), and a task completed through the completion tools. Task and pipeline runs
with markers are in test_page_in_browser.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate import Runner, Task
from phasegate.recording.page import render_page
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.batches import batch_writer
from tests.helpers.cli import phasegate
from tests.helpers.recordings import COMPLETION_TOOLS, read_recording
from tests.helpers.scenarios import EXAMPLE, NO_RETRIES

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def text_of(page: str) -> str:
    """The page's text, tags dropped and entities read (near enough for words)."""
    from html import unescape

    return unescape(re.sub(r"<[^>]+>", "", page))


@pytest.mark.cli
def test_a_loop_shows_its_iterations_the_feedback_between_them_and_the_diff(
    work: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    replies = [
        {"tools": [{"Write": {"file_path": "notes.md", "content": "draft\n"}}]},
        {"when": "tool_result", "text": "Not done yet."},
        {"when": "user", "text": "All done.\n\n<promise>DONE</promise>"},
    ]
    server = scripted_model_server(Script.model_validate({"replies": replies}))
    folder = tmp_path / "loop"
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "loop", "Write notes.", "--promise", "DONE",
         "--workdir", work, "-q", "--record", folder],
        capture_output=True, text=True, env={**os.environ, **server.env()}, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    feedback = read_recording(folder).checks[0]["feedback"]

    text = text_of(render_page(folder))

    assert "Loop · 2 iterations" in text and "<th>loop</th>" in render_page(folder)
    assert feedback.strip().splitlines()[0] in text
    assert "All done.\n\n<promise>DONE</promise>" in text
    assert "+draft" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")
def test_a_judged_transcript_shows_its_check_and_why_there_is_no_diff(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "app.py").write_text("def parse(x):\n    return eval(x)\n")
    for args in (["init", "-q"], ["add", "app.py"], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=checkout, check=True, capture_output=True)  # fmt: skip
    (checkout / "app.py").write_text("def parse(x):\n    return int(x)\n")
    folder = tmp_path / "judged"
    done = phasegate("judge", EXAMPLE / "task.yaml", "--transcript",
                     TRANSCRIPTS / "edit_then_json.jsonl", "--workdir", checkout, "--json",
                     "--record", folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = {p["diff_note"] for p in read_recording(folder).parts}

    text = text_of(render_page(folder))

    assert "kind: judged" in text and "Phase 1 · edit" in text
    assert "Check 1 · trigger end · accepted" in text.replace(", attempt 1", "")
    assert all(note in text for note in notes)
    assert "No change to the work directory." not in text


@pytest.mark.cli
def test_a_batch_with_record_true_links_each_units_page_from_its_report(tmp_path: Path) -> None:
    write = batch_writer(tmp_path)
    item = {"task": "example/task.yaml", "workdir": "example/project",
            "model_script": "example/model.yaml", "modes": ["gate"], "record": True}  # fmt: skip
    out = tmp_path / "out"
    assert phasegate("batch", "run", write([item]), "--out", out, "--quiet").returncode == 0

    done = phasegate("batch", "report", out, "-f", "html", "-o", tmp_path / "report.html")

    assert done.returncode == 0, done.stderr
    (unit,) = (result.parent for result in (out / "units").glob("*/unit.json"))
    page = unit / "recording" / "index.html"
    assert page.read_text() == render_page(unit / "recording")
    href = f"out/units/{unit.name}/recording/index.html"
    assert f'<a href="{href}">{unit.name}</a>' in (tmp_path / "report.html").read_text()


@pytest.mark.cli
def test_completion_tool_calls_are_set_apart_with_the_answer_the_model_got(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """phase_complete refused before the edit, accepted after it, then submit_summary: each
    call is marked as a completion tool, and each check shows the tool's answer."""
    server = scripted_model_server(Script.model_validate({"replies": COMPLETION_TOOLS}))
    folder = tmp_path / "recording"
    report = Runner(server.claude_agent(timeout=90, request_timeout=20),
                    retry=NO_RETRIES).run_sync(task, project, record=folder)  # fmt: skip
    assert report.verdict == "accepted"
    answers = [c["feedback"] for c in read_recording(folder).checks if c["trigger"] == "tool"]

    page = render_page(folder)

    assert len(re.findall(r'<details class="entry completion"', page)) == 3
    assert page.count("the tool's answer") == 3
    text = text_of(page)
    assert all(answer.strip().splitlines()[0] in text for answer in answers)
