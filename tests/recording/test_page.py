"""The page of a recorded run (phasegate.recording.page): what it shows, and that every text
from a model, a tool, a file or a task file is shown as text, never as markup."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from phasegate.recording.page import CSP, render_page, write_page
from tests.helpers.page_html import Elements
from tests.helpers.recording_fixtures import FEEDBACK, Builder, gate_run, many_calls, pipeline_run

HOSTILE = ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "</pre><b>bold</b>",
           "</textarea><i>x</i>", "--><!-- ", "\" onmouseover=\"alert(3)")  # fmt: skip


def test_the_page_shows_the_header_timeline_conversation_checks_and_diff(tmp_path: Path) -> None:
    page = render_page(gate_run(tmp_path / "run"))
    text = "".join(Elements(page).text)

    assert "<h1>fix-vulnerability</h1>" in page
    for words in ("kind: task", "verdict: accepted", "run: 0a1b2c3d4e5f", "Phase 1 · edit",
                  "Phase 2 · summary", "1400 / 260", "$0.0030", "16 s"):  # fmt: skip
        assert words in text, words
    assert FEEDBACK in text
    assert "gate feedback to the model" in text
    assert "missing_marker" in text and "Phase 1 has no PHASE 1 COMPLETE: marker." in text
    assert (
        '<span class="del">-query = &quot;SELECT * FROM users WHERE id = &quot; + user_id' in page
    )
    assert '<span class="add">+query = &quot;SELECT * FROM users WHERE id = %s&quot;' in page
    assert "Files changed: app.py" in text


def test_marker_lines_of_the_model_are_highlighted_and_prose_about_them_is_not(
    tmp_path: Path,
) -> None:
    page = render_page(gate_run(tmp_path / "run", said="I will print PHASE 1 COMPLETE: later"))

    marked = re.findall(r'<mark class="marker">(.*?)</mark>', page)
    assert marked == ["PHASE 1 COMPLETE: parameterised the query"]


def test_completion_tool_calls_and_refusals_are_set_apart(tmp_path: Path) -> None:
    run = Builder()
    run.call("mcp__phasegate__phase_complete", {"phase": 1, "text": "done"}, "Accepted.")
    run.add("refusal", tool_use_id="t9", name="Write", input="secrets.env",
            reason="secrets.env is protected", phase=1)  # fmt: skip
    run.part(0, "edit", index=1)
    page = render_page(run.write(tmp_path / "run"))

    assert re.search(r'<details class="entry completion"[^>]*data-tool="mcp__phasegate__phase_'
                     r'complete"', page)  # fmt: skip
    assert 'class="entry refusal"' in page
    assert "refused before it ran in phase 1: Write secrets.env" in page
    assert "secrets.env is protected" in page


def test_a_pipeline_shows_each_stage_visit_in_order(tmp_path: Path) -> None:
    page = render_page(pipeline_run(tmp_path / "run"))
    titles = re.findall(r"<h2>(Stage [^<]*)</h2>", page)

    assert titles == ["Stage implement · visit 1", "Stage review · visit 1",
                      "Stage implement · visit 2", "Stage review · visit 2"]  # fmt: skip
    assert "back_to implement: add a test first." in page
    assert '<span class="add">+def test_health(): ...</span>' in page
    assert "<th>stage visit</th>" in page


def test_long_blocks_are_folded_and_short_ones_are_open(tmp_path: Path) -> None:
    run = Builder()
    run.call("Read", {"file_path": "short.py"}, "x = 1")
    run.call("Read", {"file_path": "long.py"}, "line\n" * 500)
    run.part(0, "read", index=1)
    page = render_page(run.write(tmp_path / "run"))
    calls = re.findall(r'<details class="entry tool"[^>]*>', page)

    assert len(calls) == 2
    assert calls[0].endswith(" open>") and not calls[1].endswith(" open>")
    assert "501 lines, 2500 characters: show all" in page  # the text ends with a line break


def test_judged_transcripts_say_why_there_is_no_diff(tmp_path: Path) -> None:
    run = Builder(kind="judged")
    run.add("assistant", text="PHASE 1 COMPLETE: done")
    run.part(0, "edit", index=1, note="A judged transcript has no work directory.")
    page = render_page(run.write(tmp_path / "run"))

    assert "A judged transcript has no work directory." in page
    assert "No change to the work directory." not in page


@pytest.mark.parametrize("hostile", HOSTILE)
def test_markup_anywhere_in_a_recording_renders_as_text(tmp_path: Path, hostile: str) -> None:
    """In the task name, the model's text, a tool's input and output, a file name, a diff
    line, an issue, the feedback and the notes: never an element, never an attribute."""
    run = Builder(name=f"task {hostile}", verdict=hostile)
    run.add("user", text=f"prompt {hostile}")
    run.add("assistant", text=f"said {hostile}\nPHASE 1 COMPLETE: {hostile}")
    run.call(f"Tool{hostile}", {"file_path": f"f{hostile}.py", hostile: hostile}, f"out {hostile}",
             ok=False)  # fmt: skip
    run.add("refusal", tool_use_id="t", name=hostile, input=hostile, reason=hostile)
    run.add("notice", text=hostile)
    run.check(0, 1, hostile, accepted=False, feedback=f"fix {hostile}", issues=[(hostile, hostile)])
    run.part(0, f"edit {hostile}", index=1, status=hostile, files=[f"f{hostile}.py"],
             diff=f"--- a/{hostile}\n+++ b/{hostile}\n@@ -1 +1 @@\n-{hostile}\n+{hostile}\n",
             note=hostile)  # fmt: skip
    run.cut.append(hostile)
    page = render_page(run.write(tmp_path / "run"))
    elements = Elements(page)

    assert {tag for tag, _ in elements.tags} <= {
        "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "div",
        "span", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td", "a", "p",
        "section", "details", "summary", "pre", "mark", "ul", "li", "code", "b",
    }  # fmt: skip
    assert not any(name.startswith("on") for _, attrs in elements.tags for name in attrs)
    assert page.count("<!--") == 0
    assert hostile not in page
    text = "".join(elements.text)
    assert text.count(hostile) >= 12


def test_the_page_loads_nothing_and_runs_nothing(tmp_path: Path) -> None:
    page = render_page(gate_run(tmp_path / "run"))

    assert "://" not in page
    for needle in ("<script", "<link", "<img", "<iframe", "@import", "url(", "@font-face"):
        assert needle not in page.lower()
    assert f'content="{CSP}"' in page and "default-src 'none'" in CSP


def test_a_thousand_tool_calls_make_a_page_of_bounded_size_with_every_call_folded(
    tmp_path: Path,
) -> None:
    page = render_page(many_calls(tmp_path / "run", 1000, result_chars=2000))

    assert page.count('data-tool="Read"') == 1000
    assert len(page.encode()) < 8_000_000
    assert not re.search(r'<details class="entry tool"[^>]*open>', page)


def test_write_page_writes_index_html_in_the_folder_or_where_asked(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")

    assert write_page(folder) == folder / "index.html"
    assert (folder / "index.html").read_text() == render_page(folder)
    elsewhere = write_page(folder, tmp_path / "out" / "page.html")
    assert elsewhere.read_text() == render_page(folder)


def test_write_page_replaces_a_link_planted_as_the_page_and_leaves_its_target_alone(
    tmp_path: Path,
) -> None:
    folder = gate_run(tmp_path / "run")
    outside = tmp_path / "outside.html"
    outside.write_text("keep me")
    (folder / "index.html").symlink_to(outside)

    write_page(folder)

    assert outside.read_text() == "keep me"
    assert not (folder / "index.html").is_symlink()
    assert (folder / "index.html").read_text() == render_page(folder)


def test_a_run_that_crashed_shows_its_error_and_a_recording_without_a_report_still_renders(
    tmp_path: Path,
) -> None:
    folder = gate_run(tmp_path / "run")
    manifest = json.loads((folder / "recording.json").read_text())
    manifest.update(verdict="error", error="the agent's API failed: HTTP 500 <b>x</b>")
    manifest["files"]["report"] = None
    (folder / "recording.json").write_text(json.dumps(manifest))
    (folder / "report.json").unlink()

    page = render_page(folder)

    assert '<p class="error">the agent&#x27;s API failed: HTTP 500 &lt;b&gt;x&lt;/b&gt;</p>' in page
    assert "verdict: error" in page
