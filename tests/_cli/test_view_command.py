"""``phasegate view DIR [--output FILE]``: a recorded run's page, where it went, and bad input
as one line with exit code 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from phasegate.recording.page import render_page
from tests.helpers.cli import phasegate
from tests.helpers.recording_fixtures import gate_run
from tests.helpers.scenarios import EXAMPLE


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


@pytest.mark.cli
def test_a_run_recorded_with_record_is_viewed_with_view(tmp_path: Path) -> None:
    """The two commands of the README, offline: the real Claude Code CLI against the
    scripted model server records the run, and view writes its page again, the same."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", project)

    run = phasegate("run", EXAMPLE / "task.yaml", "--workdir", project, "--model-script",
                    EXAMPLE / "model.yaml", "--record", tmp_path / "run-1")  # fmt: skip
    page = (tmp_path / "run-1" / "index.html").read_text()
    viewed = phasegate("view", tmp_path / "run-1")

    assert run.returncode == 0, run.stderr
    assert viewed.returncode == 0, viewed.stderr
    assert (tmp_path / "run-1" / "index.html").read_text() == page
    assert "Phase 1 · edit" in page and "gate feedback to the model" in page
