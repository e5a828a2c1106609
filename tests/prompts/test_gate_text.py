"""Which characters of a prompt the gate wrote: the scaffolding, never the task's own words."""

from __future__ import annotations

from tests.helpers.scenarios import EXAMPLE

from phasegate import load_task
from phasegate.phases.pipeline import load_pipeline
from phasegate.prompts.gate_text import gate_characters, pipeline_words, task_words
from phasegate.prompts.phased import phased_prompt
from phasegate.prompts.stages import stage_prompt
from phasegate.prompts.templates import PromptTemplates

PRD = EXAMPLE.parent / "prd-to-code"


def test_each_own_word_is_taken_out_once_longest_first() -> None:
    """A name inside an instruction goes with the instruction, not twice."""
    text = "Heading: fix the parser. Then run the tests."
    own = ["parser", "fix the parser", ""]
    assert gate_characters(text, own) == len("Heading: . Then run the tests.")
    assert gate_characters("no own words here", ["absent"]) == len("no own words here")


def test_the_gates_share_of_a_phased_prompt_does_not_grow_with_the_tasks_words() -> None:
    """Ten times the description and instructions: the prompt grows, the gate's share not."""
    task = load_task(EXAMPLE / "task.yaml")
    longer = task.model_copy(
        update={
            "description": (task.description or "") * 10,
            "phases": tuple(
                phase.model_copy(update={"instructions": phase.instructions * 10})
                for phase in task.phases
            ),
        }
    )
    short, long = phased_prompt(task), phased_prompt(longer)
    assert len(long) > len(short) + 500
    assert gate_characters(long, task_words(longer)) == gate_characters(short, task_words(task))
    assert 0 < gate_characters(short, task_words(task)) < len(short)


def test_a_stage_prompt_counts_the_stage_scaffolding_not_the_pipelines_words() -> None:
    pipeline = load_pipeline(PRD / "pipeline.yaml")
    prompt = stage_prompt(pipeline, 0, PromptTemplates())
    own = (pipeline.stages[0].prompt or "").strip()
    assert own and own in prompt
    gate = gate_characters(prompt, pipeline_words(pipeline))
    assert 0 < gate <= len(prompt) - len(own)
