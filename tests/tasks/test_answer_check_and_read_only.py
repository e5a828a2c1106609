"""Two things a task can ask beyond its schema: an answer check that reviews meaning (fed
back as ``answer_refused``), and ``read_only``, where the agent may look but change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate import Runner
from phasegate.phases.loading import task_from_mapping
from phasegate.agents.protocol import AgentRequest
from phasegate.testing import Script, ScriptedAgent

COUNT_TASK: dict[str, Any] = {
    "name": "count",
    "phases": [{
        "name": "answer",
        "instructions": "Say how many files there are.",
        "output_schema": {"type": "object", "required": ["files"],
                          "properties": {"files": {"type": "integer"}}},
    }],
}  # fmt: skip


def at_least_three(answer: dict[str, Any]) -> list[str]:
    """Refuses fewer than three files, saying why."""
    return [] if answer["files"] >= 3 else [f"There are at least 3 files, not {answer['files']}."]


def test_an_answer_the_check_refuses_is_fed_back_and_the_corrected_one_accepted(
    tmp_path: Path,
) -> None:
    """The check runs on a schema-valid answer; its sentence reaches the model as feedback."""
    script = Script.model_validate({"replies": [
        {"text": '{"files": 1}'},
        {"when": "user", "contains": "at least 3 files, not 1", "text": '{"files": 3}'},
    ]})  # fmt: skip
    runner = Runner(ScriptedAgent(script), check_answer=at_least_three)
    report = runner.run_sync(task_from_mapping(COUNT_TASK), tmp_path)
    assert report.verdict == "accepted" and report.attempts == 2
    assert report.summary == {"files": 3}


def test_an_answer_the_check_keeps_refusing_rejects_the_run_with_answer_refused(
    tmp_path: Path,
) -> None:
    script = Script.model_validate({"replies": [{"text": '{"files": 1}'}]})
    report = Runner(ScriptedAgent(script), mode="single-query", check_answer=at_least_three
                    ).run_sync(task_from_mapping(COUNT_TASK), tmp_path)  # fmt: skip
    assert report.verdict == "rejected"
    assert [(i.code.value, i.message) for i in report.issues] == [
        ("answer_refused", "There are at least 3 files, not 1.")
    ]


def test_a_read_only_task_asks_for_a_read_only_session(tmp_path: Path) -> None:
    runner = Runner(ScriptedAgent(Script.model_validate({"replies": [{"text": "{}"}]})))
    assert runner.request_for(task_from_mapping({**COUNT_TASK, "read_only": True}), tmp_path
                              ).read_only  # fmt: skip
    assert not runner.request_for(task_from_mapping(COUNT_TASK), tmp_path).read_only


def test_a_read_only_task_dumps_as_before_when_off_so_saved_digests_still_match() -> None:
    assert "read_only" not in task_from_mapping(COUNT_TASK).model_dump()
    assert task_from_mapping({**COUNT_TASK, "read_only": True}).model_dump()["read_only"]


def test_a_write_tried_in_a_read_only_task_is_refused_and_fails_the_gate(
    tmp_path: Path,
) -> None:
    """The scripted agent refuses the write as Claude Code's plan mode does; the attempt
    alone is a read_only_violated issue."""
    (tmp_path / "a.txt").write_text("a\n")
    script = Script.model_validate({"replies": [
        {"tools": [{"Write": {"file_path": "a.txt", "content": "changed\n"}}]},
        {"text": '{"files": 1}'},
    ]})  # fmt: skip
    task = task_from_mapping({**COUNT_TASK, "read_only": True})
    report = Runner(ScriptedAgent(script), mode="single-query").run_sync(task, tmp_path)
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert report.verdict == "rejected"
    assert [i.code.value for i in report.issues] == ["read_only_violated"]
    assert "it called Write" in report.issues[0].message


def test_a_change_on_disk_in_a_read_only_task_fails_the_gate(tmp_path: Path) -> None:
    """A file changed behind the agent's back (as a shell command might) counts too."""
    script = Script.model_validate({"replies": [
        {"tools": [{"Read": {"file_path": "a.txt"}}]},
        {"text": '{"files": 1}'},
    ]})  # fmt: skip
    (tmp_path / "a.txt").write_text("a\n")
    sneaky = ScriptedAgent(script)
    original = sneaky.run

    async def run_and_write(request: AgentRequest, observer: Any) -> Any:
        (tmp_path / "b.txt").write_text("written behind the agent's back\n")
        return await original(request, observer)

    sneaky.run = run_and_write  # type: ignore[method-assign]
    task = task_from_mapping({**COUNT_TASK, "read_only": True})
    report = Runner(sneaky, mode="single-query").run_sync(task, tmp_path)
    assert report.verdict == "rejected"
    assert [i.code.value for i in report.issues] == ["read_only_violated"]
    assert "files changed on disk: b.txt" in report.issues[0].message
