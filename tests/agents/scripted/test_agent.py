"""The scripted agent applies its tool calls for real, with a coding agent's error rules."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from phasegate import Agent, AgentError, AgentRequest, ScriptFileError
from phasegate.agents.protocol import grading_agent
from phasegate.agents.scripted.script import UNMATCHED_PREFIX
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    RunResult,
    SessionStart,
    ToolCall,
    ToolResult,
)
from phasegate.phases.checks import Rubric
from phasegate.phases.grader import GraderSettings
from phasegate.prompts.completion_tools import ToolAnswer, ToolSpec
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.testing import Script, ScriptedAgent, load_script
from phasegate.validators.grading import verdict_schema
from tests.helpers.read_only import read_only


class _Recorder:
    """An observer that records entries and answers stops from a list of follow-ups."""

    def __init__(self, follow_ups: list[str] | None = None) -> None:
        self.entries: list[Entry] = []
        self.follow_ups = list(follow_ups or [])
        self.stops = 0
        self.tool_calls: list[tuple[str, dict[str, Any]]] = []

    def on_entry(self, entry: Entry) -> None:
        self.entries.append(entry)

    async def on_stop(self) -> str | None:
        self.stops += 1
        return self.follow_ups.pop(0) if self.follow_ups else None

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        raise AssertionError("the scripted agent never retries")

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        self.tool_calls.append((name, arguments))
        return ToolAnswer(True, {"result": "success", "action": "go on"})

    def before_tool(self, call: ToolCall) -> str | None:
        return None

    def results(self) -> list[ToolResult]:
        return [e for e in self.entries if isinstance(e, ToolResult)]


def _play(
    workdir: Path, replies: list[dict[str, Any]], follow_ups: list[str] | None = None
) -> _Recorder:
    recorder = _Recorder(follow_ups)
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    asyncio.run(agent.run(AgentRequest(prompt="go", workdir=workdir), recorder))
    return recorder


def test_edit_write_and_multiedit_change_the_files_for_real(tmp_path: Path) -> None:
    """Successful tools change the disk and report ok results."""
    (tmp_path / "a.txt").write_text("one two three")
    recorder = _play(tmp_path, [{"tools": [
        {"Edit": {"file_path": "a.txt", "old_string": "one", "new_string": "1"}},
        {"MultiEdit": {"file_path": "a.txt", "edits": [
            {"old_string": "two", "new_string": "2"}, {"old_string": "three", "new_string": "3"}]}},
        {"Write": {"file_path": "sub/b.txt", "content": "new"}},
    ]}])  # fmt: skip
    assert [r.ok for r in recorder.results()] == [True, True, True]
    assert (tmp_path / "a.txt").read_text() == "1 2 3"
    assert (tmp_path / "sub" / "b.txt").read_text() == "new"


@pytest.mark.parametrize(
    ("step", "error"),
    [
        ({"Edit": {"file_path": "a.txt", "old_string": "absent", "new_string": "x"}}, "not found"),
        ({"Edit": {"file_path": "a.txt", "old_string": "ab", "new_string": "x"}}, "2 matches"),
        ({"Edit": {"file_path": "no.txt", "old_string": "a", "new_string": "b"}}, "does not exist"),
        ({"Read": {"file_path": "/etc/hostname"}}, "outside the working directory"),
        ({"Bash": {"command": "rm -rf /"}}, "No such tool available: Bash"),
        ({"MultiEdit": {"file_path": "a.txt", "edits": [
            {"old_string": "ab", "new_string": "x", "replace_all": True},
            {"old_string": "absent", "new_string": "y"}]}}, "not found"),
    ],
)  # fmt: skip
def test_a_failing_tool_call_returns_an_error_result_and_leaves_the_file_alone(
    tmp_path: Path, step: dict[str, Any], error: str
) -> None:
    """Errors come back as error results, exactly like a real runtime; nothing half-applied."""
    (tmp_path / "a.txt").write_text("ab ab")
    recorder = _play(tmp_path, [{"tools": [step]}])
    (result,) = recorder.results()
    assert not result.ok and error in result.content
    assert (tmp_path / "a.txt").read_text() == "ab ab"


@pytest.mark.parametrize(
    "step",
    [
        {"Write": {"file_path": "out/new.txt", "content": "escaped"}},
        {"Edit": {"file_path": "out/kept.txt", "old_string": "kept", "new_string": "escaped"}},
        {"Write": {"file_path": "kept-link.txt", "content": "escaped"}},
        {"Read": {"file_path": "out/kept.txt"}},
    ],
    ids=["write-below-a-linked-dir", "edit-below-a-linked-dir", "write-a-linked-file", "read"],
)
def test_a_path_that_leads_out_of_the_work_directory_through_a_link_is_denied(
    tmp_path: Path, step: dict[str, Any]
) -> None:
    """As Claude Code does: the call is an error result and nothing outside is touched."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "kept.txt").write_text("kept")
    (work / "out").symlink_to(Path("..") / "outside", target_is_directory=True)
    (work / "kept-link.txt").symlink_to(outside / "kept.txt")
    recorder = _play(work, [{"tools": [step]}])
    (result,) = recorder.results()
    assert not result.ok and "outside the working directory" in result.content
    assert sorted(p.name for p in outside.iterdir()) == ["kept.txt"]
    assert (outside / "kept.txt").read_text() == "kept"


def test_a_link_that_stays_inside_the_work_directory_is_followed(tmp_path: Path) -> None:
    """Only links leading out are denied: writing through one to a directory inside works."""
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real", target_is_directory=True)
    recorder = _play(
        tmp_path, [{"tools": [{"Write": {"file_path": "alias/a.txt", "content": "a"}}]}]
    )
    assert [r.ok for r in recorder.results()] == [True]
    assert (tmp_path / "real" / "a.txt").read_text() == "a"


def test_a_file_where_a_directory_should_be_is_an_error_result(tmp_path: Path) -> None:
    """Writing below a regular file fails as a tool error, whoever runs the tests."""
    (tmp_path / "a.txt").write_text("a file")
    recorder = _play(
        tmp_path, [{"tools": [{"Write": {"file_path": "a.txt/b.txt", "content": "x"}}]}]
    )
    (result,) = recorder.results()
    assert not result.ok and "Cannot write" in result.content
    assert (tmp_path / "a.txt").read_text() == "a file"


@pytest.mark.parametrize(
    ("locked", "step"),
    [
        (".", {"Write": {"file_path": "new.txt", "content": "x"}}),
        ("a.txt", {"Edit": {"file_path": "a.txt", "old_string": "old", "new_string": "new"}}),
        ("a.txt", {"Write": {"file_path": "a.txt", "content": "new"}}),
    ],
    ids=["write-in-a-read-only-dir", "edit-a-read-only-file", "overwrite-a-read-only-file"],
)
def test_a_read_only_work_directory_gives_error_results_not_exceptions(
    tmp_path: Path, locked: str, step: dict[str, Any]
) -> None:
    """A write the file system refuses is the agent's tool error; the session goes on."""
    (tmp_path / "a.txt").write_text("old")
    with read_only(tmp_path / locked):
        recorder = _play(tmp_path, [{"tools": [step]}, {"when": "tool_error", "text": "I see."}])
    (result,) = recorder.results()
    assert not result.ok and "Cannot write" in result.content
    assert (tmp_path / "a.txt").read_text() == "old"
    assert not (tmp_path / "new.txt").exists()
    assert isinstance(recorder.entries[-1], RunResult) and recorder.stops == 1


def test_the_next_reply_follows_what_the_last_request_held(tmp_path: Path) -> None:
    """tool_error replies play only after an error; user replies only after a follow-up."""
    recorder = _play(
        tmp_path,
        [
            {"tools": [{"Read": {"file_path": "missing.txt"}}]},
            {"when": "tool_result", "text": "not this one"},
            {"when": "tool_error", "text": "the read failed"},
            {"when": "user", "contains": "please", "text": "after feedback"},
        ],
        follow_ups=["please go on"],
    )
    texts = [getattr(e, "text", None) for e in recorder.entries if e.kind == "assistant"]
    assert texts == ["the read failed", "after feedback"]
    assert recorder.stops == 2
    assert isinstance(recorder.entries[-1], RunResult)


def test_a_turn_no_reply_left_matches_is_said_in_the_transcript_and_listed(
    tmp_path: Path,
) -> None:
    """A follow-up the waiting reply does not match: the agent says which reply it expected
    and what came, lists it in ``unmatched``, and stops."""
    script = Script.model_validate(
        {
            "replies": [
                {"text": "first"},
                {"when": "user", "contains": "marker_missing", "text": "fixed"},
            ]
        }
    )
    agent = ScriptedAgent(script)
    recorder = _Recorder(follow_ups=["the gate found no_changes"])
    asyncio.run(agent.run(AgentRequest(prompt="go", workdir=tmp_path), recorder))
    texts = [getattr(e, "text", "") for e in recorder.entries if e.kind == "assistant"]
    assert texts[0] == "first"
    assert texts[1].startswith("(script stopped matching) script reply 2 (when: user")
    assert "'the gate found no_changes'" in texts[1]
    assert [(u.reply, u.came) for u in agent.unmatched] == [(2, "user")]


def test_the_same_script_gives_the_same_transcript(tmp_path: Path) -> None:
    """Deterministic: ids, order and content repeat exactly."""
    write = {"Write": {"file_path": "f.txt", "content": "x"}}
    replies: list[dict[str, Any]] = [{"tools": [write]}, {"text": "done"}]
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first, second = _play(tmp_path / "one", replies), _play(tmp_path / "two", replies)
    strip = [e.model_dump(exclude={"cwd", "input", "content"}) for e in first.entries]
    assert strip == [e.model_dump(exclude={"cwd", "input", "content"}) for e in second.entries]
    assert [e.id for e in first.entries if isinstance(e, ToolCall)] == ["toolu_scripted_0001"]


def test_a_scripted_api_failure_raises_a_transient_agent_error(tmp_path: Path) -> None:
    """An HTTP fault in the script is an AgentError the runner reports as verdict error."""
    with pytest.raises(AgentError, match="HTTP 529") as caught:
        _play(tmp_path, [{"error": {"status": 529}}])
    assert caught.value.transient


def test_a_bad_script_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    """An empty reply is refused with the file and the reply's position."""
    bad = tmp_path / "script.yaml"
    bad.write_text("replies:\n  - text: hi\n  - when: user\n")
    with pytest.raises(ScriptFileError) as caught:
        load_script(bad)
    assert str(bad) in str(caught.value) and "replies.1" in str(caught.value)


def test_an_offered_completion_tool_is_answered_by_the_observer(tmp_path: Path) -> None:
    """phase_complete (short name in the script) reaches on_tool_call; its answer is the result."""
    recorder = _Recorder()
    agent = ScriptedAgent(Script.model_validate({"replies": [{"tools": [
        {"phase_complete": {"phase": 1, "note": "edited"}}]}]}))  # fmt: skip
    request = AgentRequest(
        prompt="go", workdir=tmp_path, tools=(ToolSpec("phase_complete", "d", {}),)
    )

    asyncio.run(agent.run(request, recorder))

    assert recorder.tool_calls == [("phase_complete", {"phase": 1, "note": "edited"})]
    (call,) = [e for e in recorder.entries if isinstance(e, ToolCall)]
    assert call.name == "mcp__phasegate__phase_complete"
    (result,) = recorder.results()
    assert result.ok and '"result": "success"' in result.content


def test_a_completion_tool_that_was_not_offered_does_not_exist(tmp_path: Path) -> None:
    """Without the tool in the request (marker mode), the call is an unknown tool."""
    recorder = _play(tmp_path, [{"tools": [{"phase_complete": {"phase": 1}}]}])

    (result,) = recorder.results()
    assert not result.ok
    assert "No such tool available: mcp__phasegate__phase_complete" in result.content
    assert recorder.tool_calls == []


def _structured(tmp_path: Path, replies: list[dict[str, Any]]) -> _Recorder:
    recorder = _Recorder(["keep going"] * 3)
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    request = AgentRequest(prompt="go", workdir=tmp_path, output_schema=schema)
    asyncio.run(agent.run(request, recorder))
    return recorder


def test_a_valid_structured_output_ends_the_session_whatever_the_stop_answer(
    tmp_path: Path,
) -> None:
    """As in Claude Code: the Stop hook is asked once, its feedback is not obeyed."""
    recorder = _structured(tmp_path, [
        {"tools": [{"StructuredOutput": {"a": 1}}]},
        {"text": "never reached"},
    ])  # fmt: skip

    assert recorder.stops == 1
    assert [r.ok for r in recorder.results()] == [True]
    assert isinstance(recorder.entries[-1], RunResult)
    assert not recorder.entries[-1].is_error


def test_five_refused_structured_outputs_end_the_session_with_the_runtime_error(
    tmp_path: Path,
) -> None:
    """Schema-breaking input is an error result; the fifth ends it, unjudged by a stop."""
    wrapped = {"when": "tool_error", "tools": [{"StructuredOutput": {"output": {"a": 1}}}]}
    recorder = _structured(tmp_path, [{"tools": [{"StructuredOutput": {"output": {"a": 1}}}]}]
                           + [wrapped] * 6)  # fmt: skip

    results = recorder.results()
    assert len(results) == 5
    assert not any(r.ok for r in results)
    assert "Output does not match required schema" in results[0].content
    last = recorder.entries[-1]
    assert isinstance(last, RunResult)
    assert (last.is_error, last.subtype) == (True, "error_max_structured_output_retries")
    assert recorder.stops == 0


def test_a_forked_session_goes_on_from_the_parents_place_under_a_new_id(tmp_path: Path) -> None:
    """``fork`` with ``resume``: the script continues where the parent left it, and the
    session reports an id of its own; each fork gets another."""
    agent = ScriptedAgent(
        Script.model_validate({"replies": [{"text": "planned"}, {"text": "branched"}]})
    )
    parent, fork, second = _Recorder(), _Recorder(), _Recorder()
    asyncio.run(agent.run(AgentRequest(prompt="plan", workdir=tmp_path), parent))
    forked = AgentRequest(prompt="go", workdir=tmp_path, resume="scripted", fork=True)
    asyncio.run(agent.run(forked, fork))
    asyncio.run(agent.run(forked, second))
    ids = [e.session_id for r in (parent, fork, second) for e in r.entries
           if isinstance(e, SessionStart)]  # fmt: skip
    assert ids == ["scripted", "scripted-fork-1", "scripted-fork-2"]
    assert [e.text for e in fork.entries if isinstance(e, AssistantText)] == ["branched"]


# -- as a grader ---------------------------------------------------------------------------------

GRADER_TOOLSET = ("Read", "Grep", "Glob")


def _verdict(verdict: str, reason: str) -> dict[str, Any]:
    return {"StructuredOutput": {"verdicts": [{"id": "c1", "verdict": verdict, "reason": reason}]}}


def _grader_request(workdir: Path) -> AgentRequest:
    """A grader's request as the gate makes one, on one criterion (``c1``)."""
    schema = verdict_schema(Rubric.model_validate({"criteria": "NOTES.md says how to test."}))
    return AgentRequest(
        prompt=f"{GRADER_OPENING} Judge NOTES.md.",
        workdir=workdir,
        toolset=GRADER_TOOLSET,
        output_schema=schema,
    )


class _GradedStops(_Recorder):
    """The main session's observer: each stop runs a grader session (as the gate will) and
    answers with feedback while its verdict is not ``met``."""

    def __init__(self, grader: Agent, workdir: Path) -> None:
        super().__init__()
        self.grader, self.workdir = grader, workdir
        self.graders: list[_Recorder] = []

    async def on_stop(self) -> str | None:
        self.stops += 1
        session = _Recorder()
        self.graders.append(session)
        await self.grader.run(_grader_request(self.workdir), session)
        (call,) = [e for e in session.entries if isinstance(e, ToolCall)]
        (verdict,) = call.input["verdicts"]
        return None if verdict["verdict"] == "met" else f"Not met: {verdict['reason']}"


def test_a_grading_agent_takes_only_grader_replies_and_keeps_its_place_across_sessions(
    tmp_path: Path,
) -> None:
    """The run's agent passes over the grader replies; the grader's agent, one object for
    the run, answers its first session with the first grader reply and its second (after
    the feedback and the fix) with the next."""
    fixed = {"file_path": "NOTES.md", "content": "# Notes\nRun make.\n"}
    script = Script.model_validate({"replies": [
        {"tools": [{"Write": {"file_path": "NOTES.md", "content": "# Notes\n"}}]},
        {"text": "Done."},
        {"grader": True, "tools": [_verdict("not_met", "NOTES.md has a title only.")]},
        {"when": "user", "tools": [{"Write": fixed}]},
        {"text": "Fixed."},
        {"grader": True, "tools": [_verdict("met", "NOTES.md says: Run make.")]},
    ]})  # fmt: skip
    agent = ScriptedAgent(script)
    settings = GraderSettings(model="sonnet")
    grading = grading_agent(agent, settings)
    assert isinstance(grading, ScriptedAgent) and grading.grader_settings == settings
    stops = _GradedStops(grading, tmp_path)

    asyncio.run(agent.run(AgentRequest(prompt="Write NOTES.md.", workdir=tmp_path), stops))

    said = [e.text for e in stops.entries if isinstance(e, AssistantText)]
    assert said == ["Done.", "Fixed."] and stops.stops == 2
    verdicts = [
        [e.input["verdicts"][0]["verdict"] for e in g.entries if isinstance(e, ToolCall)]
        for g in stops.graders
    ]
    assert verdicts == [["not_met"], ["met"]]
    for session in stops.graders:
        assert [r.ok for r in session.results()] == [True]
        start = session.entries[0]
        assert isinstance(start, SessionStart) and start.session_id == "scripted-grader"
    assert (tmp_path / "NOTES.md").read_text() == "# Notes\nRun make.\n"
    assert agent.unmatched == [] and grading.unmatched == []


def test_a_grading_agent_cannot_write_what_its_toolset_leaves_out(tmp_path: Path) -> None:
    """Read, Grep and Glob are the grader's tools: a Write in a grader reply is refused as
    Claude Code refuses a tool it was not given, and the file stays unwritten."""
    script = Script.model_validate({"replies": [
        {"grader": True, "tools": [{"Write": {"file_path": "NOTES.md", "content": "met"}}]},
        {"grader": True, "when": "tool_error", "tools": [_verdict("cannot_tell", "No NOTES.md.")]},
    ]})  # fmt: skip
    grading = ScriptedAgent(script).grading_agent(GraderSettings())
    session = _Recorder()

    asyncio.run(grading.run(_grader_request(tmp_path), session))

    refused, given = session.results()
    assert not refused.ok and "No such tool available: Write" in refused.content
    assert given.ok and not (tmp_path / "NOTES.md").exists()


def test_a_grading_agent_with_no_grader_reply_left_says_so_and_lists_it(tmp_path: Path) -> None:
    """A script written without grader replies: the grader's session says why it gives no
    verdict, instead of taking the run's replies or ending quietly, and the run's agent lists
    it with its own unmatched turns."""
    agent = ScriptedAgent(Script.model_validate({"replies": [{"text": "Done."}]}))
    grading_session = _Recorder()

    asyncio.run(
        agent.grading_agent(GraderSettings()).run(_grader_request(tmp_path), grading_session)
    )

    (said,) = [e for e in grading_session.entries if isinstance(e, AssistantText)]
    assert said.text.startswith(UNMATCHED_PREFIX)
    assert "no script reply is left for the grader's conversation" in said.text
    assert not any(isinstance(e, ToolCall) for e in grading_session.entries)
    # Listed by the run's agent too, where a command looks for what its script missed.
    (unmatched,) = agent.unmatched
    assert (unmatched.grader, unmatched.reply) == (True, 0)
