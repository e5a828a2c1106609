"""A pipeline's inputs and placeholders (phasegate.phases.pipeline_inputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.errors import PipelineFileError
from phasegate.phases.pipeline import load_pipeline

LANGUAGE = "{id: language, question: Which language, header: Language}"


def test_a_pipeline_without_inputs_loads_with_placeholders_as_literal_text(tmp_path: Path) -> None:
    """Old pipeline files that mention {{ name }} keep loading; the prompt is unchanged."""
    (tmp_path / "prompt.md").write_text("Render {{ name }} with Mustache.\n")
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n  - {name: s, prompt_file: prompt.md, exit_when: [{file_exists: a}]}\n"
    )
    assert load_pipeline(file).stages[0].prompt == "Render {{ name }} with Mustache.\n"


def test_a_pipeline_whose_stage_task_declares_inputs_checks_every_placeholder(
    tmp_path: Path,
) -> None:
    """A stage task's input makes the whole pipeline one that declares inputs."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n"
        "  - {name: s, prompt: 'Render {{ name }}', exit_when: [{file_exists: a}]}\n"
        "  - name: t\n    task:\n      name: t\n"
        f"      phases: [{{name: w, instructions: 'In {{{{ language }}}}'}}]\n"
        f"      inputs: [{LANGUAGE}]\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    assert caught.value.field == "stages.0.prompt"
    assert "{{ name }} names no input" in caught.value.problem


def test_a_stage_task_declaring_an_input_unlike_the_pipeline_is_refused(tmp_path: Path) -> None:
    """One id, one declaration, everywhere in the pipeline."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n  - name: t\n    task:\n      name: t\n"
        "      phases: [{name: w, instructions: 'In {{ language }}'}]\n"
        "      inputs: [{id: language, question: Which one, header: Language}]\n"
        f"inputs: [{LANGUAGE}]\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    assert caught.value.field == "stages.0.task.inputs"
