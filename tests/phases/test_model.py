"""The Task and Phase models built from Python (phasegate.phases.model)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from phasegate._files.digests import json_digest
from phasegate.phases.model import DEFAULT_MARKER_TEXT, Phase, Task
from phasegate.phases.pipeline import Pipeline

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "string"}},
}


class Summary(BaseModel):
    """A pydantic model used as an output schema."""

    files_changed: list[str]
    description: str


def test_a_work_phase_gets_the_default_marker_text_and_no_requirements() -> None:
    """Only name and instructions are needed; the rest has safe defaults."""
    phase = Phase(name="edit", instructions="Fix it.")

    assert phase.marker == DEFAULT_MARKER_TEXT
    assert phase.require_tools == ()
    assert phase.require_changes is False
    assert phase.is_output is False


def test_a_phase_with_an_output_schema_is_the_output_phase() -> None:
    """Setting output_schema is what makes a phase the output phase."""
    assert Phase(name="report", instructions="Report.", output_schema=SCHEMA).is_output


def test_the_marker_text_is_stripped_and_must_fit_on_one_line() -> None:
    """Surrounding whitespace goes; a line break inside the marker text is refused."""
    assert Phase(name="edit", instructions="x", marker="  Files edited \n").marker == "Files edited"
    with pytest.raises(ValidationError, match="one line"):
        Phase(name="edit", instructions="x", marker="Files\nedited")


def test_a_single_required_tool_may_be_given_as_a_string() -> None:
    """require_tools: Edit means the same as [Edit]."""
    phase = Phase.model_validate({"name": "edit", "instructions": "x", "require_tools": "Edit"})

    assert phase.require_tools == ("Edit",)


def test_a_pydantic_model_class_is_accepted_as_the_output_schema() -> None:
    """From Python, a pydantic model stands in for its JSON Schema."""
    phase = Phase.model_validate(
        {"name": "report", "instructions": "Report.", "output_schema": Summary}
    )

    assert phase.output_schema == Summary.model_json_schema()
    assert phase.is_output


def test_an_output_schema_that_is_not_a_json_schema_is_refused() -> None:
    """A dict that JSON Schema itself rejects fails with the place of the problem."""
    with pytest.raises(ValidationError, match="not a valid JSON Schema at type"):
        Phase(name="report", instructions="x", output_schema={"type": "thing"})


def test_claims_files_needs_an_output_schema() -> None:
    """claims_files names a JSON field, so a work phase cannot have one."""
    with pytest.raises(ValidationError, match="claims_files needs an output_schema"):
        Phase(name="edit", instructions="x", claims_files="files_changed")


@pytest.mark.parametrize("requirement", [{"require_tools": ["Edit"]}, {"require_changes": True}])
def test_an_output_phase_cannot_require_work(requirement: dict[str, Any]) -> None:
    """Tool and change requirements belong to a work phase, not the JSON phase."""
    with pytest.raises(ValidationError, match="move require_tools/require_changes"):
        Phase.model_validate(
            {"name": "report", "instructions": "x", "output_schema": SCHEMA, **requirement}
        )


def test_a_task_knows_its_output_phase_work_phases_and_marker_numbers(
    three_phase_task: Task,
) -> None:
    """Marker numbers are 1-based positions; the output phase is the last phase."""
    edit, verify, summary = three_phase_task.phases

    assert three_phase_task.output_phase is summary
    assert three_phase_task.work_phases == (edit, verify)
    assert [three_phase_task.index_of(p) for p in (edit, verify, summary)] == [1, 2, 3]


def test_a_task_of_work_phases_only_has_no_output_phase() -> None:
    """Without an output_schema anywhere, every phase is a work phase."""
    task = Task(name="t", phases=(Phase(name="a", instructions="x"),))

    assert task.output_phase is None
    assert task.work_phases == task.phases


def test_a_task_needs_at_least_one_phase() -> None:
    """An empty phase list is refused."""
    with pytest.raises(ValidationError, match="phases"):
        Task(name="t", phases=())


def test_phase_names_must_be_unique() -> None:
    """Two phases of the same name are refused, naming the repeated name."""
    phase = Phase(name="edit", instructions="x")
    with pytest.raises(ValidationError, match="repeated: edit"):
        Task(name="t", phases=(phase, phase))


def test_the_output_phase_must_be_last() -> None:
    """An output phase followed by a work phase is refused, naming its position."""
    report = Phase(name="report", instructions="x", output_schema=SCHEMA)
    edit = Phase(name="edit", instructions="x")
    with pytest.raises(ValidationError, match=r"phase 1 \(report\) has an output_schema"):
        Task(name="t", phases=(report, edit))


def test_models_are_frozen() -> None:
    """A task cannot be changed after it was validated."""
    task = Task(name="t", phases=(Phase(name="a", instructions="x"),))
    with pytest.raises(ValidationError, match="frozen"):
        task.name = "other"  # type: ignore[misc]  # mypy knows it is frozen; so should pydantic


def test_unknown_fields_are_refused() -> None:
    """A misspelt field is an error, not silently ignored."""
    with pytest.raises(ValidationError, match="instrucions"):
        Phase.model_validate({"name": "a", "instructions": "x", "instrucions": "y"})


def many_phases(count: int) -> Task:
    """A task of ``count`` work phases and an output phase."""
    work = [Phase(name=f"p{n}", instructions=f"Step {n}.") for n in range(count)]
    output = Phase(name="report", instructions="Report.", output_schema=SCHEMA)
    return Task(name="big", phases=(*work, output))


def test_index_of_finds_a_phase_without_comparing_phases(phase_comparisons: list[object]) -> None:
    """Numbering all 8,000 phases compares none: index_of looks the phase up by identity
    (a tuple search compared phases with pydantic's __eq__ some 32 million times)."""
    task = many_phases(8000)
    numbers = [task.index_of(phase) for phase in task.phases]

    assert numbers == list(range(1, 8002))
    assert phase_comparisons == []


def test_index_of_finds_an_equal_copy_and_follows_replaced_phases() -> None:
    """A copy of a phase is still found; a model_copy with other phases numbers those."""
    task = many_phases(3)
    copy = task.phases[1].model_copy()
    reordered = task.model_copy(update={"phases": task.phases[::-1]})

    assert task.index_of(copy) == 2
    assert [reordered.index_of(p) for p in reordered.phases] == [1, 2, 3, 4]
    assert reordered.index_of(task.phases[0]) == 4


def test_a_task_and_a_pipeline_answer_kind_inputs_and_digest_the_same_way(
    fix_task: Task,
) -> None:
    """Both kinds of definition say what they are, which inputs they take and their
    fingerprint (the SHA-256 of their canonical JSON), so callers need no isinstance."""
    pipeline = Pipeline.model_validate(
        {
            "name": "p",
            "stages": [{"name": "s", "prompt": "Go.", "exit_when": [{"file_exists": "a"}]}],
        }
    )
    for definition, kind in ((fix_task, "task"), (pipeline, "pipeline")):
        assert definition.kind == kind
        assert definition.all_inputs == ()
        assert definition.digest() == json_digest(definition.model_dump(mode="json", by_alias=True))
    renamed = fix_task.model_copy(update={"name": "other"})
    assert renamed.digest() != fix_task.digest()


def _task(**fields: Any) -> Task:
    phase = {"name": "edit", "instructions": "Fix it.", "require_tools": ["Edit", "Write"]}
    return Task.model_validate({"name": "t", "phases": [phase], **fields})


def test_a_toolset_names_the_tools_the_agent_is_offered() -> None:
    """Without one the runtime's default set (None); a read_only task gets the reading tools."""
    assert _task().offered_tools is None
    assert _task(toolset=["Read", "Edit"]).offered_tools == ("Read", "Edit")
    look = Task.model_validate(
        {"name": "t", "read_only": True, "phases": [{"name": "a", "instructions": "Look."}]}
    )
    assert look.offered_tools == ("Read", "Grep", "Glob")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"toolset": ["Read"]}, "phase 1 (edit) requires Edit or Write, which the toolset"),
        ({"toolset": ["Read", "Read", "Edit"]}, "Read"),
        ({"toolset": ["Read", "rm -rf /"]}, "pattern"),
        ({"toolset": ["Edit"], "read_only": True}, "a read_only task is offered reading tools"),
    ],
)
def test_a_toolset_that_cannot_do_the_work_is_refused(fields: dict[str, Any], says: str) -> None:
    """A phase that requires a tool the toolset leaves out could never pass; a read_only task
    cannot be offered a writing tool; names are tool names, each once."""
    if fields.get("read_only"):
        fields = {**fields, "phases": [{"name": "a", "instructions": "Look."}]}
    with pytest.raises(ValidationError, match=re.escape(says)):
        Task.model_validate({"name": "t", "phases": [
            {"name": "edit", "instructions": "Fix it.", "require_tools": ["Edit", "Write"]}
        ], **fields})  # fmt: skip


def test_a_task_without_a_toolset_keeps_its_digest() -> None:
    """The field is left out of a dump when unset: definitions saved before it still match."""
    assert "toolset" not in _task().model_dump()
    assert _task().digest() != _task(toolset=["Edit"]).digest()
