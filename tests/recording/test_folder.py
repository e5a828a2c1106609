"""Where a recording may go: a new or empty folder, or an earlier recording, replaced whole;
anything else is refused before the run and left as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from phasegate import RecordingFolderError, Runner, Task
from phasegate._files.atomic import write_synced
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.recording import folder as folder_module
from phasegate.recording import page as page_module
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.cli import phasegate
from tests.helpers.recordings import read_recording
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER
from tests.helpers.scratch import kill_hard, start_holder

GOOD: list[dict[str, Any]] = [
    {"tools": [EDIT]},
    {"when": "tool_result", "text": f"{MARKER}\n{GOOD_JSON}"},
]


class _NeverRun:
    """An agent a test expects never to start."""

    name = "never"

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        raise AssertionError("the agent started although the recording folder was refused")


def _scripted(replies: list[dict[str, Any]]) -> ScriptedAgent:
    return ScriptedAgent(Script.model_validate({"replies": replies}))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_folder_holding_anything_but_a_recording_is_refused_before_the_agent_starts(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """The error names the folder and what to do; every file in it stays as it was."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    (folder / "sub").mkdir()
    (folder / "sub" / "data.json").write_text("{}")
    before = _tree(folder)

    with pytest.raises(RecordingFolderError) as caught:
        Runner(_NeverRun()).run_sync(task, project, record=folder)

    assert str(folder) in str(caught.value) and "empty this one" in str(caught.value)
    assert caught.value.option == "record"
    assert _tree(folder) == before


@pytest.mark.parametrize("kind", ["file", "link to a recording"])
def test_a_file_or_a_link_in_the_way_is_refused_and_left(
    task: Task, project: Path, tmp_path: Path, kind: str
) -> None:
    """A link is never followed, even to a folder that holds a recording."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "recording.json").write_text("{}")
    folder = tmp_path / "in-the-way"
    if kind == "file":
        folder.write_text("a file")
    else:
        folder.symlink_to(target)

    with pytest.raises(RecordingFolderError):
        Runner(_NeverRun()).run_sync(task, project, record=folder)

    assert os.path.lexists(folder) and (target / "recording.json").read_text() == "{}"


def test_an_empty_folder_takes_a_recording(task: Task, project: Path, tmp_path: Path) -> None:
    """An empty folder (made for it) is replaced by the recording."""
    folder = tmp_path / "empty"
    folder.mkdir()

    Runner(_scripted(GOOD)).run_sync(task, project, record=folder)

    assert read_recording(folder).manifest["verdict"] == "accepted"


def test_an_earlier_recording_is_replaced_whole_by_the_next(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """Nothing of the first recording is left in the second: not even a file it alone had."""
    folder = tmp_path / "recording"
    first = Runner(_scripted(GOOD)).run_sync(task, project, record=folder)
    (folder / "stale.txt").write_text("from before")

    second = Runner(_scripted([{"text": "I will not."}])).run_sync(
        task, project, record=folder, inputs=None
    )

    recording = read_recording(folder)
    assert recording.manifest["run_id"] == second.run_id != first.run_id
    assert not (folder / "stale.txt").exists()


def test_an_earlier_recording_survives_a_write_that_fails(
    task: Task, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up while the new recording is written: a warning says so, the earlier
    recording is there byte for byte, and no scratch folder is left beside it."""
    folder = tmp_path / "recording"
    Runner(_scripted(GOOD)).run_sync(task, project, record=folder)
    before = _tree(folder)
    written = write_synced

    def full_disk(path: Path, data: bytes) -> None:
        if path.name == "checks.jsonl":
            raise OSError(28, "No space left on device")
        written(path, data)

    monkeypatch.setattr(folder_module, "write_synced", full_disk)

    with pytest.warns(UserWarning, match="No space left"):
        report = Runner(_scripted(GOOD)).run_sync(task, project, record=folder)

    assert report.run_id not in str(before)  # the run ended with its report all the same
    assert _tree(folder) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("phasegate-")] == []


def test_the_command_line_refuses_a_folder_that_is_not_a_recording_with_exit_two(
    tmp_path: Path,
) -> None:
    """No traceback: one line naming the folder and the flag."""
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "x").write_text("x")
    work = tmp_path / "work"
    work.mkdir()

    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--workdir", work, "--agent", "scripted",
        "--script", EXAMPLE / "model.yaml", "--record", folder,
    )  # fmt: skip

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(folder) in done.stderr and "--record" in done.stderr
    assert (folder / "x").read_text() == "x"


def test_a_page_that_cannot_be_rendered_costs_the_recording_nothing_but_its_page(
    task: Task, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renderer fails: every other file is written, the manifest still names the page
    (for ``phasegate view`` to write again), and no index.html is left half-made."""
    folder = tmp_path / "recording"

    def broken(_folder: Path) -> str:
        raise RuntimeError("the renderer has a bug")

    monkeypatch.setattr(page_module, "render_page", broken)
    Runner(_scripted(GOOD)).run_sync(task, project, record=folder)

    recording = read_recording(folder)
    assert recording.manifest["files"]["page"] == "index.html"
    assert not (folder / "index.html").exists()
    assert recording.manifest["verdict"] == "accepted"


def test_the_building_folder_a_killed_writer_left_is_swept_by_the_next_write(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """A process dies (SIGKILL) holding a recording's building folder beside the target:
    the next recording written there removes it; a live process's is left."""
    beside = tmp_path / "recordings"
    beside.mkdir()
    dead, (left,) = start_holder(beside, ["phasegate-recording"])
    kill_hard(dead)
    alive, (held,) = start_holder(beside, ["phasegate-recording"])
    try:
        Runner(_scripted(GOOD)).run_sync(task, project, record=beside / "run")
        assert not left.exists() and held.exists()
    finally:
        kill_hard(alive)
