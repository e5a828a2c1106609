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

from phasegate.evidence.transcript import Entry, ToolCall, ToolResult, Transcript
from phasegate.evidence.workspace import WorkspaceSnapshot, WorkspaceTimeline
from phasegate.phases.model import Phase, Task
from phasegate.prompts.templates import PROMPTS_DIR_ENV

# Fuzz tests (marked ``fuzz``) take their example count from the profile: a few hundred in
# ``make test``, many thousands in ``make fuzz``. No deadline: speed is measured in bench/.
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("fuzz", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("PHASEGATE_FUZZ_PROFILE", "default"))

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


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's temporary folder, for this test only: ``tempfile`` (and any child given
    ``TMPDIR``) makes its folders there, so sweeping it touches nothing else."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    return root
