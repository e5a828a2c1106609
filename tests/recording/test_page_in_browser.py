"""The page of a recorded run in a real browser: Debian's headless chromium over the DevTools
pipe (``make chromium``). A gate run with feedback and a pipeline run with a stage revisit,
recorded through the real Claude Code CLI against the scripted model server: the visible text
holds the phase and stage names, the feedback the model got and the diff lines, and a
screenshot is a non-blank PNG. A pipeline run with branches (the in-process scripted agent)
shows each branch's stage with its conversation and diff, and what its join merged. A run
whose phase has a check (the tests, failing once) shows each check's output, and markup in a
check's output stays text. Markup in a transcript stays text, and a thousand tool calls stay
folded (hand-made recordings).
Skipped without chromium unless PHASEGATE_REQUIRE_CHROMIUM=1."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from phasegate import Pipeline, PipelineRunner, Runner, Task
from phasegate.recording.page import render_page, write_page
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.branches import branch_stage, branch_work
from tests.helpers.checked_runs import prove_the_fix
from tests.helpers.devtools import Loaded, load_page
from tests.helpers.png import PNG_SIGNATURE, png_rows
from tests.helpers.recording_fixtures import Builder, gate_run, many_calls, pipeline_run
from tests.helpers.recordings import CLAIM_FIRST, REVISION, read_recording
from tests.helpers.scenarios import BUGGY_LINE, EDIT, FIXED_LINE, GOOD_JSON, MARKER, NO_RETRIES

CHROMIUM = shutil.which("chromium")
REQUIRED = os.environ.get("PHASEGATE_REQUIRE_CHROMIUM") == "1"
pytestmark = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED, reason="no chromium on PATH (`make chromium`)"
)


def shown(folder: Path, tmp_path: Path, *, screenshot: bool = False) -> Loaded:
    """The recording's page, written and loaded in chromium."""
    if CHROMIUM is None:
        pytest.fail("PHASEGATE_REQUIRE_CHROMIUM=1 but chromium is not on PATH: `make chromium`")
    page = write_page(folder)
    profile = Path(tempfile.mkdtemp(prefix="profile-", dir=tmp_path))
    return load_page(CHROMIUM, profile, page.as_uri(), screenshot=screenshot)


def assert_a_real_screenshot(png: bytes | None) -> None:
    """A PNG of the window's size with many distinct rows: something was painted."""
    assert png is not None and png.startswith(PNG_SIGNATURE)
    _, rows = png_rows(png)
    assert len(rows) == 1600 and len(set(rows)) > 100
    assert 10_000 < len(png) < 2_000_000


REVISION_MODEL = [
    {"contains": "Stage 1 of 2: architect", "tools": [{"Write": {"file_path": "spec.md",
                                                                 "content": "v1\n"}}]},
    {"when": "tool_result", "text": "Spec v1."},
    {"contains": "Stage 2 of 2: implement", "text": "Nothing to change."},
    {"contains": "goes back to stage architect", "tools": [{"Write": {"file_path": "spec.md",
                                                                      "content": "v2\n"}}]},
    {"when": "tool_result", "text": "Spec v2."},
    {"contains": "Stage 2 of 2: implement", "text": "Implemented."},
]  # fmt: skip


def changed_lines(folder: Path) -> list[str]:
    """Every added or removed line of the recording's diffs (not the file headers)."""
    lines = []
    for diff in sorted((folder / "diffs").glob("*.diff")):
        lines += [line for line in diff.read_text().splitlines()
                  if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]  # fmt: skip
    return lines


@pytest.mark.cli
def test_a_real_gate_run_shows_its_phases_the_feedback_and_the_diff_lines(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Recorded through the real Claude Code CLI against the scripted model server: the
    refused claim's feedback, byte for byte what the model got, is on the page as text."""
    server = scripted_model_server(Script.model_validate({"replies": CLAIM_FIRST}))
    folder = tmp_path / "recording"
    report = Runner(server.claude_agent(timeout=90, request_timeout=20),
                    retry=NO_RETRIES).run_sync(task, project, record=folder)  # fmt: skip
    assert report.verdict == "accepted"
    feedback = next(c["feedback"] for c in read_recording(folder).checks if not c["accepted"])
    assert (folder / "index.html").read_text() == render_page(folder)  # written by the run

    loaded = shown(folder, tmp_path, screenshot=True)

    for words in ("fix-vulnerability", "Phase 1 · edit", "Phase 2 · summary", MARKER,
                  *feedback.strip().splitlines(), *changed_lines(folder)):  # fmt: skip
        assert words in loaded.text, words
    assert changed_lines(folder) == [f"-{BUGGY_LINE.rstrip()}", f"+{FIXED_LINE.rstrip()}"]
    assert_a_real_screenshot(loaded.png)


@pytest.mark.cli
def test_a_real_pipeline_run_sent_back_shows_every_stage_visit(
    work: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    server = scripted_model_server(Script.model_validate({"replies": REVISION_MODEL}))
    folder = tmp_path / "recording"
    report = PipelineRunner(server.claude_agent(timeout=90, request_timeout=20),
                            retry=NO_RETRIES).run_sync(Pipeline.model_validate(REVISION), work,
                                                       record=folder)  # fmt: skip
    assert report.verdict == "accepted"
    sent_back = read_recording(folder).checks[1]
    assert sent_back["accepted"] is False and sent_back["feedback"]

    loaded = shown(folder, tmp_path, screenshot=True)

    told = sent_back["feedback"].strip().splitlines()[:3]
    for words in ("Stage architect · visit 1", "Stage implement · visit 1",
                  "Stage architect · visit 2", "Stage implement · visit 2",
                  *told, "+v1", "-v1", "+v2"):  # fmt: skip
        assert words in loaded.text, words
    assert loaded.text.index("Stage implement · visit 1") < loaded.text.index(
        "Stage architect · visit 2"
    )
    assert_a_real_screenshot(loaded.png)


def test_a_recorded_run_with_branches_shows_each_branch_s_conversation_diff_and_merge(
    work: Path, tmp_path: Path
) -> None:
    """plan, then a and b forked from it, then a join: every stage's prompt, diff line and
    check on the page, the join's merge as text; a branch's markup stays text."""
    pipeline = {"name": "branches", "stages": [
        branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("b", ["plan"]),
        branch_stage("join", ["a", "b"]),
    ]}  # fmt: skip
    replies = [*branch_work(None, "plan"), *branch_work("a", "a"),
               *branch_work("b", "b", f"{MARKUP}\n"), *branch_work("a", "join")]  # fmt: skip
    folder = tmp_path / "recording"
    report = PipelineRunner(ScriptedAgent(Script.model_validate({"replies": replies}))).run_sync(
        Pipeline.model_validate(pipeline), work, record=folder
    )
    assert report.verdict == "accepted", report.error

    loaded = shown(folder, tmp_path, screenshot=True)

    for words in ("Stages as a graph", "Stage a · visit 1", "Write a.txt.", "+a done",
                  "Stage b · visit 1", f"+{MARKUP}", "Stage join · visit 1", "Merged into it",
                  "branch b: files: b.txt", "+join done"):  # fmt: skip
        assert words in loaded.text, words
    for element in ("<script", "<img"):
        assert element not in loaded.dom
    assert_a_real_screenshot(loaded.png)


def test_a_hand_made_pipeline_recording_shows_every_stage_visit(tmp_path: Path) -> None:
    loaded = shown(pipeline_run(tmp_path / "run"), tmp_path)

    for words in ("Stage implement · visit 1", "Stage review · visit 1",
                  "Stage implement · visit 2", "Stage review · visit 2",
                  "back_to implement: add a test first.", "+def test_health(): ..."):  # fmt: skip
        assert words in loaded.text, words


def test_a_transcript_full_of_markup_renders_as_text(tmp_path: Path) -> None:
    hostile = "<script>document.title='owned'</script><img src=x onerror=\"document.title='img'\">"
    run = Builder(name=f"task {hostile}")
    run.add("assistant", text=f"</pre></textarea>--> {hostile}")
    run.call("Bash", {"command": hostile}, f"</pre>{hostile}")
    run.part(0, f"edit {hostile}", index=1, files=[f"{hostile}.py"],
             diff=f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n+{hostile}\n")  # fmt: skip
    loaded = shown(run.write(tmp_path / "run"), tmp_path)

    assert loaded.text.count(hostile) >= 5
    assert f"</pre></textarea>--> {hostile}" in loaded.text
    for element in ("<script", "<img", "<textarea"):  # the serialized DOM escapes text's "<"
        assert element not in loaded.dom


MARKUP = "<script>document.title='owned'</script><img src=x onerror=\"document.title='img'\">"
HOSTILE_MODEL = [
    {"text": f"Look: {MARKUP} </pre></textarea> -->",
     "tools": [{"Write": {"file_path": "<img src=x onerror=alert(1)>.txt",
                          "content": f"</pre>{MARKUP}\n"}}]},
    {"when": "tool_result", "tools": [{"Bash": {"command": f"echo '{MARKUP}'"}}]},
    {"when": "tool_result", "tools": [EDIT]},
    {"when": "tool_result", "text": f"{MARKER}\n{GOOD_JSON}"},
]  # fmt: skip


@pytest.mark.cli
def test_a_real_run_full_of_markup_renders_it_as_text(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The model's text, a file's name and content (so the diff), a command and its output:
    each shows as the text it is; the page has no element but its own, and its title stays."""
    server = scripted_model_server(Script.model_validate({"replies": HOSTILE_MODEL}))
    folder = tmp_path / "recording"
    Runner(server.claude_agent(timeout=90, request_timeout=20),
           retry=NO_RETRIES).run_sync(task, project, record=folder)  # fmt: skip

    loaded = shown(folder, tmp_path)

    assert f"Look: {MARKUP} </pre></textarea> -->" in loaded.text
    assert f"+</pre>{MARKUP}" in loaded.text  # the diff line
    assert "<img src=x onerror=alert(1)>.txt" in loaded.text  # the file name
    for element in ("<script", "<img", "<textarea"):
        assert element not in loaded.dom
    assert loaded.dom.count("<pre") == loaded.dom.count("</pre>")


def test_a_thousand_tool_calls_stay_folded(tmp_path: Path) -> None:
    loaded = shown(many_calls(tmp_path / "run", 1000, result_chars=2000), tmp_path)

    assert loaded.text.count("tool call Read") == 1000
    assert "line 5 of the file" not in loaded.text  # every result folded away
    assert loaded.timing["load"] > 0


def test_a_run_with_a_phase_check_shows_the_output_of_each_of_its_runs(tmp_path: Path) -> None:
    """prove-the-fix, in-process: the failed run's traceback (in its gate check) and the
    passing run's output (in the phase's checks), line by line, with the verdict and the
    exit code."""
    run = prove_the_fix(tmp_path)
    (decided,) = run.report.phases[0].checks

    loaded = shown(run.recording, tmp_path)

    for words in ("Checks", decided.description, "passed", "exit code 0", "Ran 2 tests",
                  "AssertionError: 6 != 5", "FAIL: test_add (test_calc.CalcTest.test_add)",
                  "of it in checks"):  # fmt: skip
        assert words in loaded.text, words
    assert loaded.text.index("AssertionError: 6 != 5") < loaded.text.index("what was found")


def test_a_check_whose_output_is_markup_renders_it_as_text(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")
    report = json.loads((folder / "report.json").read_text())
    check = {"kind": "command", "description": f"`{MARKUP}` exits with 0", "passed": False,
             "detail": f"exited with 1\nlast output:\n</pre>{MARKUP}", "exit_code": 1,
             "duration_ms": 40, "run": 1}  # fmt: skip
    phases = [{"index": 1, "name": "edit", "checks": [check]}]
    (folder / "report.json").write_text(json.dumps({**report, "phases": phases,
                                                    "checks": [check]}))  # fmt: skip

    loaded = shown(folder, tmp_path)

    assert loaded.text.count(f"</pre>{MARKUP}") == 2  # the phase's and the task's own
    for element in ("<script", "<img"):
        assert element not in loaded.dom
    assert loaded.dom.count("<pre") == loaded.dom.count("</pre>")
