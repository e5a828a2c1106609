"""``phasegate view DIR [--output FILE]``: a recorded run's page, where it went, and bad input
as one line with exit code 2."""

from __future__ import annotations

from pathlib import Path

from phasegate.recording.page import render_page
from tests.helpers.cli import phasegate
from tests.helpers.recording_fixtures import gate_run


def test_view_writes_the_page_into_the_folder_and_prints_where(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")

    done = phasegate("view", folder)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(folder / "index.html")
    assert (folder / "index.html").read_text() == render_page(folder)


def test_view_writes_the_page_where_output_says(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")

    done = phasegate("view", folder, "--output", tmp_path / "page.html")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "page.html")
    assert "<h1>fix-vulnerability</h1>" in (tmp_path / "page.html").read_text()
    assert not (folder / "index.html").exists()


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")
    (folder / "checks.jsonl").write_text("not json\n")

    for target, words in ((tmp_path / "missing", "does not exist"),
                          (tmp_path, "is not a recording"),
                          (folder, "checks.jsonl: line 1: invalid JSON")):  # fmt: skip
        done = phasegate("view", target)
        assert done.returncode == 2, done.stderr
        assert words in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_output_that_cannot_be_written_is_exit_code_2(tmp_path: Path) -> None:
    folder = gate_run(tmp_path / "run")
    (tmp_path / "taken").write_text("a file, not a folder")

    done = phasegate("view", folder, "--output", tmp_path / "taken" / "page.html")

    assert done.returncode == 2
    assert "cannot write the page to" in done.stderr and "Traceback" not in done.stderr
