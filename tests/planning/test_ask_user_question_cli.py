"""The relay of a question with more options than AskUserQuestion shows, through the real
Claude Code CLI: a scripted model calls the tool with what the plan says to ask, a person
(the SDK's permission callback, the way an SDK host answers the tool) picks, and the answers
the CLI returns, fed back to the planner, give the original labels.

What the CLI is relied on for (docs/claude-code.md): it checks the tool's input before
anyone is asked (more than 4 options is an InputValidationError); with a permission callback
the answers the host puts in the input are the tool's result, ``tool_use_result``
``{"questions", "answers"}``; without one the tool is disabled in a non-interactive session.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate import Plan, load_task, plan_task
from phasegate.planning.ask_user_question import TOOL_OPTIONS, TOOL_QUESTIONS
from phasegate.testing import Script
from tests.helpers.inputs import PREFLIGHTS_EXAMPLE

pytestmark = pytest.mark.cli

TASK = load_task(PREFLIGHTS_EXAMPLE / "task.yaml")
CATEGORY = "What type of change is this?"


def planned_steps(person: dict[str, str], workdir: Path) -> list[dict[str, Any]]:
    """The AskUserQuestion inputs the planner gives, turn after turn, when ``person``
    answers each question (by its text) as it says: what the scripted model will send."""
    steps: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    plan = plan_task(TASK, workdir)
    while plan.ask_user_question is not None:
        asked = plan.ask_user_question
        steps.append(asked)
        turns.append(
            {"answers": {q["question"]: person[q["question"]] for q in asked["questions"]}}
        )
        plan = plan_task(TASK, workdir, responses=turns)
    return steps


def ask_through_the_cli(
    steps: list[dict[str, Any]],
    person: dict[str, str],
    start_server: Callable[..., Any],
    cli_path: Path,
    workdir: Path,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """One CLI session whose model calls AskUserQuestion with each of ``steps``; ``person``
    answers through the permission callback. Gives what the callback was asked, what the
    tool returned (``tool_use_result``), in order, and the tool errors the model got."""
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        PermissionResultAllow,
        UserMessage,
    )

    script = Script.model_validate(
        {
            "replies": [
                *({"tools": [{"AskUserQuestion": step}]} for step in steps),
                {"text": "Asked."},
            ]
        }
    )
    server = start_server(script)
    asked: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    async def answer(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        if name != "AskUserQuestion":
            return PermissionResultAllow()
        asked.append(tool_input)
        answers = {q["question"]: person[q["question"]] for q in tool_input["questions"]}
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    async def session() -> None:
        options = ClaudeAgentOptions(cwd=str(workdir), env=server.env(), cli_path=str(cli_path),
                                     can_use_tool=answer, setting_sources=[])  # fmt: skip
        async with ClaudeSDKClient(options) as client:
            await client.query("Ask the person.")
            async for message in client.receive_response():
                if isinstance(message, UserMessage) and isinstance(message.tool_use_result, dict):
                    results.append(message.tool_use_result)

    asyncio.run(asyncio.wait_for(session(), timeout=120))
    assert server.unmatched == []
    errors = [
        json.dumps(block.get("content"))
        for request in server.main_requests()
        for block in _last_blocks(request.body)
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    return asked, results, errors


def _last_blocks(body: Any) -> list[dict[str, Any]]:
    messages = body.get("messages") if isinstance(body, dict) else None
    content = messages[-1].get("content") if messages else None
    return (
        [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    )


def plan_from(results: list[dict[str, Any]], workdir: Path) -> Plan:
    """The plan after the tool's results, one response object per tool call."""
    return plan_task(TASK, workdir, responses=[{"answers": r["answers"]} for r in results])


def test_a_pick_from_the_second_group_reaches_the_planner_as_the_original_label(
    scripted_model_server: Callable[..., Any], claude_cli_path: Path, tmp_path: Path
) -> None:
    person = {
        CATEGORY: "Authentication / Infra",
        f"{CATEGORY} (Authentication / Infra)": "Authentication",
        "Which authentication approach?": "Magic Link",
    }
    steps = planned_steps(person, tmp_path)

    asked, results, errors = ask_through_the_cli(steps, person, scripted_model_server,
                                         claude_cli_path, tmp_path)  # fmt: skip

    assert errors == []
    assert asked == steps and len(results) == 3  # the CLI accepted every step as given
    for step in asked:
        assert 1 <= len(step["questions"]) <= TOOL_QUESTIONS
        assert all(2 <= len(q["options"]) <= TOOL_OPTIONS for q in step["questions"])
    first = [o["label"] for o in asked[0]["questions"][0]["options"]]
    assert first == ["Frontend / Backend / Database", "Authentication / Infra", "Other (specify)"]
    assert [o["label"] for o in asked[1]["questions"][0]["options"]] == ["Authentication", "Infra"]
    assert results[1]["answers"] == {f"{CATEGORY} (Authentication / Infra)": "Authentication"}
    plan = plan_from(results, tmp_path)
    assert plan.status == "ready" and plan.validation.valid
    assert plan.responses == {"change_category": "Authentication", "auth_strategy": "Magic Link"}
    assert set(plan.not_applicable) == {"db_type", "frontend_framework", "api_style", "hosting"}


def test_other_chosen_on_the_first_step_asks_its_text_and_resolves_into_the_value(
    scripted_model_server: Callable[..., Any], claude_cli_path: Path, tmp_path: Path
) -> None:
    person = {
        CATEGORY: "Other (specify)",
        f"{CATEGORY} (you chose Other (specify): which one?)": "Mobile app",
    }
    steps = planned_steps(person, tmp_path)

    asked, results, errors = ask_through_the_cli(steps, person, scripted_model_server,
                                         claude_cli_path, tmp_path)  # fmt: skip

    assert errors == []
    assert asked == steps and len(results) == 2
    assert results[0]["answers"] == {CATEGORY: "Other (specify)"}
    plan = plan_from(results, tmp_path)
    assert plan.status == "ready"
    assert plan.responses == {"change_category": "Other (specify)",
                              "change_category__other": "Mobile app"}  # fmt: skip
    assert len(plan.not_applicable) == 5


def test_the_cli_refuses_a_question_with_more_options_than_it_shows(
    scripted_model_server: Callable[..., Any], claude_cli_path: Path, tmp_path: Path
) -> None:
    """Why the relay exists: the six options asked at once never reach a person."""
    plan = plan_task(TASK, tmp_path)
    (question,) = plan.questions
    whole = {"questions": [{"question": question.question, "header": question.header,
                            "options": [{"label": o.label, "description": o.description}
                                        for o in question.options],
                            "multiSelect": False}]}  # fmt: skip

    asked, results, errors = ask_through_the_cli([whole], {}, scripted_model_server,
                                                 claude_cli_path, tmp_path)  # fmt: skip

    assert asked == [] and results == []  # nobody was asked
    (error,) = errors
    assert "InputValidationError" in error and "<=4 items" in error
