"""A symbolic link planted at any path phasegate writes under (a work directory's
``.phasegate/`` and ``.phasegate/executions/``, a batch's ``out/units/`` and
``out/units/.incoming/``, and their lock files) is refused: exit 2 with an error naming the
link, nothing written, replaced or deleted outside, no traceback. A project, an earlier agent
or a downloaded artifact can plant one; none of them may send phasegate's writes elsewhere."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from phasegate.planning.reference import plan_task
from tests.helpers.batches import batch_writer
from tests.helpers.cli import phasegate
from tests.helpers.inputs import CI_TASK, ci_task, python_project
from tests.helpers.three_stages import THREE

Command = Callable[[Path], subprocess.CompletedProcess[str]]
"""Runs one phasegate command whose writes go under the given folder."""


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path below ``folder`` with its bytes (None for a folder), links not followed."""
    return {
        str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
    }


def pipeline_run(tmp_path: Path) -> Command:
    pipeline = tmp_path / "three.yaml"
    pipeline.write_text(yaml.safe_dump(THREE))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": [{"text": "Nothing."}]}))
    return lambda work: phasegate(
        "pipeline", "run", pipeline, "--workdir", work, "--agent", "scripted", "--script", script
    )


def loop(tmp_path: Path) -> Command:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": [{"text": "<promise>DONE</promise>"}]}))
    return lambda work: phasegate(
        "loop", "Finish.", "--promise", "DONE", "--workdir", work, "--agent", "scripted",
        "--script", script,
    )  # fmt: skip


def execute(tmp_path: Path) -> Command:
    task = tmp_path / "task.json"
    task.write_text(json.dumps(CI_TASK))
    script = tmp_path / "model.yaml"
    script.write_text('replies:\n  - text: "PHASE 1 COMPLETE: configured"\n')

    def run(work: Path) -> subprocess.CompletedProcess[str]:
        python_project(work)
        plan = tmp_path / "plan.json"
        plan.write_text(plan_task(ci_task(), work).to_json())
        answers = json.dumps({"target": "Fly.io", "team": "core"})
        return phasegate("execute", task, "--workdir", work, "--plan", plan, "--responses",
                         answers, "--agent", "scripted", "--script", script,
                         "--idempotency-key", "k")  # fmt: skip

    return run


def batch_run(tmp_path: Path) -> Command:
    batch = batch_writer(tmp_path)()
    return lambda out: phasegate("batch", "run", batch, "--out", out, "--quiet")


KEY_LOCK = f".phasegate/executions/{hashlib.sha256(b'k').hexdigest()}.lock"

PLANTED = [
    # (the command, the link planted below the folder it writes under)
    (pipeline_run, ".phasegate"),
    (loop, ".phasegate"),
    (execute, ".phasegate"),
    (execute, ".phasegate/executions"),
    (execute, KEY_LOCK),
    (batch_run, "units"),
    (batch_run, "units/.incoming"),
    (batch_run, ".lock"),
]


@pytest.mark.parametrize(
    ("command", "link"), PLANTED, ids=[f"{c.__name__}:{link}" for c, link in PLANTED]
)
def test_a_link_planted_where_phasegate_writes_is_refused_and_nothing_outside_changes(
    tmp_path: Path, command: Callable[[Path], Command], link: str
) -> None:
    outside = tmp_path / "outside"
    (outside / "project").mkdir(parents=True)
    (outside / "project" / "main.py").write_text("print('keep me')\n")
    (outside / "pipeline-state.json").write_text("{}")
    folder = tmp_path / "folder"
    (folder / link).parent.mkdir(parents=True, exist_ok=True)
    (folder / link).symlink_to(
        outside / "made-through-the-link" if link.endswith(".lock") else outside
    )
    before = tree(outside)

    done = command(tmp_path)(folder)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    name = link.rsplit("/", 1)[-1] if link.endswith(".lock") else link
    assert f"{name} is a symbolic link" in done.stderr, done.stderr
    assert tree(outside) == before
