"""``phasegate loop`` as a user runs it: the real Claude Code CLI against the scripted model,
a Ralph loop that ends on the agent's own promise, or on its iteration limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script

Completed = subprocess.CompletedProcess[str]
PROMISE = "<promise>ALL TESTS PASS</promise>"
SAID_ON_THREE: list[dict[str, Any]] = [
    {"text": f"The format to use later:\n\n```\n{PROMISE}\n```"},  # code: not said
    {"when": "user", "text": f"One test still fails, so I cannot output {PROMISE} yet."},
    {"when": "user", "text": f"Every test passes now.\n\n{PROMISE}"},
    {"when": "user", "text": "A fourth iteration must never be asked for."},
]


def run_cli(*args: str | Path, env: dict[str, str] | None = None) -> Completed:
    """``phasegate ...`` in a subprocess, with ``env`` over this one's."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.mark.cli
def test_a_loop_whose_promise_is_said_on_iteration_three_stops_after_three(
    work: Path, tmp_path: Path
) -> None:
    """Iteration 1 quotes the promise in code and iteration 2 mentions it mid-sentence
    (neither is said); iteration 3 says it on its own line; no 4th instruction reaches the
    model. The report and the events count 3 iterations."""
    log = tmp_path / "events.jsonl"
    with ScriptedModelServer(Script.model_validate({"replies": SAID_ON_THREE})) as server:
        done = run_cli(
            "loop", "Make every test pass.", "--promise", "ALL TESTS PASS", "--workdir", work,
            "--json", "-q", "--log-file", log, env=server.env(),
        )  # fmt: skip
        instructions = server.user_texts()

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["verdict"], report["iterations"], report["max_iterations"]) == (
        "accepted",
        3,
        10,
    )
    assert report["promise"] == "ALL TESTS PASS" and report["promise_said"] is True
    assert len(instructions) == 3
    assert (
        instructions[0].startswith("Stage 1 of 1: loop")
        and "Make every test pass." in instructions[0]
    )
    assert "appears in your replies only inside code" in instructions[1]
    assert "only inside a sentence or a quote, not on a line of its own" in instructions[2]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    started = next(e for e in events if e["event"] == "pipeline.started")
    completed = next(e for e in events if e["event"] == "pipeline.completed")
    assert started["loop"] == {"promise": "ALL TESTS PASS", "max_iterations": 10}
    assert completed["iterations"] == 3
    assert [e["attempt"] for e in events if e["event"] == "stage.checked"] == [1, 2, 3]


@pytest.mark.cli
def test_a_loop_that_never_says_its_promise_stops_at_max_iterations_with_exit_one(
    work: Path, tmp_path: Path
) -> None:
    """Four iterations, each ending without the promise: rejected, exit 1, counted."""
    script = tmp_path / "never.yaml"
    script.write_text(yaml.safe_dump({"replies": [
        {"text": "Working on it."},
        *({"when": "user", "text": f"Still working ({n})."} for n in range(2, 9)),
    ]}))  # fmt: skip
    done = run_cli(
        "loop", "Make every test pass.", "--promise", "ALL TESTS PASS", "--max-iterations", "4",
        "--workdir", work, "--model-script", script, "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert (report["verdict"], report["iterations"], report["max_iterations"]) == ("rejected", 4, 4)
    assert report["promise_said"] is False
    assert report["stages"][0]["checks"][0]["detail"] == (
        "you did not say <promise>ALL TESTS PASS</promise> in this stage"
    )
    assert "■ rejected after 4 iterations" in done.stderr


@pytest.mark.cli
def test_a_model_script_that_stops_matching_is_named_in_a_warning(
    work: Path, tmp_path: Path
) -> None:
    """A reply waiting for words the feedback never holds: the run says which reply and what
    came, on stderr and in the model's last word, instead of ending in silence."""
    script = tmp_path / "waits.yaml"
    script.write_text(yaml.safe_dump({"replies": [
        {"text": "Working on it."},
        {"when": "user", "contains": "words no feedback holds", "text": "Done.\n\n" + PROMISE},
    ]}))  # fmt: skip
    done = run_cli(
        "loop", "Make every test pass.", "--promise", "ALL TESTS PASS", "--max-iterations", "2",
        "--workdir", work, "--model-script", script, "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "phasegate: warning:" in line]
    assert warnings, done.stderr
    assert f"model script {script}: script reply 2 " in warnings[0]
    assert "(when: user, contains: 'words no feedback holds')" in warnings[0]
    assert "which held user: 'Stop hook feedback:" in warnings[0]
    report = json.loads(done.stdout)
    assert report["final_message"].startswith(ScriptedModelServer.UNMATCHED_PREFIX)


@pytest.mark.cli
def test_a_loop_prompt_holding_a_template_variable_reaches_the_model_as_written(
    work: Path, tmp_path: Path
) -> None:
    """A loop declares no inputs: {{ name }} is text, never a load error or a traceback."""
    script = tmp_path / "says.yaml"
    reply = {"contains": "Hello {{ name }}!", "text": "Filled.\n\n<promise>DONE</promise>"}
    script.write_text(yaml.safe_dump({"replies": [reply]}))  # answers only the literal text
    done = run_cli(
        "loop", "Fill the template: Hello {{ name }}!", "--promise", "DONE", "--workdir", work,
        "--model-script", script, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["iterations"] == 1


@pytest.mark.parametrize(
    ("front", "where"),
    [
        ("iteration: abc\nmax_iterations: 5\ncompletion_promise: DONE\n", "line 3 (iteration)"),
        ("iteration: 1\nmax_iterations: -2\ncompletion_promise: DONE\n", "line 4 (max_iterations)"),
        ("iteration: 1\nmax_iterations: 5\n", None),
    ],
    ids=["not-a-number", "negative", "never-closed"],
)
def test_a_ralph_state_file_with_broken_front_matter_is_exit_two_with_the_line_and_kept(
    work: Path, front: str, where: str | None
) -> None:
    """Ralph's hook deletes such a file and lets the session stop; phasegate says where it is
    broken, runs no agent, and leaves the file as it was."""
    state = work / ".claude" / "ralph-loop.local.md"
    state.parent.mkdir()
    closing = "---\n" if where is not None else ""
    text = f"---\nactive: true\n{front}{closing}\nFix the bug.\n"
    state.write_text(text)
    done = run_cli("loop", "--state", state, "--workdir", work, "--agent", "scripted",
                   "--script", work / "none.yaml")  # fmt: skip
    assert done.returncode == 2
    expected = where or "line 1"
    assert f"{state}: {expected}: " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert state.read_text() == text
    assert not (work / ".phasegate").exists()


@pytest.mark.parametrize("char", ["\u200b", "\ufeff", "\u2060"])
def test_a_promise_holding_an_invisible_character_is_exit_two_naming_its_code_point(
    work: Path, char: str
) -> None:
    """``DONE`` followed by a zero-width space looks like ``DONE``: a loop waiting for it
    would never end, its feedback showing two promises that look the same."""
    done = run_cli("loop", "Fix it.", "--promise", f"DONE{char}", "--workdir", work,
                   "--agent", "scripted", "--script", work / "none.yaml")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"U+{ord(char):04X} (" in done.stderr and "--promise" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / ".phasegate").exists()


def test_an_invisible_character_in_a_ralph_state_files_promise_names_the_file_and_key(
    work: Path,
) -> None:
    state = work / ".claude" / "ralph-loop.local.md"
    state.parent.mkdir()
    state.write_text(
        "---\nactive: true\niteration: 1\nmax_iterations: 5\n"
        'completion_promise: "DONE\u200b"\n---\n\nFix it.\n'
    )
    done = run_cli("loop", "--state", state, "--workdir", work, "--agent", "scripted",
                   "--script", work / "none.yaml")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{state}: completion_promise: the promise holds an invisible character, U+200B" in (
        done.stderr
    )
    assert "--promise" not in done.stderr and "Traceback" not in done.stderr
