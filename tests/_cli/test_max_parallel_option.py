"""``--max-parallel N`` wherever a pipeline runs from the command line: a bad value is exit 2
naming the option, before anything runs; a good one runs the pipeline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script
from tests.helpers.cli import phasegate
from tests.helpers.three_stages import THREE, write_step

COMMANDS = {
    "pipeline-run": ["pipeline", "run", "three.yaml"],
    "pipeline-resume": ["pipeline", "resume", "three.yaml"],
    "execute": ["execute", "three.yaml", "--plan", "plan.json"],
    "batch-run": ["batch", "run", "batch.yaml", "--out", "out"],
}


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
def test_a_bad_max_parallel_exits_two_naming_the_option(
    tmp_path: Path, command: str, value: str
) -> None:
    """Click refuses it before any file is read: the option and the value are named."""
    done = phasegate(*COMMANDS[command], "--max-parallel", value, cwd=tmp_path)

    assert done.returncode == 2
    assert "--max-parallel" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_pipeline_runs_with_max_parallel_given(tmp_path: Path) -> None:
    """A sequential pipeline bounded to one stage at a time runs as before, offline."""
    (tmp_path / "three.yaml").write_text(yaml.safe_dump(THREE))
    work = tmp_path / "work"
    work.mkdir()
    replies: list[dict[str, Any]] = []
    for name in ("one", "two", "three"):
        replies.append({"contains": f"Stage {len(replies) // 2 + 1} of 3: {name}",
                        "tools": [write_step(name)]})  # fmt: skip
        replies.append({"when": "tool_result", "text": f"{name} done."})
    with ScriptedModelServer(Script.model_validate({"replies": replies})) as server:
        done = phasegate(
            "pipeline", "run", tmp_path / "three.yaml", "--workdir", work,
            "--max-parallel", "1", "--json",
            env={**os.environ, **server.env()},
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in work.glob("*.md")) == ["one.md", "three.md", "two.md"]
