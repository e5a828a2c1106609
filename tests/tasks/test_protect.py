"""``protect`` at the gate: a protected file changed on disk, by a tool or behind the agent's
back, rejects the run with ``protected_path_changed`` and is never counted as the agent's
work; ``on_reject: revert`` restores it like any other change."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from phasegate import Runner, judge_transcript
from phasegate.agents.protocol import AgentRequest
from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript
from phasegate.phases.loading import task_from_mapping
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.wild import git

FIX_TASK: dict[str, Any] = {
    "name": "fix",
    "protect": ["tests/**"],
    "phases": [
        {"name": "fix", "instructions": "Make the test pass.", "require_changes": True},
        {
            "name": "report",
            "instructions": "List the files you changed.",
            "output_schema": {"type": "object", "required": ["files"],
                              "properties": {"files": {"type": "array",
                                                       "items": {"type": "string"}}}},
            "claims_files": "files",
        },
    ],
}  # fmt: skip


def _unasked(script: Script) -> ScriptedAgent:
    """The scripted agent, never asking before a call: its writes reach the disk as a Bash
    command's would, past the PreToolUse refusal, so the gate's own check is what is seen."""
    agent = ScriptedAgent(script)
    original = agent.run

    async def run(request: AgentRequest, observer: Any) -> Any:
        return await original(replace(request, check_before=()), observer)

    agent.run = run  # type: ignore[method-assign]
    return agent


def test_a_write_to_a_protected_file_is_refused_before_it_runs(tmp_path: Path) -> None:
    _project(tmp_path)
    script = Script.model_validate({"replies": [
        {"tools": [
            {"Write": {"file_path": "src/app.py", "content": "def add(a, b):\n    return a + b\n"}},
            {"Write": {"file_path": "tests/test_app.py", "content": "assert True\n"}},
        ]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": ["src/app.py"]}'},
    ]})  # fmt: skip
    report = Runner(ScriptedAgent(script)).run_sync(task_from_mapping(FIX_TASK), tmp_path)
    assert report.verdict == "accepted", report.issues
    (refused,) = report.phases[0].refusals
    assert refused.tool == "Write" and "protected by `tests/**`" in refused.reason
    assert (tmp_path / "tests" / "test_app.py").read_text() == "assert add(1, 2) == 3\n"
    assert report.files_changed == ["src/app.py"]


def _project(root: Path) -> None:
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "tests" / "test_app.py").write_text("assert add(1, 2) == 3\n")
    (root / "tests" / "test_other.py").write_text("assert True\n")


def test_a_protected_file_written_by_the_model_rejects_the_run_and_is_not_its_work(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    script = Script.model_validate({"replies": [
        {"tools": [
            {"Write": {"file_path": "src/app.py", "content": "def add(a, b):\n    return a + b\n"}},
            {"Write": {"file_path": "tests/test_app.py", "content": "assert True\n"}},
        ]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": ["src/app.py", "tests/test_app.py"]}'},
    ]})  # fmt: skip
    report = Runner(_unasked(script), mode="single-query").run_sync(
        task_from_mapping(FIX_TASK), tmp_path
    )
    assert report.verdict == "rejected"
    assert [(i.code.value, i.path, i.phase) for i in report.issues] == [
        ("protected_path_changed", "tests/test_app.py", 1)
    ]
    assert report.files_changed == ["src/app.py"]
    assert report.phases[0].files_changed == ["src/app.py"]
    assert report.reconciliation is not None
    assert report.reconciliation.disk_changed == ["src/app.py"]
    assert report.reconciliation.tool_reported == ["src/app.py"]
    assert report.reconciliation.changed_not_claimed == []
    assert report.reconciliation.claimed_not_changed == []


def test_a_protected_file_changed_behind_the_agents_back_rejects_the_run(tmp_path: Path) -> None:
    """As a Bash command or a script would change it: no editing tool names the file."""
    _project(tmp_path)
    script = Script.model_validate({"replies": [
        {"tools": [{"Write": {"file_path": "src/app.py", "content": "fixed\n"}}]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": ["src/app.py"]}'},
    ]})  # fmt: skip
    sneaky = ScriptedAgent(script)
    original = sneaky.run

    async def run_and_delete(request: AgentRequest, observer: Any) -> Any:
        (tmp_path / "tests" / "test_app.py").unlink()
        return await original(request, observer)

    sneaky.run = run_and_delete  # type: ignore[method-assign]
    report = Runner(sneaky, mode="single-query").run_sync(task_from_mapping(FIX_TASK), tmp_path)
    assert report.verdict == "rejected"
    issues = [i for i in report.issues if i.code.value == "protected_path_changed"]
    assert [i.path for i in issues] == ["tests/test_app.py"]
    assert "it was deleted" in issues[0].message
    assert report.files_changed == ["src/app.py"]
    assert report.reconciliation is not None
    assert report.reconciliation.change_without_tool == []


def test_the_gate_feeds_the_protected_change_back_and_accepts_it_once_put_back(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    original = (tmp_path / "tests" / "test_app.py").read_text()
    script = Script.model_validate({"replies": [
        {"tools": [
            {"Write": {"file_path": "src/app.py", "content": "fixed\n"}},
            {"Write": {"file_path": "tests/test_app.py", "content": "assert True\n"}},
        ]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": ["src/app.py"]}'},
        {"when": "user", "contains": "protected_path_changed",
         "tools": [{"Write": {"file_path": "tests/test_app.py", "content": original}}]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": ["src/app.py"]}'},
    ]})  # fmt: skip
    report = Runner(_unasked(script)).run_sync(task_from_mapping(FIX_TASK), tmp_path)
    assert report.verdict == "accepted", report.issues
    assert report.attempts == 2  # the feedback named the protected change
    assert report.files_changed == ["src/app.py"]
    # Changed, then put back: in no phase's files either, and never an edit not on disk.
    assert [phase.files_changed for phase in report.phases] == [["src/app.py"], []]
    assert report.reconciliation is not None
    assert report.reconciliation.tool_reported == ["src/app.py"]
    assert report.reconciliation.edit_not_on_disk == []


def test_revert_restores_a_protected_file_the_agent_changed_and_leaves_the_others_alone(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    other = tmp_path / "tests" / "test_other.py"
    os.utime(other, (1_000_000, 1_000_000))
    script = Script.model_validate({"replies": [
        {"tools": [{"Write": {"file_path": "tests/test_app.py", "content": "assert True\n"}}]},
        {"text": 'PHASE 1 COMPLETE: done\n{"files": []}'},
    ]})  # fmt: skip
    task = task_from_mapping({**FIX_TASK, "on_reject": "revert"})
    report = Runner(_unasked(script), mode="single-query").run_sync(task, tmp_path)
    assert report.verdict == "rejected"
    assert (tmp_path / "tests" / "test_app.py").read_text() == "assert add(1, 2) == 3\n"
    assert report.reverted is not None and report.reverted.restored == ["tests/test_app.py"]
    assert other.stat().st_mtime == 1_000_000


def test_a_task_without_protect_dumps_as_before_so_saved_digests_still_match() -> None:
    plain = {key: value for key, value in FIX_TASK.items() if key != "protect"}
    assert "protect" not in task_from_mapping(plain).model_dump()
    assert task_from_mapping(FIX_TASK).model_dump()["protect"] == ("tests/**",)


def test_judging_a_saved_transcript_finds_a_protected_file_changed_since_the_commit(
    tmp_path: Path,
    make_transcript: Callable[..., Transcript],
    tool_pair: Callable[..., tuple[ToolCall, ToolResult]],
) -> None:
    """``phasegate judge`` reads the disk changes from git: the same rule holds there."""
    _project(tmp_path)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    (tmp_path / "src" / "app.py").write_text("fixed\n")
    (tmp_path / "tests" / "test_app.py").write_text("assert True\n")
    transcript = make_transcript(
        tool_pair("Write", file_path=str(tmp_path / "src" / "app.py"), content="fixed\n"),
        tool_pair("Bash", command="echo 'assert True' > tests/test_app.py"),
        AssistantText(text='PHASE 1 COMPLETE: done\n{"files": ["src/app.py"]}'),
    )
    report = judge_transcript(task_from_mapping(FIX_TASK), transcript, tmp_path)
    assert report.verdict == "rejected"
    assert [(i.code.value, i.path) for i in report.issues] == [
        ("protected_path_changed", "tests/test_app.py")
    ]
    assert report.files_changed == ["src/app.py"]
