"""A recording's diffs: bounded in size with a note, never read through a symbolic link, and
what the agent wrote (markup, ``../`` paths, odd file names) kept as data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate import Runner, Task
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.recording.diffs import part_diff
from phasegate.testing import Script, ScriptedAgent
from phasegate.workspace import observer as observer_module
from phasegate.workspace.contents import FileContents
from phasegate.workspace.observer import WorkspaceObserver
from tests.helpers.recordings import Recording, read_recording
from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER

SECRET = "the secret outside the work directory"
HOSTILE = '<script>alert("x")</script> ../../etc/passwd </pre>"\n+++ b/forged\n@@ -1 +1 @@\n'


def _run(
    task: Task, project: Path, folder: Path, tools: list[dict[str, Any]], text: str = ""
) -> Recording:
    """Run the example task with the scripted agent making ``tools`` calls, then the fix and
    the summary; the recording in ``folder``."""
    replies = [
        {"tools": [*tools, EDIT]},
        {"when": "tool_result", "text": f"{text}\n{MARKER}\n{GOOD_JSON}"},
    ]
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    Runner(agent).run_sync(task, project, record=folder)
    return read_recording(folder)


def _write(path: str, content: str) -> dict[str, Any]:
    return {"Write": {"file_path": path, "content": content}}


def test_a_huge_edit_gives_a_diff_cut_at_its_bound_with_a_note(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """400 KiB of new lines: the diff stops at 256 KiB on a line's end, says it was cut in
    diff_cut, diff_note and the manifest's cut; a 2 MiB file is named, not diffed."""
    lines = "".join(f"line {n:06d} of a long generated file\n" for n in range(10_000))
    recording = _run(
        task,
        project,
        tmp_path / "rec",
        [_write("big.txt", lines), _write("huge.txt", "x" * (2 << 20))],
    )

    part = recording.parts[0]
    diff = recording.diff(0)
    assert part["diff_cut"] is True
    assert len(diff.encode()) <= 256 << 10 and diff.endswith("\n")
    assert "cut at 262144 bytes" in part["diff_note"]
    assert "huge.txt is larger than" in part["diff_note"]
    assert sorted(part["diff_files"]) == ["app.py", "big.txt", "huge.txt"]
    assert len(recording.manifest["cut"]) == 2
    assert all(line[:1] in " +-@\\" for line in diff.splitlines() if line)


def test_a_file_linked_out_of_the_work_directory_is_never_read_for_a_diff(
    tmp_path: Path,
) -> None:
    """A link to a file outside appears during a part: it is named as a link, and nothing
    of what it points at reaches the diff."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    contents = FileContents()
    observer = WorkspaceObserver(work, contents=contents)
    before = observer.snapshot()
    (work / "leak.txt").symlink_to(outside / "secret.txt")

    diff = part_diff(before, observer.snapshot(), contents)

    assert diff.files == ("leak.txt",) and diff.text == ""
    assert diff.notes == ("leak.txt is a symbolic link, which is not followed, so it is not "
                          "diffed.",)  # fmt: skip
    assert contents.used == 0


def test_a_folder_replaced_by_a_link_between_listing_and_reading_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a recording must lose safely: ``sub`` is listed as a folder, then is a link
    out when its file is read. The file's text is not kept, and the note says why."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "f.txt").write_text(SECRET)
    (work / "sub").symlink_to(outside)
    monkeypatch.setattr(observer_module, "_walk_files", lambda workdir: ["sub/f.txt"])
    contents = FileContents()

    snapshot = WorkspaceObserver(work, contents=contents).snapshot()

    diff = part_diff(WorkspaceSnapshot(), snapshot, contents)
    assert SECRET not in diff.text
    assert diff.notes == ("sub/f.txt is reached through a symbolic link, never followed, so it "
                          "is not diffed.",)  # fmt: skip


def test_markup_and_paths_the_agent_wrote_stay_data(
    task: Task, project: Path, tmp_path: Path
) -> None:
    """Markup and ``../`` in the transcript and in a file come back byte for byte as JSON
    strings; a file name holding a newline is quoted in the diff, so it forges no hunk."""
    recording = _run(
        task,
        project,
        tmp_path / "rec",
        [_write("odd\nname.txt", HOSTILE), _write("page.html", HOSTILE)],
        text=HOSTILE,
    )

    texts = [e.get("text") for e in recording.transcript if e["kind"] == "assistant"]
    assert any(HOSTILE in (t or "") for t in texts)
    diff = recording.diff(0)
    assert '--- /dev/null\n+++ "b/odd\\nname.txt"\n' in diff
    headers = [line for line in diff.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [
        "--- a/app.py", "+++ b/app.py",
        "--- /dev/null", '+++ "b/odd\\nname.txt"',
        "--- /dev/null", "+++ b/page.html",
    ]  # fmt: skip
    assert '+<script>alert("x")</script> ../../etc/passwd </pre>"' in diff.splitlines()
    assert [p.name for p in (recording.folder / "diffs").iterdir()] == ["01-phase-1.diff"]
    assert json.loads(json.dumps(recording.manifest)) == recording.manifest


def test_a_binary_file_is_named_not_diffed(task: Task, project: Path, tmp_path: Path) -> None:
    """A file with a NUL byte: named in the note, left out of the diff."""
    (project / "blob.bin").write_bytes(b"\x00\x01")
    recording = _run(task, project, tmp_path / "rec", [_write("blob.bin", "now\x00text")])

    assert "blob.bin is binary" in recording.parts[0]["diff_note"]
    assert "blob.bin" not in recording.diff(0)
