"""Shared pytest fixtures for phasegate's tests."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from phasegate import Agent, Mode, RunEvent, Runner, RunReport, Task, load_task
from phasegate.agents.retry import RetryPolicy
from phasegate.evidence.transcript import Entry, ToolCall, ToolResult, Transcript
from phasegate.evidence.workspace import WorkspaceSnapshot, WorkspaceTimeline
from phasegate.modes import Isolation
from phasegate.phases.model import Phase
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.runner import PipelineRunner
from phasegate.prompts.templates import PROMPTS_DIR_ENV
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.pipelines import FinishedPipeline
from tests.helpers.scenarios import EXAMPLE

# Fuzz tests (marked ``fuzz``) take their example count from the profile: a few hundred in
# ``make test``, many thousands in ``make fuzz``. No deadline: speed is measured in bench/.
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("fuzz", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("PHASEGATE_FUZZ_PROFILE", "default"))
# The plugin's warm gate (phasegate._plugin.warm) lives up to 30 minutes after a session that
# ends mid-run, and most plugin tests end mid-run: off unless a run asks for it
# (PHASEGATE_PLUGIN_WARM=1 runs the plugin's tests through it); tests/_plugin/test_plugin_warm.py
# turns it on for its own runs and ends them.
os.environ.setdefault("PHASEGATE_PLUGIN_WARM", "0")

# =====================================================================================
# Pure-core fixtures (tests/phases, tests/evidence, tests/validators, tests/prompts).
#
# Self-contained: nothing here relies on any other fixture in this file. Builders are
# fixtures that return callables, so test modules never import from conftest.
# =====================================================================================

FIX_TASK_DATA: dict[str, Any] = {
    "name": "fix-vulnerability",
    "description": "Fix the code-injection bug in app.py.",
    "phases": [
        {
            "name": "edit",
            "instructions": "Find the code-injection vulnerability in app.py and fix it in place "
            "with the\nEdit or MultiEdit tool, so that only arithmetic can be evaluated.\n",
            "marker": "Files have been edited",
            "require_tools": ["Edit", "MultiEdit"],
            "require_changes": True,
        },
        {
            "name": "summary",
            "instructions": "Report what you changed.",
            "output_schema": {
                "type": "object",
                "required": ["files_changed", "description"],
                "additionalProperties": False,
                "properties": {
                    "files_changed": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "description": "Paths of the files you edited, relative to the "
                        "working directory.",
                    },
                    "description": {
                        "type": "string",
                        "minLength": 10,
                        "description": "One or two sentences on the fix.",
                    },
                },
            },
            "claims_files": "files_changed",
        },
    ],
}
"""The task of examples/fix-vulnerability/task.yaml, as data (test_loading checks they agree)."""


@pytest.fixture
def fix_task() -> Task:
    """Two phases: ``edit`` (Edit or MultiEdit, files must change), then ``summary`` (JSON)."""
    return Task.model_validate(FIX_TASK_DATA)


@pytest.fixture
def three_phase_task() -> Task:
    """``edit`` (Edit, changes), ``verify`` (Bash), then the ``summary`` output phase."""
    data = dict(FIX_TASK_DATA)
    edit, summary = FIX_TASK_DATA["phases"]
    verify = {
        "name": "verify",
        "instructions": "Run the tests with Bash.",
        "marker": "Tests pass",
        "require_tools": ["Bash"],
    }
    data["phases"] = [{**edit, "require_tools": ["Edit"]}, verify, summary]
    return Task.model_validate(data)


@pytest.fixture
def make_transcript() -> Callable[..., Transcript]:
    """``make_transcript(entry, (call, result), ...)``: entries in order; tuples are flattened."""

    def build(*parts: Entry | Sequence[Entry]) -> Transcript:
        entries: list[Entry] = []
        for part in parts:
            if isinstance(part, Sequence):
                entries.extend(part)
            else:
                entries.append(part)
        return Transcript(entries=tuple(entries))

    return build


@pytest.fixture
def tool_pair() -> Callable[..., tuple[ToolCall, ToolResult]]:
    """``tool_pair("Edit", ok=True, result="...", file_path=...)``: a call and its result.

    Every pair gets a fresh tool-use id, as the real runtime requires.
    """
    ids = itertools.count(1)

    def build(
        name: str, /, *, ok: bool = True, result: str = "", **tool_input: Any
    ) -> tuple[ToolCall, ToolResult]:
        call_id = f"toolu_{next(ids):04d}"
        return (
            ToolCall(id=call_id, name=name, input=tool_input),
            ToolResult(tool_use_id=call_id, ok=ok, content=result),
        )

    return build


@pytest.fixture
def make_timeline() -> Callable[..., WorkspaceTimeline]:
    """``make_timeline((0, {"app.py": "h1"}), (4, {"app.py": "h2"}))``: snapshots by position.

    A snapshot at position N was taken after N transcript entries.
    """

    def build(*points: tuple[int, Mapping[str, str]]) -> WorkspaceTimeline:
        return WorkspaceTimeline.of(
            (position, WorkspaceSnapshot(dict(files))) for position, files in points
        )

    return build


@pytest.fixture
def phase_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every ``Phase.__eq__`` call made from here on in the test (the ``other`` side of each)."""
    comparisons: list[object] = []
    original = Phase.__eq__

    def counted(self: Phase, other: object) -> bool:
        comparisons.append(other)
        return original(self, other)

    monkeypatch.setattr(Phase, "__eq__", counted)
    return comparisons


@pytest.fixture
def bundled_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make sure no ``PHASEGATE_PROMPTS_DIR`` from the environment overrides the templates."""
    monkeypatch.delenv(PROMPTS_DIR_ENV, raising=False)


# ===================================== end of pure-core fixtures =====================


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty work directory, ``tmp_path / "work"``, with room beside it for things
    outside it."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


FAST_RETRIES = RetryPolicy(session_retries=2, initial_delay=0.01, max_delay=0.05)
"""Real retry logic with backoff short enough for tests."""


@pytest.fixture
def task() -> Task:
    """The fix-vulnerability example task: edit (Edit/MultiEdit, changes) then JSON summary."""
    return load_task(EXAMPLE / "task.yaml")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the example project (app.py with an eval bug)."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "app.py").write_text((EXAMPLE / "project" / "app.py").read_text())
    return work


@pytest.fixture
def events() -> list[RunEvent]:
    """Collects the events of a run."""
    return []


@pytest.fixture(params=["scripted", pytest.param("claude", marks=pytest.mark.cli)])
def agent_kind(request: pytest.FixtureRequest) -> str:
    """Which agent replays a script: in-process, or the real Claude Code CLI."""
    return str(request.param)


@pytest.fixture
def run_script(
    task: Task,
    project: Path,
    events: list[RunEvent],
    agent_kind: str,
    scripted_model_server: ScriptedServerFactory,
) -> Callable[..., RunReport]:
    """Run the example task with a model replaying ``replies``.

    With ``agent_kind == "claude"`` the real CLI runs against the scripted model server;
    otherwise the in-process scripted agent replays the same script.
    """

    def run(
        replies: list[dict[str, Any]],
        *,
        mode: Mode = "gate",
        max_attempts: int = 3,
        on: Task | None = None,
        retry: RetryPolicy = FAST_RETRIES,
    ) -> RunReport:
        script = Script.model_validate({"replies": replies})
        agent: Agent = ScriptedAgent(script)
        if agent_kind == "claude":
            server = scripted_model_server(script)
            agent = server.claude_agent(timeout=90, request_timeout=20)
        runner = Runner(
            agent, mode=mode, max_attempts=max_attempts, on_event=events.append, retry=retry
        )
        return runner.run_sync(on or task, project)

    return run


@pytest.fixture
def run_pipeline(
    tmp_path: Path, agent_kind: str, scripted_model_server: ScriptedServerFactory
) -> Callable[..., FinishedPipeline]:
    """Run a pipeline (given as data) with a model replaying ``replies`` in a fresh work dir.

    With ``agent_kind == "claude"`` the real CLI runs against the scripted model server;
    otherwise the in-process scripted agent replays the same script.
    """
    counter = iter(range(1_000))

    def run(
        pipeline: dict[str, Any],
        replies: list[dict[str, Any]],
        *,
        isolation: Isolation = "session",
        files: dict[str, str] | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> FinishedPipeline:
        work = tmp_path / f"work{next(counter)}"
        work.mkdir()
        for name, text in (files or {}).items():
            (work / name).write_text(text)
        script = Script.model_validate({"replies": replies})
        agent: Agent = ScriptedAgent(script, continue_script=isolation == "process")
        server = None
        if agent_kind == "claude":
            server = scripted_model_server(script)
            agent = server.claude_agent(timeout=90, request_timeout=20)
        events: list[RunEvent] = []

        def sink(event: RunEvent) -> None:
            events.append(event)
            if on_event is not None:
                on_event(event)

        runner = PipelineRunner(agent, isolation=isolation, on_event=sink, retry=FAST_RETRIES)
        report = runner.run_sync(Pipeline.model_validate(pipeline), work)
        instructions = server.user_texts() if server is not None else []
        return FinishedPipeline(report, events, instructions, work)

    return run


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's temporary folder, for this test only: ``tempfile`` (and any child given
    ``TMPDIR``) makes its folders there, so sweeping it touches nothing else."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    return root
