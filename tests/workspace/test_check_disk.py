"""What a check's command writes (phasegate.workspace.checks.CheckDisk) is never the agent's
work: a test runner's cache, a coverage file. Not in a snapshot, so not in ``files_changed``,
not in reconciliation, and not a protected path's change, even where ``protect`` covers
the folder it went in."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.checks import CommandCheck
from phasegate.workspace.checks import CheckDisk
from phasegate.workspace.observer import WorkspaceObserver
from tests.helpers.cli import phasegate

WRITES_LIKE_A_TEST_RUNNER = textwrap.dedent("""
    import pathlib
    cache = pathlib.Path(".pytest_cache/v/cache")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "lastfailed").write_text("{}")
    pathlib.Path(".coverage").write_text("coverage data")
""")
"""A check's command that leaves what pytest and coverage leave."""


def writes_like_a_test_runner() -> CommandCheck:
    """A command check that leaves a test runner's cache and a coverage file."""
    return CommandCheck(argv=(sys.executable, "-c", WRITES_LIKE_A_TEST_RUNNER))


def test_what_a_check_s_command_writes_never_shows_in_a_snapshot(work: Path) -> None:
    """The files it made are not in the next snapshot, so the disk did not change."""
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    observer = WorkspaceObserver(work)
    before = observer.snapshot()
    ((outcome, _),) = CheckDisk(observer).run(
        [writes_like_a_test_runner()], snapshot=before, diff=WorkspaceDiff(), tools={}, texts=()
    )
    assert outcome.ok, outcome.detail
    assert (work / ".coverage").is_file()  # it ran, for real
    assert (work / ".pytest_cache" / "v" / "cache" / "lastfailed").is_file()
    after = observer.snapshot()
    assert after == before
    assert WorkspaceDiff.between(before, after).paths == ()


def test_a_file_a_check_wrote_shows_once_someone_else_changes_it(work: Path) -> None:
    """The agent rewriting the coverage file afterwards is a change of its own: it shows,
    while the cache the check left, untouched, still does not."""
    observer = WorkspaceObserver(work)
    before = observer.snapshot()
    CheckDisk(observer).run(
        [writes_like_a_test_runner()], snapshot=before, diff=WorkspaceDiff(), tools={}, texts=()
    )
    (work / ".coverage").write_text("the agent's own")
    diff = WorkspaceDiff.between(before, observer.snapshot())
    assert diff.paths == (".coverage",)


@pytest.mark.cli
def test_a_real_run_counts_none_of_what_its_checks_wrote_even_in_protected_folders(
    tmp_path: Path,
) -> None:
    """Through the command line and the real CLI: the checks leave a cache and a coverage
    file in paths the task protects, and the run is accepted with only the agent's file
    changed, nothing unclaimed, no protected path changed."""
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    task = {
        "name": "checks-leave-files",
        "protect": ["tests/**", ".pytest_cache/**", ".coverage"],
        "phases": [
            {
                "name": "fix",
                "instructions": "Fix add() in calc.py.",
                "marker": "add() is fixed",
                "require_tools": ["Edit"],
                "require_changes": True,
                "checks": [
                    {"command": [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist"]},
                    {"command": [sys.executable, "-c", WRITES_LIKE_A_TEST_RUNNER]},
                ],
            },
            {
                "name": "summary",
                "instructions": "Report what you changed.",
                "output_schema": {
                    "type": "object",
                    "required": ["files_changed"],
                    "properties": {"files_changed": {"type": "array"}},
                },
                "claims_files": "files_changed",
            },
        ],
    }
    model = {
        "replies": [
            {
                "tools": [
                    {
                        "Edit": {
                            "file_path": "calc.py",
                            "old_string": "return a - b",
                            "new_string": "return a + b",
                        }
                    }
                ]
            },
            {"when": "tool_result", "text": "PHASE 1 COMPLETE: add() is fixed"},
            # The gate ran the checks at that stop; this answer's stop looks at the disk
            # again, with what they wrote on it.
            {"when": "user", "text": '```json\n{"files_changed": ["calc.py"]}\n```'},
        ]
    }
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(task))
    (tmp_path / "model.yaml").write_text(yaml.safe_dump(model))
    done = phasegate(
        "run", tmp_path / "task.yaml", "--workdir", work,
        "--model-script", tmp_path / "model.yaml", "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["verdict"], report["attempts"]) == ("accepted", 2)
    assert [check["passed"] for check in report["phases"][0]["checks"]] == [True, True]
    assert (work / ".coverage").is_file()
    assert (work / ".pytest_cache").is_dir()
    assert report["files_changed"] == ["calc.py"]
    assert report["phases"][0]["files_changed"] == ["calc.py"]
    fix = report["phases"][0]["reconciliation"]
    assert fix["disk_changed"] == ["calc.py"]
    assert fix["change_without_tool"] == []
    assert report["reconciliation"]["changed_not_claimed"] == []
    assert [issue["code"] for phase in report["phases"] for issue in phase["issues"]] == []
