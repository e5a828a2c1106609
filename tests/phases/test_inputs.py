"""Task inputs: declared in task and pipeline files, used as {{ id }}, checked at load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.phases.loading import load_task, task_from_mapping
from phasegate.phases.pipeline import load_pipeline, pipeline_from_mapping

LANGUAGE = {"id": "language", "question": "Which language?", "header": "Language"}


def task_data(instructions: str = "Write it in {{ language }}.", **extra: Any) -> dict[str, Any]:
    """A one-phase task with the language input."""
    data: dict[str, Any] = {
        "name": "t",
        "phases": [{"name": "work", "instructions": instructions}],
        "inputs": [LANGUAGE],
    }
    data.update(extra)
    return data


def test_a_task_with_inputs_loads_them_with_their_options_and_rules(tmp_path: Path) -> None:
    """Options, defaults and the one-key rule form are read into models."""
    file = tmp_path / "task.yaml"
    file.write_text(
        "name: ci\n"
        "phases:\n  - {name: work, instructions: 'Use {{ ci }} for {{ language }}.'}\n"
        "inputs:\n"
        "  - id: ci\n    question: Which CI?\n    header: CI\n    type: choice\n"
        "    options: [{label: GitHub Actions, description: workflows}]\n"
        "    infer:\n      - {file_exists: .github/workflows/*.yml, value: GitHub Actions}\n"
        "  - id: language\n    question: Which language?\n    header: Language\n"
        "    infer: [{detect: language}, {file_value: {path: pyproject.toml, key: a.b}}]\n"
    )

    task = load_task(file)

    assert [item.id for item in task.inputs] == ["ci", "language"]
    assert task.inputs[0].labels == ("GitHub Actions",)
    rule = task.inputs[0].infer[0]
    assert (rule.kind, rule.value) == ("file_exists", "GitHub Actions")
    assert [rule.kind for rule in task.inputs[1].infer] == ["detect", "file_value"]


def test_a_placeholder_naming_no_input_fails_naming_the_file_and_the_field(tmp_path: Path) -> None:
    """`{{ langauge }}` (a typo) is a load error at phases.0.instructions, exit code 2."""
    file = tmp_path / "task.yaml"
    file.write_text(
        "name: t\nphases: [{name: w, instructions: 'In {{ langauge }} and {{ language }}'}]\n"
        "inputs: [{id: language, question: Which language, header: Language}]\n"
    )

    with pytest.raises(TaskFileError) as caught:
        load_task(file)

    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{file}: phases.0.instructions: {{{{ langauge }}}}")


def test_a_task_without_inputs_keeps_every_placeholder_as_literal_text() -> None:
    """Nothing declared, nothing checked: a task may ask for a template holding {{ title }}."""
    text = "Write a Jinja template that shows {{ title }} and {{ body }}."
    task = task_from_mapping({"name": "t", "phases": [{"name": "w", "instructions": text}]})
    assert task.phases[0].instructions == text


def test_an_input_no_instruction_uses_fails_naming_it() -> None:
    """An unused input is a load error at inputs.N."""
    with pytest.raises(TaskFileError) as caught:
        task_from_mapping(task_data("No placeholder here."))

    assert caught.value.field == "inputs.0"
    assert "'language' is never used" in caught.value.problem


def test_github_actions_expressions_and_dotted_names_are_not_placeholders() -> None:
    """`${{ secrets.X }}`, `${{ matrix }}` and `{{ a.b }}` stay text and need no input."""
    task = task_from_mapping(
        task_data("Use {{ language }}; keep ${{ secrets.TOKEN }}, ${{ matrix }} and {{ a.b }}.")
    )
    assert task.inputs[0].id == "language"


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({**LANGUAGE, "header": "Much too long header"}, "at most 12 characters"),
        ({**LANGUAGE, "type": "choice", "options": []}, "a choice has 1 to 12 options"),
        (
            {**LANGUAGE, "type": "choice", "options": [{"label": "Other (specify)"}]},
            "is added to every single choice",
        ),
        ({**LANGUAGE, "type": "multi_choice", "options": [{"label": "a"}]}, "2 to 12 options"),
        ({**LANGUAGE, "default": "TBD"}, "placeholder"),
        ({**LANGUAGE, "infer": [{"shell": "ls"}]}, "exactly one kind key"),
        ({**LANGUAGE, "infer": [{"file_exists": "../x"}]}, "leaves the work directory"),
        ({**LANGUAGE, "id": "language__other"}, "reserved"),
    ],
)
def test_a_malformed_input_is_refused_with_what_to_do(item: dict[str, Any], expected: str) -> None:
    """Each rule of the input model fails with a sentence naming the input's field."""
    with pytest.raises(TaskFileError) as caught:
        task_from_mapping(task_data(inputs=[item]))

    assert caught.value.field is not None and caught.value.field.startswith("inputs.0")
    assert expected in str(caught.value)


def test_two_inputs_with_the_same_id_are_refused() -> None:
    """Ids name placeholders and answers: they must be unique."""
    other = {**LANGUAGE, "question": "Another?"}
    with pytest.raises(TaskFileError, match="the id 'language'"):
        task_from_mapping(task_data(inputs=[LANGUAGE, other]))


def test_a_task_without_inputs_dumps_and_digests_as_before() -> None:
    """No `inputs` key in the dump, so saved digests of old definitions still match."""
    task = task_from_mapping({"name": "t", "phases": [{"name": "w", "instructions": "go"}]})
    assert "inputs" not in task.model_dump()
    assert "inputs" in task_from_mapping(task_data()).model_dump()


def test_a_pipeline_uses_its_inputs_in_stage_prompts_and_its_tasks_inputs_too() -> None:
    """Stage prompts may use the pipeline's inputs and those of its stage tasks."""
    pipeline = pipeline_from_mapping(
        {
            "name": "p",
            "inputs": [{"id": "target", "question": "Which target?", "header": "Target"}],
            "stages": [
                {
                    "name": "s",
                    "prompt": "Build {{ target }} in {{ language }}.",
                    "task": task_data(),
                }
            ],
        }
    )
    assert [item.id for item in pipeline.all_inputs] == ["target", "language"]


def test_a_pipeline_placeholder_naming_no_input_names_the_stage_prompt(tmp_path: Path) -> None:
    """The error points at stages.N.prompt."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n  - name: s\n    prompt: 'Build {{ target }} in {{ language }}'\n"
        "    exit_when: [{file_exists: a}]\n"
        "inputs: [{id: language, question: Which language, header: Language}]\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    assert caught.value.field == "stages.0.prompt"
