"""A stage with ``protect``: a protected path changed during the stage fails its exit check,
named in the feedback, and the stage passes once the file is put back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from phasegate.phases.pipeline import Pipeline
from phasegate.prompts.stages import stage_prompt
from phasegate.prompts.templates import PromptTemplates
from tests.helpers.pipelines import FinishedPipeline

RunPipeline = Callable[..., FinishedPipeline]

GUARDED: dict[str, Any] = {
    "name": "guarded",
    "stages": [
        {
            "name": "build",
            "prompt": "Write build.txt; do not touch the tests.",
            "exit_when": [{"file_exists": "build.txt"}],
            "protect": ["tests/**", "spec.md"],
        }
    ],
}


def _write(path: str, text: str) -> dict[str, Any]:
    return {"Write": {"file_path": path, "content": text}}


def test_a_stage_prompt_says_what_it_protects() -> None:
    prompt = stage_prompt(Pipeline.model_validate(GUARDED), 0, PromptTemplates())
    assert "nothing matching `tests/**`, `spec.md` is added, modified or deleted" in prompt


def test_a_protected_file_changed_in_a_stage_fails_its_check_until_it_is_put_back(
    run_pipeline: RunPipeline,
) -> None:
    replies = [
        {"tools": [_write("build.txt", "ok\n"), _write("spec.md", "rewritten\n")]},
        {"when": "tool_result", "text": "Built."},
        {"when": "user", "contains": "spec.md (protected by `spec.md`)",
         "tools": [_write("spec.md", "the spec\n")]},
        {"when": "tool_result", "text": "Put back."},
    ]  # fmt: skip
    run = run_pipeline(GUARDED, replies, files={"spec.md": "the spec\n"})
    assert run.report.verdict == "accepted"
    checked = [e.fields for e in run.events if e.event == "stage.checked"]
    assert [(c["passed"], c["failed"]) for c in checked] == [(False, ["protect"]), (True, [])]


def test_a_stage_that_leaves_a_protected_file_changed_is_rejected(
    run_pipeline: RunPipeline,
) -> None:
    replies = [
        {"tools": [_write("build.txt", "ok\n"), _write("tests/new_test.py", "x = 1\n")]},
        {"when": "tool_result", "text": "Built."},
    ]
    run = run_pipeline(GUARDED, replies)
    assert run.report.verdict == "rejected"


def test_a_stage_without_protect_dumps_as_before_so_saved_digests_still_match() -> None:
    plain = {**GUARDED, "stages": [{k: v for k, v in GUARDED["stages"][0].items()
                                    if k != "protect"}]}  # fmt: skip
    assert "protect" not in Pipeline.model_validate(plain).model_dump()["stages"][0]
