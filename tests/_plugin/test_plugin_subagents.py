"""A subagent's work in the user's own session: ``/phasegate:run`` in print mode with the
plugin loaded, a scripted main agent that hands the Edit to a subagent (the Agent tool), and
the Stop hook's gate counting the subagent's calls in its phase."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import plugin_env, run_claude, session_state
from tests.helpers.scenarios import BUGGY_LINE, EDIT, EXAMPLE, FIXED_LINE, GOOD_JSON, MARKER

pytestmark = pytest.mark.cli

DELEGATE: dict[str, Any] = {
    "Agent": {
        "description": "fix app.py",
        "prompt": "Replace the eval in app.py with float parsing.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
}


def test_an_edit_delegated_to_a_subagent_is_accepted_and_the_report_names_the_subagent(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The edit phase needs an Edit: the subagent's Edit counts for it, the phase's figures
    and the report show the subagent apart, and the hooks' evidence names it."""
    server = scripted_model_server(
        Script.model_validate(
            {
                "replies": [
                    {"tools": [DELEGATE]},
                    {"agent": "fix app.py", "tools": [EDIT]},
                    {"agent": "fix app.py", "text": "Done: app.py no longer calls eval."},
                    {"text": f"{MARKER}\n{GOOD_JSON}"},
                ]
            }
        )
    )
    work = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", work)
    session = run_claude(f"/phasegate:run {EXAMPLE / 'task.yaml'}", work, plugin_env(server))

    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "accepted", state["last_issues"]
    assert [c["accepted"] for c in state["checks"]] == [True]
    assert (work / "app.py").read_text().count(FIXED_LINE) == 1
    assert BUGGY_LINE not in (work / "app.py").read_text()
    report = state["report"]
    edit = report["phases"][0]
    assert edit["tools"] == {"Agent": 1, "Edit": 1}
    (subagent,) = edit["subagents"]
    assert (subagent["type"], subagent["tools"], subagent["files"]) == (
        "general-purpose", {"Edit": 1}, ["app.py"]
    )  # fmt: skip
    assert report["subagents"] == [subagent]
    evidence = [
        json.loads(line)
        for line in (work / ".phasegate/plugin" / session.session_id / "evidence.jsonl")
        .read_text()
        .splitlines()
    ]
    (edit_line,) = [e for e in evidence if e["name"] == "Edit"]
    assert (edit_line["agent_id"], edit_line["agent_type"]) == (
        subagent["agent"],
        "general-purpose",
    )
    (agent_line,) = [e for e in evidence if e["name"] == "Agent"]
    assert "agent_id" not in agent_line
    assert server.unmatched == []
