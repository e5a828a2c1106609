"""Files written on Windows: a task, a pipeline and a model script with CRLF line ends load
as the same definitions as with LF (YAML reads both), prompts without a stray ``\\r``."""

from __future__ import annotations

from pathlib import Path

import yaml
from tests.helpers.three_stages import THREE

from phasegate.agents.scripted.script import load_script
from phasegate.phases.loading import load_task
from phasegate.phases.pipeline import load_pipeline

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fix-vulnerability"


def _crlf(source: Path, target: Path) -> Path:
    data = source.read_bytes()
    assert b"\r" not in data
    target.write_bytes(data.replace(b"\n", b"\r\n"))
    return target


def test_a_task_with_crlf_line_ends_loads_as_the_same_task(tmp_path: Path) -> None:
    task = load_task(_crlf(EXAMPLE / "task.yaml", tmp_path / "task.yaml"))

    assert task == load_task(EXAMPLE / "task.yaml")
    assert not any("\r" in phase.instructions for phase in task.phases)


def test_a_pipeline_with_crlf_line_ends_loads_as_the_same_pipeline(tmp_path: Path) -> None:
    lf = tmp_path / "lf.yaml"
    lf.write_text(yaml.safe_dump(THREE), encoding="utf-8")

    assert load_pipeline(_crlf(lf, tmp_path / "crlf.yaml")) == load_pipeline(lf)


def test_a_model_script_with_crlf_line_ends_loads_as_the_same_script(tmp_path: Path) -> None:
    crlf = load_script(_crlf(EXAMPLE / "model.yaml", tmp_path / "model.yaml"))

    assert crlf == load_script(EXAMPLE / "model.yaml")
