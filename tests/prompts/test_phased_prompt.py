"""The phased prompt and its unstructured baseline (phasegate.prompts.phased)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.phases.markers import find_markers, marker_line
from phasegate.phases.model import Phase, Task
from phasegate.prompts.phased import phased_prompt, unstructured_prompt
from phasegate.prompts.templates import PromptTemplates

pytestmark = pytest.mark.usefixtures("bundled_prompts")


def position(text: str, piece: str) -> int:
    """Where ``piece`` starts in ``text``; fails the test when it is absent."""
    assert piece in text, f"{piece!r} not in prompt"
    return text.index(piece)


def test_every_phase_appears_once_in_task_order(three_phase_task: Task) -> None:
    """Phase headings come in order, the output phase last and tied to the phase before it."""
    prompt = phased_prompt(three_phase_task)

    headings = [
        "## PHASE 1: EDIT\n",
        "## PHASE 2: VERIFY\n",
        "## PHASE 3: SUMMARY (ONLY AFTER PHASE 2 IS COMPLETE)\n",
    ]
    places = [position(prompt, heading) for heading in headings]
    assert places == sorted(places)
    assert prompt.count("## PHASE ") == 3


def test_each_phase_block_holds_its_own_instructions_and_requirements(
    three_phase_task: Task,
) -> None:
    """Instructions and 'Required:' lines sit under their own phase heading."""
    prompt = phased_prompt(three_phase_task)
    edit_at, verify_at, summary_at = (position(prompt, f"## PHASE {n}: ") for n in (1, 2, 3))

    assert edit_at < position(prompt, "Find the code-injection vulnerability") < verify_at
    assert edit_at < position(prompt, "at least one successful call of Edit.") < verify_at
    assert edit_at < position(prompt, "files on disk really change") < verify_at
    assert verify_at < position(prompt, "Run the tests with Bash.") < summary_at
    assert verify_at < position(prompt, "at least one successful call of Bash.") < summary_at
    assert summary_at < position(prompt, "Report what you changed.")


def test_each_work_phase_marker_is_printed_exactly_as_a_line_of_its_own(
    three_phase_task: Task,
) -> None:
    """The exact marker lines are in the prompt, and they are the only markers in it."""
    lines = phased_prompt(three_phase_task).splitlines()

    assert "PHASE 1 COMPLETE: Files have been edited" in lines
    assert "PHASE 2 COMPLETE: Tests pass" in lines
    assert [m.index for m in find_markers("\n".join(lines))] == [1, 2]


def test_the_ordering_rule_is_stated(fix_task: Task) -> None:
    """The prompt says phases go strictly in order, each starting after the previous one."""
    prompt = phased_prompt(fix_task)

    assert "You MUST complete this task in 2 phases, strictly in order." in prompt
    assert "Phase N+1 starts only\nafter phase N is marked complete." in prompt
    assert "mark that phase complete again when you finish it" in prompt


def test_a_one_phase_task_is_said_to_have_one_phase() -> None:
    """The count reads as English: "in 1 phase", not "in 1 phases"."""
    task = Task.model_validate(
        {"name": "one", "phases": [{"name": "edit", "instructions": "Edit app.py."}]}
    )

    assert "You MUST complete this task in 1 phase, strictly in order." in phased_prompt(task)


@pytest.mark.parametrize(
    ("completion", "says_marker", "says_tools"),
    [("marker", True, False), ("tool", False, True), ("either", True, True)],
)
def test_the_prompt_offers_the_completion_ways_the_task_counts(
    fix_task: Task, completion: str, says_marker: bool, says_tools: bool
) -> None:
    """Marker mode shows only the marker line; tool mode only the tools; either shows both."""
    prompt = phased_prompt(fix_task.model_copy(update={"completion": completion}))

    assert (marker_line(1, "Files have been edited") in prompt.splitlines()) == says_marker
    assert ("call the `phase_complete` tool with phase=1" in prompt) == says_tools
    assert (
        "calling the `submit_summary` tool" in prompt or "call the `submit_summary` tool" in prompt
    ) == says_tools
    assert ("```json fenced block" in prompt) == says_marker


def test_a_structured_output_phase_asks_for_the_structured_output_tool(fix_task: Task) -> None:
    """With structured_output the answer goes through StructuredOutput, not text or tools."""
    output = fix_task.phases[1].model_copy(update={"structured_output": True})
    task = fix_task.model_copy(update={"phases": (fix_task.phases[0], output)})

    prompt = phased_prompt(task)

    assert "through the `StructuredOutput` tool" in prompt
    assert "submit_summary" not in prompt


def test_the_schema_and_the_json_rule_come_after_the_last_marker(three_phase_task: Task) -> None:
    """The JSON Schema and the 'JSON only after the last marker' rule follow the last marker."""
    prompt = phased_prompt(three_phase_task)
    schema = three_phase_task.phases[-1].output_schema
    last_marker = position(prompt, "PHASE 2 COMPLETE: Tests pass")

    assert position(prompt, json.dumps(schema, indent=2)) > last_marker
    rule = (
        "- Give the JSON answer only in phase 3, after phase 2 is marked complete; never earlier."
    )
    assert position(prompt, rule) > last_marker
    assert position(prompt, "```json") > last_marker


def test_the_claims_rule_names_the_claims_field(fix_task: Task) -> None:
    """With claims_files, the prompt says which field lists the changed files."""
    assert "List in `files_changed` every file you changed" in phased_prompt(fix_task)


def test_the_task_description_is_included_when_given(fix_task: Task) -> None:
    """The description sits under the title; without one no empty paragraph is left."""
    without = Task(name="t", phases=(Phase(name="a", instructions="Do a."),))

    assert phased_prompt(fix_task).startswith(
        "# Task: fix-vulnerability\n\nFix the code-injection bug in app.py.\n\n"
    )
    assert "\n\n\n" not in phased_prompt(without)
    assert phased_prompt(without).startswith("# Task: t\n\nYou MUST complete")


def test_a_task_of_work_phases_only_has_no_json_in_its_prompt() -> None:
    """Without an output phase there is no schema and no JSON rule."""
    task = Task(name="t", phases=(Phase(name="a", instructions="Do a."),))

    prompt = phased_prompt(task)

    assert "```json" not in prompt
    assert "Give the JSON answer only" not in prompt
    assert marker_line(1, "done") in prompt.splitlines()


def test_an_output_only_task_does_not_mention_a_phase_zero() -> None:
    """A task that is just the JSON phase has no earlier phase to wait for."""
    task = Task(
        name="t",
        phases=(Phase(name="answer", instructions="Answer.", output_schema={"type": "object"}),),
    )

    prompt = phased_prompt(task)

    assert "## PHASE 1: ANSWER\n" in prompt
    assert "PHASE 0" not in prompt
    assert "Give the JSON answer only" not in prompt


def test_the_unstructured_prompt_asks_for_the_same_work_without_phases(
    three_phase_task: Task,
) -> None:
    """Every instruction and the schema are there; no PHASE scaffolding and no marker."""
    prompt = unstructured_prompt(three_phase_task)

    for phase in three_phase_task.phases:
        assert phase.instructions.strip() in prompt
    assert json.dumps(three_phase_task.phases[-1].output_schema, indent=2) in prompt
    assert "PHASE" not in prompt
    assert "COMPLETE:" not in prompt
    assert find_markers(prompt) == []
    assert prompt.startswith("# Task: fix-vulnerability\n")


def test_the_unstructured_prompt_keeps_instruction_order(three_phase_task: Task) -> None:
    """Work instructions come in phase order, the output request last."""
    prompt = unstructured_prompt(three_phase_task)

    places = [position(prompt, p.instructions.strip()) for p in three_phase_task.phases]
    assert places == sorted(places)


def test_an_unstructured_prompt_without_an_output_phase_asks_for_no_json() -> None:
    """No output phase, no JSON request."""
    task = Task(name="t", phases=(Phase(name="a", instructions="Do a."),))

    assert "```json" not in unstructured_prompt(task)
    assert "Do a." in unstructured_prompt(task)


def test_prompts_end_with_exactly_one_newline_and_no_trailing_spaces(fix_task: Task) -> None:
    """The tidy step leaves clean text for both prompts."""
    for prompt in (phased_prompt(fix_task), unstructured_prompt(fix_task)):
        assert prompt.endswith("\n")
        assert not prompt.endswith("\n\n")
        assert all(line == line.rstrip() for line in prompt.splitlines())


def test_an_overridden_template_is_used_while_the_others_stay_bundled(
    fix_task: Task, tmp_path: Path
) -> None:
    """A prompts dir with only work_phase.md changes that block; the rest is the bundled text."""
    (tmp_path / "work_phase.md").write_text(
        "### Step $index of the job ($name_upper)\n$instructions\nWhen done, say:\n$marker_line\n",
        encoding="utf-8",
    )

    prompt = phased_prompt(fix_task, PromptTemplates(tmp_path))

    assert "### Step 1 of the job (EDIT)" in prompt
    assert "## PHASE 1: EDIT" not in prompt
    assert "PHASE 1 COMPLETE: Files have been edited" in prompt.splitlines()
    assert "## PHASE 2: SUMMARY (ONLY AFTER PHASE 1 IS COMPLETE)" in prompt
    assert "## Rules" in prompt


def test_the_prompt_of_eight_thousand_phases_compares_no_phases(
    phase_comparisons: list[object],
) -> None:
    """Building the prompt is linear in the phases: no phase is compared with another
    (each lookup of a phase's number compared it with every phase before it: 99 s for
    ``check`` on 8,000 phases)."""
    phases = tuple(Phase(name=f"p{n}", instructions=f"Step {n}.") for n in range(8000))
    task = Task(name="big", phases=phases)
    prompt = phased_prompt(task)

    assert "## PHASE 8000: P7999" in prompt
    assert phase_comparisons == []


def test_the_phased_prompt_lists_the_protected_globs_among_its_rules(
    three_phase_task: Task,
) -> None:
    task = three_phase_task.model_copy(update={"protect": ("tests/**", "poetry.lock")})
    rules = phased_prompt(task)[position(phased_prompt(task), "## Rules") :]
    assert "- Never add, change or delete anything matching `tests/**`, `poetry.lock`" in rules


def test_the_unstructured_prompt_names_the_protected_globs_too(three_phase_task: Task) -> None:
    task = three_phase_task.model_copy(update={"protect": ("tests/**",)})
    assert "Never add, change or delete anything matching `tests/**`" in unstructured_prompt(task)


def test_a_task_without_protect_is_told_nothing_about_protected_paths(
    three_phase_task: Task,
) -> None:
    assert "protected" not in phased_prompt(three_phase_task)
    assert "protected" not in unstructured_prompt(three_phase_task)
