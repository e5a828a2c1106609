"""``phasegate pipeline run | resume`` as a user runs them: the real CLI, real processes.

The runner process is killed with SIGKILL in the middle of stage 2 (the scripted model holds
stage 2's request unanswered, so "the middle" is exact), and ``resume`` finishes the run
without redoing stage 1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script
from phasegate.pipelines.state import load_state, state_path
from tests.helpers.read_only import read_only
from tests.helpers.three_stages import THREE, write_step

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "prd-to-code"
PHASEGATE = [sys.executable, "-m", "phasegate", "pipeline"]

KILLED_IN_STAGE_TWO: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 3: one", "tools": [write_step("one")]},
    {"when": "tool_result", "text": "One done."},
    {"contains": "Stage 2 of 3: two", "hang": True},  # the runner is killed while it waits
    {"contains": "was interrupted", "tools": [write_step("two")]},
    {"when": "tool_result", "text": "Two done."},
    {"contains": "Stage 3 of 3: three", "tools": [write_step("three")]},
    {"when": "tool_result", "text": "Three done."},
]


def pipeline_cli(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``phasegate pipeline ...`` in a subprocess and capture everything."""
    return subprocess.run(
        [*PHASEGATE, *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def three(tmp_path: Path) -> Path:
    """The three-stage pipeline file."""
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump(THREE))
    return path


RESUMED = KILLED_IN_STAGE_TWO[3:]
"""The replies after the kill (stage 2 taken up again, then stage 3), for a resume in a
copy of the killed run's work directory."""


@dataclass(frozen=True)
class Killed:
    """A run of ``three.yaml`` killed in stage 2, made once for the module (each of its
    tests needs one; a run to the kill costs a CLI session and a half)."""

    pipeline: Path
    work: Path
    """Its work directory: for the one test that resumes in the saved session (Claude Code
    keeps sessions by the work directory's path, so a copy elsewhere has none)."""
    server: ScriptedModelServer
    """The server it ran against, with the replies after the kill still to give: that test
    resumes against it (a new server would number its messages and tool calls from 1 again,
    which the saved session already holds)."""
    as_killed: Path
    """A copy of the work directory made right after the kill, for :func:`killed_copy`."""


@pytest.fixture(scope="module")
def killed_in_stage_two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Killed]:
    """A run killed (SIGKILL, its whole process group) while stage 2 waits on the model."""
    base = tmp_path_factory.mktemp("killed")
    pipeline, work = base / "three.yaml", base / "work"
    pipeline.write_text(yaml.safe_dump(THREE))
    work.mkdir()
    with ScriptedModelServer(Script.model_validate({"replies": KILLED_IN_STAGE_TWO})) as server:
        runner = subprocess.Popen(
            [*PHASEGATE, "run", str(pipeline), "--workdir", str(work)],
            env={**os.environ, **server.env()},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not any(r.status is None for r in server.main_requests()):
                assert runner.poll() is None, "the run ended before stage 2"
                assert time.monotonic() < deadline, "stage 2 never reached the model"
                time.sleep(0.05)
        finally:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
        as_killed = base / "as-killed"
        shutil.copytree(work, as_killed, symlinks=True)
        yield Killed(pipeline, work, server, as_killed)


@pytest.fixture
def killed_copy(killed_in_stage_two: Killed, tmp_path: Path) -> Path:
    """A work directory of this test's own, as the killed run left it."""
    return Path(shutil.copytree(killed_in_stage_two.as_killed, tmp_path / "killed", symlinks=True))


def _resuming() -> ScriptedModelServer:
    return ScriptedModelServer(Script.model_validate({"replies": RESUMED}))


@pytest.mark.cli
def test_resume_after_sigkill_in_stage_two_finishes_without_redoing_stage_one(
    killed_in_stage_two: Killed,
) -> None:
    """The state survives the kill whole; resume continues stage 2 in the saved session."""
    work, three = killed_in_stage_two.work, killed_in_stage_two.pipeline
    state = load_state(work)  # whole and valid right after the kill
    assert (state.status, state.stage) == ("running", 1)
    assert [s.status for s in state.stages] == ["accepted", "running", "pending"]
    stage_one = (work / "one.md").stat().st_mtime_ns
    server = killed_in_stage_two.server
    before = len(server.user_texts())

    done = pipeline_cli("resume", three, "--workdir", work, "--json", env=server.env())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "accepted" and report["resumes"] == 1
    assert [(s["name"], s["status"], s["attempts"]) for s in report["stages"]] == [
        ("one", "accepted", 1),
        ("two", "accepted", 1),
        ("three", "accepted", 1),
    ]
    assert "resuming stage 2 (two) in the saved session" in done.stderr
    after = server.user_texts()[before:]
    assert len(after) == 2 and "was interrupted" in after[0]
    assert "Stages already complete,\nwith their work on disk: one." in after[0]
    assert not any("Stage 1 of 3" in text for text in after[1:])
    assert (work / "one.md").stat().st_mtime_ns == stage_one  # stage 1 was not redone
    assert (work / "three.md").read_text() == "three\n"
    assert load_state(work).status == "accepted"


@pytest.mark.cli
def test_resume_starts_a_fresh_session_with_a_recap_when_the_saved_one_is_gone(
    killed_in_stage_two: Killed, killed_copy: Path, tmp_path: Path
) -> None:
    """Another machine (no saved session): the recap alone carries the run on."""
    three = killed_in_stage_two.pipeline
    with _resuming() as server:
        elsewhere = server.env(home=tmp_path / "other-home")
        done = pipeline_cli("resume", three, "--workdir", killed_copy, "--json", env=elsewhere)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "accepted"
    assert "in a fresh session with a recap" in done.stderr


@pytest.mark.cli
def test_a_malformed_state_file_is_a_clear_error_and_never_a_silent_restart(
    three: Path, work: Path
) -> None:
    """resume and run both refuse, exit 2, leave the file as it was and run no agent."""
    path = state_path(work)
    path.parent.mkdir()
    path.write_text('{"pipeline": "three", "stage": ')
    with ScriptedModelServer(Script.model_validate({"replies": KILLED_IN_STAGE_TWO})) as server:
        resumed = pipeline_cli("resume", three, "--workdir", work, env=server.env())
        rerun = pipeline_cli("run", three, "--workdir", work, env=server.env())
        assert server.main_requests() == []
    for done in (resumed, rerun):
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert str(path) in done.stderr and "not valid JSON" in done.stderr
        assert "--restart" in done.stderr
    assert path.read_text() == '{"pipeline": "three", "stage": '
    assert list(work.iterdir()) == [path.parent]


@pytest.mark.cli
def test_run_refuses_to_overwrite_an_unfinished_run_unless_told_to_restart(
    killed_in_stage_two: Killed, killed_copy: Path
) -> None:
    """An interrupted run's state is kept; --restart starts over on purpose."""
    work, three = killed_copy, killed_in_stage_two.pipeline
    with _resuming() as server:  # never asked: the run is refused before any agent starts
        refused = pipeline_cli("run", three, "--workdir", work, env=server.env())
        assert server.requests == []
    assert refused.returncode == 2
    assert "unfinished (stage two, running)" in refused.stderr
    assert "resume it, or start over" in refused.stderr
    assert refused.stderr.rstrip().endswith("(command line: --restart)")
    interrupted = load_state(work)
    assert interrupted.stage == 1

    script = work.parent / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": _happy_replies()}))
    restarted = pipeline_cli(
        "run", three, "--workdir", work, "--restart", "--agent", "scripted", "--script", script
    )
    assert restarted.returncode == 0, restarted.stderr
    fresh = load_state(work)
    assert fresh.run_id != interrupted.run_id and fresh.status == "accepted"


def test_resume_refuses_a_finished_run_and_a_changed_pipeline(three: Path, work: Path) -> None:
    """Nothing to resume after an accepted run; a resumed run must keep its definition."""
    script = work.parent / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": _happy_replies()}))
    done = pipeline_cli(
        "run", three, "--workdir", work, "--agent", "scripted", "--script", script, "-q"
    )
    assert done.returncode == 0, done.stderr
    finished = pipeline_cli(
        "resume", three, "--workdir", work, "--agent", "scripted", "--script", script
    )
    assert finished.returncode == 2 and "already finished (accepted)" in finished.stderr

    state = load_state(work)
    state.status = "error"
    state_path(work).write_text(state.model_dump_json())
    changed = three.parent / "changed.yaml"
    changed.write_text(three.read_text().replace("Write two.md.", "Write two.md now."))
    refused = pipeline_cli(
        "resume", changed, "--workdir", work, "--agent", "scripted", "--script", script
    )
    assert refused.returncode == 2
    assert "another definition of pipeline 'three'" in refused.stderr


def _happy_replies() -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for number, name in enumerate(("one", "two", "three"), start=1):
        replies.append({"contains": f"Stage {number} of 3: {name}", "tools": [write_step(name)]})
        replies.append({"when": "tool_result", "text": f"{name} done."})
    return replies


@pytest.mark.cli
def test_a_stage_that_never_passes_exits_one_with_the_failed_checks_listed(
    three: Path, work: Path
) -> None:
    """Bounded failure through the real CLI: retries spent, rejected, exit 1."""
    replies = {"replies": [{"text": "I am done."}] * 3}
    script = work.parent / "lazy.yaml"
    script.write_text(yaml.safe_dump(replies))
    done = pipeline_cli("run", three, "--workdir", work, "--model-script", script)
    assert done.returncode == 1, done.stderr
    assert "three: REJECTED" in done.stdout
    assert "stage 1 one: rejected after 3 check(s)" in done.stdout
    assert "✗ one.md exists: one.md does not exist" in done.stdout
    assert "stage 2 two: pending" in done.stdout


@pytest.mark.cli
def test_the_prd_to_code_example_runs_offline_as_the_readme_says(tmp_path: Path) -> None:
    """Architecture, test plan, implementation whose tests fail once and then pass."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    done = pipeline_cli(
        "run", EXAMPLE / "pipeline.yaml", "--workdir", work,
        "--model-script", EXAMPLE / "model.yaml", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sessions"] == 1
    assert [(s["name"], s["attempts"]) for s in report["stages"]] == [
        ("architect", 1),
        ("qa", 1),
        ("implement", 2),
    ]
    tests = subprocess.run(
        ["python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-q"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stderr


def test_a_bad_isolation_value_is_a_usage_error(three: Path, work: Path) -> None:
    """Click's own check: exit 2 and the allowed values."""
    done = pipeline_cli("run", three, "--workdir", work, "--isolation", "thread")
    assert done.returncode == 2
    assert "session" in done.stderr and "process" in done.stderr


CHANGE_SOMETHING: dict[str, Any] = {
    "name": "two",
    "stages": [
        {"name": "one", "prompt": "Write one.md.", "exit_when": [{"file_exists": "one.md"}]},
        {
            "name": "two",
            "prompt": "Change a file.",
            "exit_when": [{"changed": "**"}],
            "on_fail": {"retry": 0},
        },
    ],
}
"""Stage two passes only if a file changes in it; the scripted model changes nothing."""


@pytest.mark.parametrize("log", ["runs.jsonl", "logs/runs.jsonl"])
def test_a_pipeline_logging_into_its_work_directory_is_judged_without_its_log_or_state(
    tmp_path: Path, work: Path, log: str
) -> None:
    """Neither the growing log nor the state in .phasegate counts as a change the agent
    made: stage two, where the agent changes nothing, is rejected (exit 1)."""
    pipeline, script = tmp_path / "two.yaml", tmp_path / "script.yaml"
    pipeline.write_text(yaml.safe_dump(CHANGE_SOMETHING))
    replies = [
        {"contains": "Stage 1 of 2: one", "tools": [write_step("one")]},
        {"when": "tool_result", "text": "One done."},
        {"contains": "Stage 2 of 2: two", "text": "I change nothing."},
    ]
    script.write_text(yaml.safe_dump({"replies": replies}))
    (work / "logs").mkdir()
    done = pipeline_cli(
        "run", pipeline, "--workdir", work, "--agent", "scripted", "--script", script,
        "--log-file", work / log, "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [(s["status"], s["files_changed"]) for s in report["stages"]] == [
        ("accepted", ["one.md"]),
        ("rejected", []),
    ]
    lines = [json.loads(line) for line in (work / log).read_text().splitlines()]
    assert lines[-1]["event"] == "pipeline.completed"


@pytest.mark.parametrize("target", ["three.yaml", "script.yaml", "prompts/one.md", "state"])
def test_a_log_file_that_is_a_pipeline_input_is_refused(
    tmp_path: Path, work: Path, target: str
) -> None:
    """The pipeline file, the script, a stage's prompt file, the state file: exit 2."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "one.md").write_text("Write one.md.\n")
    data = {
        **THREE,
        "stages": [{**THREE["stages"][0], "prompt": None, "prompt_file": "prompts/one.md"}],
    }
    (tmp_path / "three.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"replies": _happy_replies()}))
    state_path(work).parent.mkdir()
    state_path(work).write_text("{}")
    log = state_path(work) if target == "state" else tmp_path / target
    before = log.read_bytes()
    done = pipeline_cli(
        "run", tmp_path / "three.yaml", "--workdir", work, "--restart", "--agent", "scripted",
        "--script", tmp_path / "script.yaml", "--log-file", log,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "log to another file" in done.stderr and "Traceback" not in done.stderr
    assert log.read_bytes() == before


def test_a_work_directory_without_room_for_the_state_is_refused_before_the_agent_starts(
    tmp_path: Path, work: Path, three: Path
) -> None:
    """`.phasegate` is a file, so the state cannot be kept: exit 2 (bad input), not 3."""
    (work / ".phasegate").write_text("not a directory")
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": _happy_replies()}))
    done = pipeline_cli("run", three, "--workdir", work, "--agent", "scripted", "--script", script)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot keep the pipeline's state in {work / '.phasegate'}" in done.stderr
    assert "(command line: --workdir)" in done.stderr
    assert sorted(p.name for p in work.iterdir()) == [".phasegate"]  # the agent never ran


def test_a_read_only_work_directory_is_refused_with_exit_two(
    tmp_path: Path, work: Path, three: Path
) -> None:
    """As `run` refuses a work directory it cannot use: exit 2 with what to do."""
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": _happy_replies()}))
    with read_only(work):
        done = pipeline_cli(
            "run", three, "--workdir", work, "--agent", "scripted", "--script", script
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "make it writable" in done.stderr and "Traceback" not in done.stderr
    assert list(work.iterdir()) == []


def test_a_script_without_the_scripted_agent_is_refused_not_ignored(
    three: Path, work: Path
) -> None:
    """--script alone would silently run the real CLI: exit 2 instead."""
    done = pipeline_cli("run", three, "--workdir", work, "--script", three)
    assert done.returncode == 2
    assert "--script is for --agent scripted" in done.stderr
