"""``protect`` globs in task and pipeline files: relative POSIX globs inside the work
directory, refused at load with what to write instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.helpers.cli import phasegate

from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.phases.loading import task_from_mapping
from phasegate.phases.pipeline import pipeline_from_mapping

TASK: dict[str, Any] = {"name": "t", "phases": [{"name": "work", "instructions": "Do it."}]}


@pytest.mark.parametrize(
    ("glob", "says"),
    [
        ("", "must not be empty; write a path such as tests/**"),
        ("   ", "must not be empty"),
        ("/work/proj/tests/**", "is absolute; write it relative to the work directory"),
        ("C:/proj/tests", "is absolute"),
        ("c:tests", "is absolute"),
        ("tests\\**", "holds a backslash; separate names with '/' ('tests/**')"),
        ("../tests/**", "has a '..' segment"),
        ("src/../tests", "has a '..' segment"),
        ("./tests/**", "has an empty or '.' segment; write 'tests/**'"),
        ("tests//a.py", "write 'tests/a.py'"),
        (".", "names the work directory itself"),
    ],
)
def test_a_bad_protect_glob_is_refused_naming_the_field_and_what_to_write(
    glob: str, says: str
) -> None:
    with pytest.raises(TaskFileError) as caught:
        task_from_mapping({**TASK, "protect": [glob]})
    assert "protect.0" in str(caught.value)
    assert says in str(caught.value)


def test_good_protect_globs_load_as_written_and_a_trailing_slash_is_dropped() -> None:
    task = task_from_mapping({**TASK, "protect": ["tests/**", "*.lock", "docs/", "a b/[ab].md"]})
    assert task.protect == ("tests/**", "*.lock", "docs", "a b/[ab].md")


def test_a_stage_protect_glob_is_checked_the_same_way() -> None:
    stage = {"name": "s", "prompt": "Go.", "exit_when": [{"file_exists": "a"}]}
    with pytest.raises(PipelineFileError) as caught:
        pipeline_from_mapping({"name": "p", "stages": [{**stage, "protect": ["/abs"]}]})
    assert "stages.0.protect.0" in str(caught.value) and "is absolute" in str(caught.value)


def test_the_command_line_refuses_a_bad_protect_glob_with_exit_two(tmp_path: Path) -> None:
    bad = tmp_path / "task.yaml"
    bad.write_text("name: t\nprotect: [../tests]\nphases:\n  - name: w\n    instructions: x\n")
    done = phasegate("check", bad)
    assert done.returncode == 2
    assert "protect.0" in done.stderr and "'..' segment" in done.stderr
