"""Scripted-agent script files that are hostile or careless: a ScriptFileError (exit 2)
naming the file, never a traceback, within bounded memory."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from phasegate import PhasegateError, ScriptFileError
from phasegate._files import MAX_DEPTH
from phasegate.agents.scripted.script import ScriptCursor
from phasegate.testing import Script, load_script
from tests.helpers.fuzz import bounded_memory, hostile_text

yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(["replies", "text", "tools", "when", "Edit", "x"]), inner)
    ),
    max_leaves=40,
)


def script_error(path: Path) -> ScriptFileError:
    """The error loading the script at ``path`` raises."""
    with pytest.raises(ScriptFileError) as caught, bounded_memory():
        load_script(path)
    assert caught.value.exit_code == 2
    assert caught.value.path == path
    return caught.value


def test_a_duplicate_reply_key_is_refused_with_its_lines(tmp_path: Path) -> None:
    """``text:`` twice in one reply would silently drop the first."""
    path = tmp_path / "s.yaml"
    path.write_text("replies:\n  - text: one\n    text: two\n")

    assert script_error(path).problem == (
        "the key 'text' appears twice in one mapping (line 2 and line 3); keep only one of them"
    )


def test_true_where_seconds_belong_is_refused_not_taken_as_one(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("replies:\n  - error: {status: 529, retry_after: true}\n")

    error = script_error(path)

    assert error.field == "replies.0.error.retry_after"
    assert error.problem == "must be a number, not true (true or false)"


@pytest.mark.parametrize(
    ("delay", "problem"),
    [
        ("-1", "Input should be greater than or equal to 0"),
        ("soon", "must be a number"),
        ("true", "must be a number, not true"),
        ("3601", "Input should be less than or equal to 3600"),
    ],
    ids=["negative", "text", "boolean", "past-an-hour"],
)
def test_a_bad_delay_is_refused_naming_the_reply(tmp_path: Path, delay: str, problem: str) -> None:
    """A delay is seconds, a number from 0 to 3600."""
    path = tmp_path / "s.yaml"
    path.write_text(f"replies:\n  - text: hi\n  - text: later\n    delay: {delay}\n")

    error = script_error(path)

    assert error.field == "replies.1.delay"
    assert problem in error.problem


def test_a_delay_is_seconds_whole_or_not_and_defaults_to_none(tmp_path: Path) -> None:
    """0.25 and 2 both load; a reply without one waits 0 s."""
    path = tmp_path / "s.yaml"
    path.write_text("replies:\n  - {text: a, delay: 0.25}\n  - {text: b, delay: 2}\n  - text: c\n")

    assert [reply.delay for reply in load_script(path).replies] == [0.25, 2.0, 0.0]


def test_an_alias_bomb_in_a_script_is_refused(tmp_path: Path) -> None:
    """A billion tool inputs from ten lines: refused at the node budget."""
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 9)]
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(lines) + "\nreplies: [{text: hi}]\n")

    assert "values" in script_error(path).problem


def _only_phasegate_errors(path: Path) -> None:
    with bounded_memory(), contextlib.suppress(PhasegateError):
        load_script(path)


@pytest.mark.fuzz
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile_text, suffix=st.sampled_from([".yaml", ".json"]))
def test_any_text_as_a_script_raises_only_phasegate_errors(
    tmp_path: Path, text: str, suffix: str
) -> None:
    """Arbitrary text, read as YAML or JSON."""
    path = tmp_path / f"script{suffix}"
    path.write_text(text, encoding="utf-8")
    _only_phasegate_errors(path)


@pytest.mark.fuzz
# An example costs up to 1.5 s (YAML nested 2,000 deep, parsed under tracemalloc): a fifth of
# the profile's examples (40 in make test, 1,000 in make fuzz), the depth bound always tried.
@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    max_examples=max(1, settings().max_examples // 5),
)
@given(value=yaml_values, depth=st.integers(min_value=0, max_value=2000), as_yaml=st.booleans())
@example(value={"replies": []}, depth=MAX_DEPTH, as_yaml=True)
@example(value={"replies": []}, depth=MAX_DEPTH + 1, as_yaml=True)
@example(value={"replies": [{"text": "x"}]}, depth=2000, as_yaml=True)
@example(value={"replies": [{"text": "x"}]}, depth=2000, as_yaml=False)
def test_any_shape_of_script_raises_only_phasegate_errors(
    tmp_path: Path, value: object, depth: int, as_yaml: bool
) -> None:
    """Script-like mappings of any shape, nested in lists up to 2,000 deep, YAML or JSON."""
    path = tmp_path / ("script.yaml" if as_yaml else "script.json")
    text = yaml.safe_dump(value) if as_yaml else json.dumps(value)
    path.write_text("[" * depth + text + "]" * depth, encoding="utf-8")
    _only_phasegate_errors(path)


def test_each_branch_keeps_its_own_place_and_an_unnamed_branch_shares_the_main_list() -> None:
    script = Script.model_validate(
        {
            "replies": [
                {"text": "main 1"},
                {"branch": "a", "text": "a 1"},
                {"branch": "a", "text": "a 2"},
                {"text": "main 2"},
            ]
        }
    )
    cursor = ScriptCursor(script)
    said = [
        reply.text if (reply := cursor.next_reply("user", branch=branch)) else None
        for branch in ("a", None, "b", "a", "a")
    ]
    assert said == ["a 1", "main 1", "main 2", "a 2", None]
    assert cursor.exhausted


@pytest.mark.parametrize(
    ("also", "other"),
    [("agent: helper", "agent"), ("branch: api", "branch")],
    ids=["agent", "branch"],
)
def test_a_grader_reply_that_names_a_subagent_or_a_branch_is_refused(
    tmp_path: Path, also: str, other: str
) -> None:
    """A reply answers one conversation: the grader's, a subagent's or a branch's."""
    path = tmp_path / "s.yaml"
    path.write_text(f"replies:\n  - text: hi\n  - grader: true\n    {also}\n    text: met\n")

    error = script_error(path)

    assert error.field == "replies.1"
    assert error.problem.startswith(
        f"a reply with grader: true answers only a grader's conversation, so it cannot also "
        f"have {other}"
    )


@pytest.mark.parametrize(
    ("also", "other"),
    [("agent: helper", "agent"), ("branch: api", "branch"), ("grader: true", "grader")],
    ids=["agent", "branch", "grader"],
)
def test_a_workflow_reply_that_names_another_conversation_is_refused(
    tmp_path: Path, also: str, other: str
) -> None:
    """A reply for a workflow agent answers that conversation only: not also a subagent's,
    a branch's or the grader's."""
    path = tmp_path / "s.yaml"
    path.write_text(f"replies:\n  - text: hi\n  - workflow: edit\n    {also}\n    text: done\n")

    error = script_error(path)

    assert error.field == "replies.1"
    assert error.problem.startswith(
        f"a reply with workflow: 'edit' answers only that workflow agent's conversation, so "
        f"it cannot also have {other}"
    )
