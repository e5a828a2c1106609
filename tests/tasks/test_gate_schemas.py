"""The gate and output schemas with $ref: a loaded schema judges answers on its own, and a
schema that cannot be applied never crashes a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate import Runner, TaskFileError
from phasegate.phases.loading import load_task
from phasegate.phases.model import Phase, Task
from phasegate.tasks.gate import PhaseGate
from phasegate.testing import Script, ScriptedAgent
from phasegate.validators.output import check_placeholders, check_schema

SUMMARY_REF_TASK = """\
name: summary-by-ref
phases:
  - name: summary
    instructions: Say what you did.
    output_schema: {$ref: "schemas/summary.json"}
"""
SUMMARY_SCHEMA = {
    "type": "object",
    "required": ["description"],
    "properties": {"description": {"$ref": "text.json"}},
}


@pytest.fixture
def ref_task(tmp_path: Path) -> Task:
    """A task whose output schema is a $ref to a file that refers on to another."""
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "summary.json").write_text(json.dumps(SUMMARY_SCHEMA))
    (tmp_path / "schemas" / "text.json").write_text('{"type": "string", "minLength": 10}')
    (tmp_path / "task.yaml").write_text(SUMMARY_REF_TASK)
    return load_task(tmp_path / "task.yaml")


def run_answer(task: Task, workdir: Path, answer: object) -> tuple[str, list[str]]:
    """Run ``task`` with a model that answers ``answer``: the verdict and issue codes."""
    script = Script.model_validate({"replies": [{"text": json.dumps(answer)}]})
    report = Runner(ScriptedAgent(script), mode="single-query").run_sync(task, workdir)
    return report.verdict, [issue.code.value for issue in report.issues]


def test_an_answer_is_judged_against_a_schema_split_over_files(
    ref_task: Task, tmp_path: Path
) -> None:
    """The run that died with Unresolvable: a good answer is accepted, a bad one rejected."""
    work = tmp_path / "work"
    work.mkdir()

    assert run_answer(ref_task, work, {"description": "Fixed the eval call."}) == ("accepted", [])
    assert run_answer(ref_task, work, {"description": "short"}) == (
        "rejected",
        ["schema_violation"],
    )


def unloaded_task(schema: dict[str, object]) -> Task:
    """A task put together without validation, so its schema was never checked."""
    phase = Phase.model_construct(name="out", instructions="x", output_schema=schema)
    return Task.model_construct(name="t", phases=(phase,), completion="either", on_reject="keep")


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"$ref": "missing.json"}, "$ref 'missing.json' cannot be resolved"),
        ({"$ref": "#"}, "$ref '#' leads back to where it started"),
        ({"type": 5}, "not a valid JSON Schema at type"),
    ],
)
def test_the_gate_refuses_a_schema_that_cannot_be_applied_before_any_run(
    schema: dict[str, object], problem: str
) -> None:
    """A usage error naming the phase's schema, not a traceback halfway through a run."""
    with pytest.raises(TaskFileError) as caught:
        PhaseGate(unloaded_task(schema), workdir="/w")

    assert caught.value.exit_code == 2
    assert caught.value.field == "phases.0.output_schema"
    assert problem in caught.value.problem


def test_a_schema_that_fails_while_applied_becomes_an_issue_not_an_exception() -> None:
    """Whatever the schema library raises, the rule reports it as an issue."""
    issues = check_schema(2, {"a": 1}, {"$ref": "https://example.invalid/s.json"})

    assert [issue.code.value for issue in issues] == ["schema_violation"]
    assert issues[0].phase == 2
    assert "could not be checked against the output schema" in issues[0].message


def test_an_answer_nested_too_deeply_to_check_is_an_issue_of_the_answer() -> None:
    """A recursive schema and a very deep answer: an issue, not a RecursionError."""
    tree = {"type": "object", "properties": {"c": {"$ref": "#"}}}
    value: dict[str, object] = {}
    for _ in range(5000):
        value = {"c": value}

    issues = check_schema(1, value, tree)
    placeholders = check_placeholders(1, value, tree)

    assert [issue.message for issue in issues] == [
        "The answer could not be checked against the output schema: it nests too deeply to "
        "be checked."
    ]
    assert placeholders == []


def test_placeholders_are_found_through_a_ref_to_an_embedded_file(ref_task: Task) -> None:
    """The placeholder rule follows refs into the files embedded at load time: an empty
    string counts as a placeholder only where that file's schema requires the field."""
    schema = ref_task.phases[0].output_schema
    assert schema is not None

    issues = check_placeholders(1, {"description": ""}, schema)

    assert [(issue.code.value, issue.field) for issue in issues] == [
        ("placeholder_value", "$.description")
    ]
