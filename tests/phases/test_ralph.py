"""Ralph's state file (phasegate.phases.ralph) and the loop it describes (phasegate.phases.loop)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.errors import LoopStateError, PhasegateError, UsageError
from phasegate.phases.checks import Said
from phasegate.phases.loop import UNLIMITED_ITERATIONS, make_loop
from phasegate.phases.ralph import read_ralph_state

# What Ralph's setup script writes (its session_id empty outside a session).
SETUP_WRITES = """---
active: true
iteration: 1
session_id:
max_iterations: 20
completion_promise: "TASK COMPLETE"
started_at: "2026-01-01T00:00:00Z"
---

Build a REST API for todos.
Output <promise>TASK COMPLETE</promise> when done.
"""


def state_file(tmp_path: Path, text: str) -> Path:
    """``text`` as .claude/ralph-loop.local.md."""
    path = tmp_path / ".claude" / "ralph-loop.local.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_the_file_ralph_s_setup_writes_reads_as_its_prompt_promise_and_limit(
    tmp_path: Path,
) -> None:
    """Keys the hook does not read are left alone; the body is the prompt."""
    state = read_ralph_state(state_file(tmp_path, SETUP_WRITES))
    assert state.prompt == (
        "Build a REST API for todos.\nOutput <promise>TASK COMPLETE</promise> when done."
    )
    assert (state.promise, state.iteration, state.max_iterations) == ("TASK COMPLETE", 1, 20)
    assert state.iterations_left == 20


@pytest.mark.parametrize(
    ("line", "promise"),
    [
        ('completion_promise: "C:\\Done"', "C:\\Done"),
        ('completion_promise: "say "ok" now"', 'say "ok" now'),
        ('completion_promise: "tab\\tstays"', "tab\\tstays"),
        ("completion_promise:   DONE: really  ", "DONE: really"),
        ("completion_promise: 'single'", "'single'"),
        ("completion_promise: null", None),
        ("completion_promise:", None),
    ],
    ids=["backslash", "inner-quotes", "escape-not-read", "unquoted", "single-quotes", "null",
         "empty"],
)  # fmt: skip
def test_the_promise_is_read_as_ralph_s_hook_reads_it(
    tmp_path: Path, line: str, promise: str | None
) -> None:
    """After `completion_promise:` and its spaces, one pair of double quotes removed, nothing
    else interpreted: Ralph writes the promise unescaped, and its hook compares it as is."""
    text = SETUP_WRITES.replace('completion_promise: "TASK COMPLETE"', line)
    assert read_ralph_state(state_file(tmp_path, text)).promise == promise


def test_a_loop_in_progress_has_only_the_iterations_its_limit_leaves(tmp_path: Path) -> None:
    """iteration 18 of 20: three left (18, 19, 20); no limit: None."""
    text = SETUP_WRITES.replace("iteration: 1", "iteration: 18")
    assert read_ralph_state(state_file(tmp_path, text)).iterations_left == 3
    text = SETUP_WRITES.replace("max_iterations: 20", "max_iterations: 0")
    assert read_ralph_state(state_file(tmp_path, text)).iterations_left is None


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("no front matter\n", "line 1", "must be '---'"),
        ("---\niteration: 1\n", "line 1", "never closed"),
        (SETUP_WRITES.replace("iteration: 1", "iteration: 1.5"), "line 3 (iteration)", "1.5"),
        (SETUP_WRITES.replace("max_iterations: 20\n", ""), "line 1 (max_iterations)", "missing"),
        (SETUP_WRITES.replace("max_iterations: 20", "max_iterations: -2"),
         "line 5 (max_iterations)", "whole number"),
        (SETUP_WRITES.split("---\n\n")[0] + "---\n\n\n", "line 9", "no prompt"),
        ("---\niteration: [\nmax_iterations: 3\n---\nx\n", "line 2 (iteration)", "'['"),
        (SETUP_WRITES.replace("iteration: 1", "iteration: " + "9" * 5000), "line 3 (iteration)",
         "at most 18 digits"),
    ],
    ids=["no-fence", "unclosed", "fraction", "missing", "negative", "no-prompt", "not-a-number",
         "huge"],
)  # fmt: skip
def test_a_broken_state_file_names_the_line_and_is_left_as_it_was(
    tmp_path: Path, text: str, field: str, problem: str
) -> None:
    """Exit code 2 (a usage error), the file unchanged and still there."""
    path = state_file(tmp_path, text)
    with pytest.raises(LoopStateError) as caught:
        read_ralph_state(path)
    assert caught.value.exit_code == 2
    assert caught.value.field == field
    assert problem in caught.value.problem
    assert path.read_text() == text


def test_a_loop_is_one_stage_gated_on_said_with_the_iteration_limit_as_its_budget() -> None:
    """max_iterations 30 → 29 feedback rounds, past what a pipeline file may ask for."""
    loop = make_loop(prompt="Fix it.", promise=" ALL  DONE ", max_iterations=30)
    (stage,) = loop.pipeline().stages
    assert (stage.exit_when, stage.on_fail.retry) == ((Said(text="ALL DONE"),), 29)
    unbounded = make_loop(prompt="Fix it.", promise="DONE", max_iterations=None)
    assert unbounded.pipeline().stages[0].on_fail.retry == UNLIMITED_ITERATIONS - 1


def test_a_loop_prompt_holding_a_template_variable_runs_as_written() -> None:
    """A loop declares no inputs: {{ name }} is literal text, never a load error."""
    loop = make_loop(
        prompt="Fill the template: Hello {{ name }}!", promise="DONE", max_iterations=3
    )
    assert loop.pipeline().stages[0].prompt == "Fill the template: Hello {{ name }}!"


@pytest.mark.parametrize(
    ("settings", "option"),
    [
        ({"prompt": "  ", "promise": "DONE", "max_iterations": 3}, "prompt"),
        ({"prompt": "x", "promise": "<promise>DONE</promise>", "max_iterations": 3}, "promise"),
        ({"prompt": "x", "promise": "DONE", "max_iterations": 0}, "max_iterations"),
    ],
)
def test_a_loop_that_cannot_run_is_a_usage_error_naming_its_setting(
    settings: dict[str, object], option: str
) -> None:
    """The error's option names the setting; the message says what is wrong."""
    with pytest.raises(UsageError) as caught:
        make_loop(**settings)  # type: ignore[arg-type]  # deliberately wrong values
    assert caught.value.option == option


@pytest.mark.fuzz
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(front=st.one_of(hostile_text, st.text(alphabet='iteraxm_nspcol: "\\\n0123-', max_size=300)))
def test_any_front_matter_reads_or_fails_with_a_phasegate_error(tmp_path: Path, front: str) -> None:
    """Only PhasegateError subclasses escape, within the memory bound."""
    path = state_file(tmp_path, f"---\n{front}\n---\nDo it.\n")
    with bounded_memory(), contextlib.suppress(PhasegateError):
        read_ralph_state(path)
