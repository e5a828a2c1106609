"""The page of a recorded run in a real browser: Debian's headless chromium over the DevTools
pipe (``make chromium``). The visible text holds the phase names, the feedback and the diff
lines; a screenshot is a non-blank PNG; markup in a transcript stays text; a thousand tool
calls stay folded. Skipped without chromium unless PHASEGATE_REQUIRE_CHROMIUM=1."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from phasegate.recording.page import write_page
from tests.helpers.devtools import Loaded, load_page
from tests.helpers.png import PNG_SIGNATURE, png_rows
from tests.helpers.recording_fixtures import FEEDBACK, Builder, gate_run, many_calls, pipeline_run

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


def test_a_gate_run_shows_its_phases_feedback_and_diff_lines(tmp_path: Path) -> None:
    loaded = shown(gate_run(tmp_path / "run"), tmp_path, screenshot=True)

    for words in ("fix-vulnerability", "Phase 1 · edit", "Phase 2 · summary", FEEDBACK,
                  '-query = "SELECT * FROM users WHERE id = " + user_id',
                  '+query = "SELECT * FROM users WHERE id = %s"',
                  "PHASE 1 COMPLETE: parameterised the query"):  # fmt: skip
        assert words in loaded.text, words
    assert_a_real_screenshot(loaded.png)


def test_a_pipeline_run_shows_every_stage_visit(tmp_path: Path) -> None:
    loaded = shown(pipeline_run(tmp_path / "run"), tmp_path, screenshot=True)

    for words in ("Stage implement · visit 1", "Stage review · visit 1",
                  "Stage implement · visit 2", "Stage review · visit 2",
                  "back_to implement: add a test first.", "+def test_health(): ..."):  # fmt: skip
        assert words in loaded.text, words
    assert_a_real_screenshot(loaded.png)


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


def test_a_thousand_tool_calls_stay_folded(tmp_path: Path) -> None:
    loaded = shown(many_calls(tmp_path / "run", 1000, result_chars=2000), tmp_path)

    assert loaded.text.count("tool call Read") == 1000
    assert "line 5 of the file" not in loaded.text  # every result folded away
    assert loaded.timing["load"] > 0
