"""``on_reject: revert`` with checks that write: what a check did to the work directory is
never the agent's work, but a reverted run leaves the directory as it was before the run,
the checks' deletions and rewrites undone too (a protected file among them).

Each scenario runs with the in-process scripted agent and with the real Claude Code CLI
against the scripted model server (``agent_kind``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate import Runner
from phasegate.agents.protocol import Agent
from phasegate.phases.loading import task_from_mapping
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory

UNTIDY = (
    "mkdir -p build tests/out; echo x > build/out.txt; echo y > tests/out/log.txt; "
    "echo changed > tests/fixture.txt; rm -f notes.txt; echo by-check > config.txt; exit 1"
)
"""A failing check that adds files, deletes one the run started with and rewrites two, one
of them under a protected folder."""


def files_in(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_reverted_run_leaves_the_work_directory_as_it_was_whatever_its_checks_wrote(
    tmp_path: Path, agent_kind: str, scripted_model_server: ScriptedServerFactory
) -> None:
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "notes.txt").write_text("notes\n")
    (work / "config.txt").write_text("original\n")
    (work / "tests" / "fixture.txt").write_text("keep\n")
    before = files_in(work)
    task = task_from_mapping({
        "name": "revert-with-checks",
        "on_reject": "revert",
        "protect": ["tests"],
        "phases": [{"name": "fix", "instructions": "Fix add().", "require_changes": True,
                    "checks": [{"command": ["sh", "-c", UNTIDY]}]}],
    })  # fmt: skip
    replies: list[dict[str, Any]] = [
        {"text": "Fixing.", "tools": [{"Edit": {
            "file_path": "calc.py", "old_string": "a - b", "new_string": "a * b"}}]},
        {"when": "tool_result", "text": "PHASE 1 COMPLETE: fixed"},
    ]  # fmt: skip
    script = Script.model_validate({"replies": replies})
    agent: Agent = ScriptedAgent(script)
    if agent_kind == "claude":
        agent = scripted_model_server(script).claude_agent(timeout=90, request_timeout=20)

    report = Runner(agent, max_attempts=1).run_sync(task, work)

    assert report.verdict == "rejected"
    assert [i.code.value for i in report.phases[0].issues] == ["check_failed"]
    assert report.files_changed == ["calc.py"]  # what the check did is not the agent's work
    assert files_in(work) == before
    assert report.reverted is not None and not report.reverted.failed
    assert "notes.txt" in report.reverted.restored
    assert "tests/fixture.txt" in report.reverted.restored
