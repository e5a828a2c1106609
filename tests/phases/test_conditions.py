"""`ask_when`: conditions checked when the file loads, the one rule of which inputs apply,
and how an input that does not apply renders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import InputsInvalidError, PipelineFileError, TaskFileError
from phasegate.phases.conditions import NOT_APPLICABLE_TEXT, applicability
from phasegate.phases.filled import task_with_values
from phasegate.phases.loading import load_task, task_from_mapping
from phasegate.phases.pipeline import pipeline_from_mapping

KIND = {"id": "kind", "question": "Which kind?", "header": "Kind", "type": "choice",
        "options": [{"label": "Web"}, {"label": "CLI"}]}  # fmt: skip
TOOLS = {"id": "tools", "question": "Which tools?", "header": "Tools", "type": "multi_choice",
         "options": [{"label": "pytest"}, {"label": "Ruff"}]}  # fmt: skip
PORT = {"id": "port", "question": "Which port?", "header": "Port", "ask_when": {"kind": "Web"}}
NOTE = {"id": "note", "question": "Any note?", "header": "Note", "required": False}


def task_data(*inputs: dict[str, Any]) -> dict[str, Any]:
    """A one-phase task using every input given."""
    used = " ".join(f"{{{{ {item['id']} }}}}" for item in inputs)
    return {"name": "t", "phases": [{"name": "w", "instructions": f"Do {used}."}],
            "inputs": list(inputs)}  # fmt: skip


def test_a_condition_loads_from_one_value_or_a_list() -> None:
    one = task_from_mapping(task_data(KIND, PORT)).inputs[1]
    several = task_from_mapping(task_data(KIND, {**PORT, "ask_when": {"kind": ["Web", "CLI"]}}))
    assert one.ask_when == {"kind": ("Web",)}
    assert several.inputs[1].ask_when == {"kind": ("Web", "CLI")}


def test_an_input_without_conditions_dumps_as_before() -> None:
    """No `ask_when` key in the dump, so digests of definitions saved earlier still match."""
    task = task_from_mapping(task_data(KIND, PORT))
    dumped = task.model_dump()["inputs"]
    assert "ask_when" not in dumped[0] and dumped[1]["ask_when"] == {"kind": ("Web",)}


@pytest.mark.parametrize(
    ("port", "field", "expected"),
    [
        ({**PORT, "ask_when": {"knid": "Web"}}, "inputs.2.ask_when.knid",
         "input 'port' is asked when 'knid' has a value, but no input has the id 'knid'"),
        ({**PORT, "ask_when": {"tools": "black"}}, "inputs.2.ask_when.tools",
         "input 'port' is asked when 'tools' is 'black', but it is not one of its options"),
        ({**PORT, "ask_when": {"kind": "Other (specify)"}}, "inputs.2.ask_when.kind",
         "'Other (specify)' is never a value"),
        ({**PORT, "ask_when": {"kind": "TBD"}}, "inputs.2",
         "input 'port': ask_when 'kind': the value 'TBD' is a placeholder"),
        ({**PORT, "ask_when": {"kind": []}}, "inputs.2", "ask_when 'kind' lists no value"),
        ({**PORT, "ask_when": {"port": "80"}}, "inputs.2", "may not name the input itself"),
    ],
)  # fmt: skip
def test_a_condition_naming_no_input_or_an_impossible_value_is_refused_naming_the_field(
    port: dict[str, Any], field: str, expected: str
) -> None:
    with pytest.raises(TaskFileError) as caught:
        task_from_mapping(task_data(KIND, TOOLS, port))

    assert caught.value.exit_code == 2
    assert caught.value.field is not None and caught.value.field.startswith(field)
    assert expected in caught.value.problem


def test_a_cycle_of_conditions_is_refused_naming_the_file_the_input_and_the_cycle(
    tmp_path: Path,
) -> None:
    file = tmp_path / "task.yaml"
    file.write_text(
        "name: t\nphases: [{name: w, instructions: '{{ a }} {{ b }} {{ c }}'}]\ninputs:\n"
        "  - {id: a, question: Which a, header: A, ask_when: {c: x}}\n"
        "  - {id: b, question: Which b, header: B, ask_when: {a: x}}\n"
        "  - {id: c, question: Which c, header: C, ask_when: {b: x}}\n"
    )

    with pytest.raises(TaskFileError) as caught:
        load_task(file)

    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{file}: inputs.0.ask_when: input 'a' depends on ")
    assert caught.value.problem.endswith("through ask_when (a -> c -> b -> a); break the cycle")


def test_a_pipeline_input_may_depend_on_a_stage_task_input_and_is_checked_too() -> None:
    stage_task = {"name": "s", "phases": [{"name": "w", "instructions": "{{ kind }}"}],
                  "inputs": [KIND]}  # fmt: skip
    stage = {"name": "one", "prompt": "Port {{ port }}", "task": stage_task}
    data: dict[str, Any] = {"name": "p", "inputs": [PORT], "stages": [stage]}
    pipeline = pipeline_from_mapping(data)
    assert [item.id for item in pipeline.all_inputs] == ["port", "kind"]

    data["inputs"] = [{**PORT, "ask_when": {"kind": "Desktop", "nope": "x"}}]
    with pytest.raises(PipelineFileError) as caught:
        pipeline_from_mapping(data)
    assert caught.value.field == "inputs.0.ask_when.nope"


def test_an_input_applies_waits_or_does_not_apply_by_the_values_it_names() -> None:
    inputs = task_from_mapping(task_data(KIND, PORT)).inputs

    assert applicability(inputs, {}).waiting == {"port"}
    assert applicability(inputs, {"kind": "web"}).applies == {"kind", "port"}  # any case
    assert applicability(inputs, {"kind": "CLI"}).not_applicable == {"port"}


def test_a_multi_choice_condition_holds_when_any_chosen_label_is_listed() -> None:
    lint = {"id": "lint", "question": "Lint how?", "header": "Lint", "ask_when": {"tools": "Ruff"}}
    inputs = task_from_mapping(task_data(TOOLS, lint)).inputs

    assert "lint" in applicability(inputs, {"tools": ("pytest", "Ruff")}).applies
    assert "lint" in applicability(inputs, {"tools": "pytest, Ruff"}).applies  # as text
    assert "lint" in applicability(inputs, {"tools": ("pytest",)}).not_applicable


def test_several_conditions_must_all_hold() -> None:
    both = {**PORT, "ask_when": {"kind": "Web", "tools": "pytest"}}
    inputs = task_from_mapping(task_data(KIND, TOOLS, both)).inputs

    assert "port" in applicability(inputs, {"kind": "Web", "tools": ("pytest",)}).applies
    assert "port" in applicability(inputs, {"kind": "Web", "tools": ("Ruff",)}).not_applicable
    assert "port" in applicability(inputs, {"kind": "Web"}).waiting


def test_an_input_depending_on_one_that_does_not_apply_does_not_apply_either() -> None:
    """A chain: host is asked for a Web port; a CLI has no port, so no host either."""
    host = {"id": "host", "question": "Which host?", "header": "Host",
            "ask_when": {"port": ["80", "443"]}}  # fmt: skip
    inputs = task_from_mapping(task_data(KIND, PORT, host)).inputs

    assert applicability(inputs, {"kind": "CLI", "port": "80"}).not_applicable == {"port", "host"}
    assert applicability(inputs, {"kind": "Web"}).waiting == {"host"}
    assert applicability(inputs, {"kind": "Web", "port": "8080"}).not_applicable == {"host"}


def test_a_condition_on_an_optional_input_without_a_value_does_not_hold() -> None:
    """An optional input is never asked, so waiting for it would wait forever."""
    cc = {"id": "cc", "question": "Copy whom?", "header": "CC", "ask_when": {"note": "urgent"}}
    inputs = task_from_mapping(task_data(NOTE, cc)).inputs

    assert applicability(inputs, {}).not_applicable == {"cc"}
    assert applicability(inputs, {"note": "Urgent"}).applies == {"note", "cc"}


def test_an_input_that_does_not_apply_renders_empty_and_is_not_required() -> None:
    task = task_from_mapping(task_data(KIND, PORT))

    filled = task_with_values(task, {"kind": "CLI"})

    assert NOT_APPLICABLE_TEXT == ""
    assert filled.phases[0].instructions == "Do CLI ."
    assert task_with_values(task, {"kind": "Web", "port": "80"}).phases[0].instructions == (
        "Do Web 80."
    )


def test_a_value_for_an_input_that_does_not_apply_is_refused_before_anything_runs() -> None:
    task = task_from_mapping(task_data(KIND, PORT))

    with pytest.raises(InputsInvalidError) as caught:
        task_with_values(task, {"kind": "CLI", "port": "80"})

    (problem,) = caught.value.errors
    assert problem.field == "port"
    assert problem.problem == "does not apply: it is asked only when kind is 'Web'"
    task_with_values(task, {"kind": "CLI", "port": ""})  # the empty value is its value
