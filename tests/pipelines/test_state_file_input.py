"""A pipeline state file that is hostile or damaged: always a PipelineStateError (exit 2)
saying what is wrong, never a traceback, within bounded memory."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phasegate.errors import PhasegateError, PipelineStateError
from phasegate.pipelines.state import load_baseline, load_state, state_path
from tests.helpers.fuzz import bounded_memory, hostile_text

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=40,
)


def write_state(workdir: Path, text: str) -> None:
    """Put ``text`` where the state file (and the stage baseline) live."""
    path = state_path(workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    (path.parent / "pipeline-baseline.json").write_text(text, encoding="utf-8")


def state_error(workdir: Path) -> PipelineStateError:
    """The error loading the state of ``workdir`` raises."""
    with pytest.raises(PipelineStateError) as caught, bounded_memory():
        load_state(workdir)
    assert caught.value.exit_code == 2
    return caught.value


def test_a_state_file_nested_a_hundred_thousand_deep_is_refused(tmp_path: Path) -> None:
    """The RecursionError of old is a sentence naming the file and how to go on."""
    write_state(tmp_path, '{"stages": ' + "[" * 100_000 + "]" * 100_000 + "}")

    error = state_error(tmp_path)

    assert error.path == state_path(tmp_path)
    assert "values nest more than 64 levels deep" in error.problem
    assert error.option == "restart"


def test_a_duplicate_key_in_the_state_file_is_refused(tmp_path: Path) -> None:
    """Two values for the current stage: which one is true is unknown."""
    write_state(tmp_path, '{"stage": 0, "stage": 3}')
    assert "the key 'stage' appears twice in one object" in state_error(tmp_path).problem


def test_a_huge_number_in_the_state_file_is_refused(tmp_path: Path) -> None:
    """Past Python's digit limit: not valid JSON for phasegate."""
    write_state(tmp_path, '{"stage": ' + "9" * 5000 + "}")
    assert state_error(tmp_path).problem.startswith("not valid JSON (")


def _only_phasegate_errors(workdir: Path) -> None:
    with bounded_memory():
        for load in (load_state, load_baseline):
            with contextlib.suppress(PhasegateError):
                load(workdir)


@pytest.mark.fuzz
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile_text)
def test_any_text_as_a_state_file_raises_only_phasegate_errors(tmp_path: Path, text: str) -> None:
    """Broken JSON, odd code points, empty files: a PipelineStateError at worst."""
    write_state(tmp_path, text)
    _only_phasegate_errors(tmp_path)


@pytest.mark.fuzz
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, depth=st.integers(min_value=0, max_value=2000))
def test_any_json_value_as_a_state_file_raises_only_phasegate_errors(
    tmp_path: Path, value: object, depth: int
) -> None:
    """Any JSON shape, wrapped in lists up to 2,000 deep: a PipelineStateError at worst."""
    write_state(tmp_path, "[" * depth + json.dumps(value) + "]" * depth)
    _only_phasegate_errors(tmp_path)
