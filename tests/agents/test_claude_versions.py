"""Which Claude Code a run uses: the bundled CLI's pinned version, a ``cli_path``'s answer to
``--version``; runs record it, and a CLI outside the tested window gets one warning."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from phasegate import ClaudeAgent, PipelineRunner, RunEvent, Runner, Task
from phasegate.errors import ClaudeCodeVersionWarning
from phasegate.phases.pipeline import Pipeline
from phasegate.agents.claude import versions
from phasegate.agents.claude import window as window_module
from phasegate.agents.claude.versions import (
    bundled_cli_version,
    claude_agent_sdk_version,
    claude_code_version,
    parse_version,
)
from phasegate.agents.claude.window import release_window
from phasegate.agents.protocol import agent_version
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory, bundled_cli_path
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER, NO_RETRIES

GOOD_RUN: list[dict[str, Any]] = [{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}]


def fake_cli(folder: Path, body: str) -> Path:
    """An executable shell script named ``claude`` in ``folder`` running ``body``."""
    folder.mkdir(parents=True, exist_ok=True)
    cli = folder / "claude"
    cli.write_text(f"#!/bin/sh\n{body}\n")
    cli.chmod(0o755)
    return cli


def bundled_or_skip() -> Path:
    """The CLI bundled with claude-agent-sdk (the test is skipped without it)."""
    bundled = bundled_cli_path()
    if bundled is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")
    return bundled


class VersionedAgent(ScriptedAgent):
    """The scripted agent, saying it runs ``version`` (as an adapter of a real runtime would)."""

    def __init__(self, script: Script, version: Any) -> None:
        super().__init__(script)
        self._version = version

    def version(self) -> Any:
        return self._version


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Claude Code version warned about yet, as in a process that just started."""
    monkeypatch.setattr(window_module, "_warned", set())


def test_the_version_is_read_from_what_the_cli_prints() -> None:
    """``2.1.332 (Claude Code)`` is 2.1.332; text without a number is no version."""
    assert parse_version("2.1.332 (Claude Code)") == "2.1.332"
    assert parse_version("Claude Code") is None
    assert parse_version(None) is None


def test_the_bundled_cli_version_is_the_one_the_sdk_pins_and_the_cli_itself_says() -> None:
    """claude_agent_sdk/_cli_version.py and the binary beside it agree."""
    bundled = bundled_or_skip()

    said = subprocess.run(
        [str(bundled), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout

    assert claude_code_version() == bundled_cli_version() == parse_version(said)


def test_the_bundled_cli_version_is_read_as_text_without_importing_the_sdk(
    tmp_path: Path,
) -> None:
    """A claude_agent_sdk whose import would fail still tells its pinned version, and a lookup
    in a fresh interpreter leaves claude_agent_sdk unimported (it costs 0.6 s)."""
    package = tmp_path / "claude_agent_sdk"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "_cli_version.py").write_text('"""Pinned."""\n\n__cli_version__ = "2.1.340"\n')
    fake_cli(package / "_bundled", "echo 'not asked'")
    code = (
        "import sys; from phasegate.agents.claude.versions import claude_code_version; "
        "print(claude_code_version(), 'claude_agent_sdk' in sys.modules)"
    )

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2.1.340", "False"]


def test_a_cli_path_is_asked_its_version_once_per_process(tmp_path: Path) -> None:
    """A fake CLI printing a version: that version, and a second lookup does not run it again."""
    asked = tmp_path / "asked"
    cli = fake_cli(tmp_path / "bin", f"echo once >> {asked}\necho '2.1.400 (Claude Code)'")

    assert claude_code_version(cli) == "2.1.400"
    assert claude_code_version(str(cli)) == "2.1.400"
    assert ClaudeAgent(cli_path=cli).version() == "2.1.400"
    assert asked.read_text().splitlines() == ["once"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("echo 'boom' >&2\nexit 1", id="it fails"),
        pytest.param("exit 0", id="it prints nothing"),
        pytest.param("sleep 5", id="it does not answer in time"),
    ],
)
def test_a_cli_path_that_will_not_say_its_version_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    """A failing, silent or hanging CLI gives None, never an error: running it will say more."""
    monkeypatch.setattr(versions, "VERSION_TIMEOUT", 0.5)
    cli = fake_cli(tmp_path / "bin", body)

    assert claude_code_version(cli) is None
    assert claude_code_version(tmp_path / "no-such-claude") is None


def test_the_sdk_version_comes_from_its_package_metadata() -> None:
    """The distribution's version, as pip knows it (the package is not imported)."""
    assert claude_agent_sdk_version() == importlib.metadata.version("claude-agent-sdk")


def test_an_agent_without_a_version_method_has_no_version() -> None:
    """The scripted agent, or a version() that returns no string: unknown (None)."""
    script = Script.model_validate({"replies": GOOD_RUN})

    assert agent_version(ScriptedAgent(script)) is None
    assert agent_version(VersionedAgent(script, 2)) is None
    assert agent_version(VersionedAgent(script, "")) is None


def test_a_run_records_the_agents_version_in_run_started_and_the_report(
    task: Task, project: Path
) -> None:
    """What ``version()`` says is the ``agent_version`` of run.started and of the report; the
    scripted agent's is null."""
    script = Script.model_validate({"replies": GOOD_RUN})
    events: list[RunEvent] = []

    report = Runner(VersionedAgent(script, "1.2.3"), on_event=events.append).run_sync(task, project)
    plain = Runner(ScriptedAgent(script)).run_sync(task, project)

    assert report.verdict == "accepted"
    assert events[0].event == "run.started" and events[0].fields["agent_version"] == "1.2.3"
    assert report.agent_version == "1.2.3"
    assert report.model_dump(mode="json")["agent_version"] == "1.2.3"
    assert plain.agent_version is None


def test_a_pipeline_records_the_agents_version_in_pipeline_started_and_its_report(
    tmp_path: Path,
) -> None:
    """The same for pipeline runs: pipeline.started and the PipelineReport."""
    stage = {
        "name": "only",
        "prompt": "Write done.txt.",
        "exit_when": [{"file_exists": "done.txt"}],
    }
    pipeline = Pipeline.model_validate({"name": "p", "stages": [stage]})
    write = {"Write": {"file_path": "done.txt", "content": "done\n"}}
    script = Script.model_validate(
        {"replies": [{"tools": [write]}, {"when": "tool_result", "text": "Done."}]}
    )
    events: list[RunEvent] = []

    report = PipelineRunner(VersionedAgent(script, "1.2.3"), on_event=events.append).run_sync(
        pipeline, tmp_path
    )

    assert report.verdict == "accepted", report.error
    started = [e for e in events if e.event == "pipeline.started"]
    assert [e.fields["agent_version"] for e in started] == ["1.2.3"]
    assert report.agent_version == "1.2.3"


@pytest.mark.cli
def test_a_claude_code_run_records_the_bundled_cli_version(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A real run of the bundled CLI: run.started and the report carry its version."""
    bundled_or_skip()
    server = scripted_model_server(Script.model_validate({"replies": GOOD_RUN}))
    events: list[RunEvent] = []

    report = Runner(server.claude_agent(), on_event=events.append, retry=NO_RETRIES).run_sync(
        task, project
    )

    pinned = bundled_cli_version()
    assert report.verdict == "accepted", report.issues
    assert pinned is not None and report.agent_version == pinned
    assert events[0].event == "run.started" and events[0].fields["agent_version"] == pinned


def newer_cli(folder: Path, bundled: Path) -> Path:
    """A CLI that says it is Claude Code 9.9.9 and otherwise runs the bundled one."""
    return fake_cli(
        folder,
        'if [ "$1" = "--version" ]; then echo "9.9.9 (Claude Code)"; exit 0; fi\n'
        f'exec "{bundled}" "$@"',
    )


@pytest.mark.cli
@pytest.mark.usefixtures("fresh_process")
def test_runs_with_a_cli_newer_than_the_window_go_on_with_one_warning(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Two accepted runs of a CLI saying 9.9.9: one ClaudeCodeVersionWarning in the process,
    naming the version, the window and what to do; both reports record 9.9.9."""
    cli = newer_cli(tmp_path / "bin", bundled_or_skip())
    script = Script.model_validate({"replies": GOOD_RUN})
    reports = []

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # Python's own once-per-place rule is not the test
        for _ in range(2):
            server = scripted_model_server(script)
            agent = server.claude_agent(cli_path=cli)
            reports.append(Runner(agent, retry=NO_RETRIES).run_sync(task, project))
            (project / "app.py").write_text((EXAMPLE / "project" / "app.py").read_text())

    assert [r.verdict for r in reports] == ["accepted", "accepted"]
    assert [r.agent_version for r in reports] == ["9.9.9", "9.9.9"]
    (warning,) = [w for w in caught if w.category is ClaudeCodeVersionWarning]
    message = str(warning.message)
    assert message.startswith("Claude Code 9.9.9 is newer than the releases")
    assert f"({release_window().describe()})" in message
    assert "pin claude-agent-sdk to a tested release" in message


@pytest.mark.cli
def test_the_command_line_shows_the_warning_once_on_stderr_and_the_run_goes_on(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``phasegate run --cli-path`` with a CLI newer than the window: exit 0, one
    ``phasegate: warning:`` line, and the start line names the version."""
    cli = newer_cli(tmp_path / "bin", bundled_or_skip())
    server = scripted_model_server(EXAMPLE / "model.yaml")
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text((EXAMPLE / "project" / "app.py").read_text())

    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "run", str(EXAMPLE / "task.yaml"), "-w", str(work),
         "--cli-path", str(cli), "--retries", "0"],
        env={**os.environ, **server.env()}, capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("phasegate: warning:")]
    assert len(warned) == 1, done.stderr
    assert warned[0].startswith("phasegate: warning: Claude Code 9.9.9 is newer than")
    assert "agent claude 9.9.9" in done.stderr
