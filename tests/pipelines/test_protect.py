"""A stage with ``protect``: a protected path changed during the stage fails its exit check,
named in the feedback, and the stage passes once the file is put back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasegate import RunEvent
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


def _behind_the_back(changes: list[tuple[str, str | None]]) -> Callable[[RunEvent], None]:
    """An event sink that, at each refused write, makes the next of ``changes`` on disk (a
    path and its new text, None to delete), as a Bash command would: past any hook."""
    workdir: list[Path] = []

    def sink(event: RunEvent) -> None:
        if event.event == "pipeline.started":
            workdir.append(Path(event.fields["workdir"]))
        elif event.event == "tool.refused" and changes:
            path, text = changes.pop(0)
            target = workdir[0] / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)

    return sink


def test_a_protected_file_changed_in_a_stage_fails_its_check_until_it_is_put_back(
    run_pipeline: RunPipeline,
) -> None:
    """The Writes are refused before they run; the same changes made past the hook are
    caught by the stage's check, and the stage passes once the file is put back."""
    replies = [
        {"tools": [_write("build.txt", "ok\n"), _write("spec.md", "rewritten\n")]},
        {"when": "tool_error", "text": "Built."},
        {"when": "user", "contains": "spec.md (protected by `spec.md`)",
         "tools": [_write("spec.md", "the spec\n")]},
        {"when": "tool_error", "text": "Put back."},
    ]  # fmt: skip
    sink = _behind_the_back([("spec.md", "rewritten\n"), ("spec.md", "the spec\n")])
    run = run_pipeline(GUARDED, replies, files={"spec.md": "the spec\n"}, on_event=sink)
    assert run.report.verdict == "accepted"
    checked = [e.fields for e in run.events if e.event == "stage.checked"]
    assert [(c["passed"], c["failed"]) for c in checked] == [(False, ["protect"]), (True, [])]
    assert [r.tool for r in run.report.stages[0].refusals] == ["Write", "Write"]


def test_a_stage_that_leaves_a_protected_file_changed_is_rejected(
    run_pipeline: RunPipeline,
) -> None:
    replies = [
        {"tools": [_write("build.txt", "ok\n"), _write("tests/new_test.py", "x = 1\n")]},
        {"when": "tool_error", "text": "Built."},
    ]
    sink = _behind_the_back([("tests/new_test.py", "x = 1\n")])
    run = run_pipeline(GUARDED, replies, on_event=sink)
    assert run.report.verdict == "rejected"


def test_a_stage_without_protect_dumps_as_before_so_saved_digests_still_match() -> None:
    plain = {**GUARDED, "stages": [{k: v for k, v in GUARDED["stages"][0].items()
                                    if k != "protect"}]}  # fmt: skip
    assert "protect" not in Pipeline.model_validate(plain).model_dump()["stages"][0]
