"""The test kit reads the requests of every Claude Code release in the tested window.

The fixtures in ``tests/fixtures/cli_requests/`` are the request bodies each CLI version
really sent in one gated run (recorded by ``tools/record_cli_requests.py``): the model
worked, stopped without its marker, and got the gate's feedback through the Stop hook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import _requests

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cli_requests"
VERSIONS = sorted(path.stem for path in FIXTURES.glob("*.json"))


def _recorded(version: str) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = json.loads((FIXTURES / f"{version}.json").read_text())[
        "requests"
    ]
    return requests


def _feedback_requests(version: str) -> list[tuple[str, str]]:
    """Each request's (last, text), for the requests that answer the model's stops."""
    classified = [_requests.classify(body) for body in _recorded(version)]
    return [(last, text) for last, text in classified if last == "user"]


def test_both_delivery_formats_are_recorded() -> None:
    """Plain text (2.1.330) and the reminder wrapping (2.1.332) both have a recording."""
    assert {"2.1.330", "2.1.332"} <= set(VERSIONS)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_stop_hooks_feedback_reads_as_a_user_instruction(version: str) -> None:
    """Whatever wraps it, the gate's feedback is a user turn whose text is the hook's own."""
    feedback = _feedback_requests(version)
    assert feedback, f"{version}: no request read as a new instruction"
    for _last, text in feedback:
        assert text.startswith("Stop hook feedback:\nThe gate checked your work")
        assert "marker_missing" in text
        # The CLI's preamble around the hook output is its own, not the hook's words.
        assert "The text below is the output of a hook" not in text
        assert "<system-reminder>" not in text


def test_the_feedback_text_is_the_same_in_every_recorded_version() -> None:
    """A script's ``contains:`` matches the same text on every CLI of the window."""
    first_feedback = {version: _feedback_requests(version)[0][1] for version in VERSIONS}
    assert len(set(first_feedback.values())) == 1, first_feedback


@pytest.mark.parametrize("version", VERSIONS)
def test_the_first_prompt_leaves_out_the_clis_own_reminders(version: str) -> None:
    """The first request is the task's prompt, without the CLI's attribution reminder."""
    last, text = _requests.classify(_recorded(version)[0])
    assert last == "start"
    assert text.startswith("# Task: record")
    assert "system-reminder" not in text
    assert "Co-Authored-By" not in text


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_results_and_the_workdir_are_read(version: str) -> None:
    """The requests after tool calls carry their results; the work directory is found."""
    bodies = _recorded(version)
    kinds = [_requests.classify(body)[0] for body in bodies]
    assert kinds[:3] == ["start", "tool_result", "tool_result"]
    assert "a draft note" in _requests.classify(bodies[1])[1]
    assert all(_requests.workdir(body) == "/work" for body in bodies)


def test_a_reminder_without_hook_output_is_dropped_and_text_around_it_is_kept() -> None:
    """Only a reminder that carries a hook's output contributes its text."""
    body = {
        "tools": [],
        "messages": [
            {"role": "user", "content": "start"},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
            {
                "role": "user",
                "content": "<system-reminder>\nTodo list is empty.\n</system-reminder>\n"
                "Please also update the docs.",
            },
        ],
    }
    assert _requests.classify(body) == ("user", "Please also update the docs.")
