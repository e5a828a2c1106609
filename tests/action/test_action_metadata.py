"""``action.yml`` read as data: documented, every expression names something real, and no
value of any input can become shell code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from phasegate._github.outputs import OUTPUT_NAMES as OUTPUTS
from phasegate.modes import Mode

ACTION = Path(__file__).resolve().parents[2] / "action.yml"
INPUTS = [
    "command",
    "task",
    "pipeline",
    "workdir",
    "mode",
    "model",
    "max_attempts",
    "timeout",
    "max_cost",
    "anthropic_api_key",
    "claude_code_oauth_token",
    "model_script",
    "execution_file",
    "before",
    "fail_on",
    "summary",
    "python_version",
    "log_file",
    "record",
    "sandbox",
]
"""The inputs the contract names, in its order."""
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    """The parsed action.yml."""
    loaded: dict[str, Any] = yaml.safe_load(ACTION.read_text())
    return loaded


def steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    """The composite steps."""
    found: list[dict[str, Any]] = action["runs"]["steps"]
    return found


def test_the_action_is_composite_with_the_contracts_inputs_and_outputs_in_order(
    action: dict[str, Any],
) -> None:
    """Users read the inputs and outputs in the contract's order, in the docs and here."""
    assert action["runs"]["using"] == "composite"
    assert list(action["inputs"]) == INPUTS
    assert tuple(action["outputs"]) == OUTPUTS


def test_every_input_and_output_has_a_description(action: dict[str, Any]) -> None:
    """GitHub shows the descriptions on the Marketplace and in editors."""
    undocumented = [
        name
        for section in ("inputs", "outputs")
        for name, spec in action[section].items()
        if not str(spec.get("description", "")).strip()
    ]
    assert undocumented == []


def test_every_output_is_the_step_output_the_github_step_writes(action: dict[str, Any]) -> None:
    """Each output reads the same name from the ``github`` step, the one that runs
    ``phasegate github`` (which writes every output name)."""
    (github,) = [step for step in steps(action) if step.get("id") == "github"]
    assert '"$PHASEGATE" github ' in github["run"]
    for name, spec in action["outputs"].items():
        assert spec["value"] == f"${{{{ steps.github.outputs.{name} }}}}"


def test_every_input_an_expression_names_is_declared(action: dict[str, Any]) -> None:
    """A misspelt ``inputs.X`` would be empty on GitHub, silently."""
    named = set(re.findall(r"\binputs\.(\w+)", ACTION.read_text()))
    assert named, "the action reads no inputs?"
    assert named <= set(action["inputs"])


def test_every_step_an_expression_names_runs_earlier(action: dict[str, Any]) -> None:
    """``steps.ID.outputs`` of a later or missing step is empty on GitHub, silently."""
    seen: set[str] = set()
    for step in steps(action):
        text = yaml.safe_dump(step)
        for step_id in re.findall(r"\bsteps\.([\w-]+)\.outputs\b", text):
            assert step_id in seen, f"step {step.get('id')} reads {step_id} before it runs"
        if "id" in step:
            seen.add(step["id"])


def test_no_run_script_holds_an_expression_so_inputs_reach_bash_only_through_env(
    action: dict[str, Any],
) -> None:
    """An expression inside ``run:`` is pasted into the script before bash reads it: a value
    such as ``"; curl ... #`` would run. Inputs go through ``env:`` as plain variables."""
    scripts = {step["id"]: step["run"] for step in steps(action) if "run" in step}
    assert scripts
    with_expressions = {
        name: EXPRESSION.findall(script) for name, script in scripts.items() if "${{" in script
    }
    assert with_expressions == {}


def test_env_values_are_whole_expressions_of_inputs_runner_context_or_earlier_steps(
    action: dict[str, Any],
) -> None:
    """Each ``env:`` value is one expression of a trusted kind: an input, ``runner.*``, or an
    output of one of the action's own steps."""
    trusted = re.compile(r"\$\{\{ (inputs\.\w+|runner\.\w+|steps\.[\w-]+\.outputs\.[\w-]+) \}\}")
    for step in steps(action):
        for name, value in (step.get("env") or {}).items():
            assert trusted.fullmatch(str(value)), f"{step.get('id')}: {name}: {value}"


RUN_STEPS = [
    step["id"] for step in yaml.safe_load(ACTION.read_text())["runs"]["steps"] if "run" in step
]


@pytest.mark.parametrize("step_id", RUN_STEPS)
def test_each_run_script_is_valid_bash(action: dict[str, Any], step_id: str) -> None:
    """``bash -n`` accepts every script (a syntax error would only show on a runner)."""
    (step,) = [step for step in steps(action) if step.get("id") == step_id]
    assert step["shell"] == "bash"
    checked = subprocess.run(
        ["bash", "-n"], input=step["run"], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, (step.get("id"), checked.stderr)


def test_setup_python_runs_only_when_a_version_is_asked_for(action: dict[str, Any]) -> None:
    """The runner's own python3 is used unless ``python_version`` names one."""
    (setup,) = [s for s in steps(action) if str(s.get("uses", "")).startswith("actions/setup-")]
    assert setup["uses"] == "actions/setup-python@v5"
    assert setup["if"] == "inputs.python_version != ''"
    assert setup["with"] == {"python-version": "${{ inputs.python_version }}"}


def test_the_pip_cache_covers_the_directory_the_install_step_uses(action: dict[str, Any]) -> None:
    """actions/cache saves and restores the same directory pip caches into."""
    by_id = {step.get("id"): step for step in steps(action)}
    (cache,) = [s for s in steps(action) if s.get("uses") == "actions/cache@v4"]
    assert cache["with"]["path"] == "${{ steps.pip-cache.outputs.dir }}"
    assert cache["with"]["key"] == "${{ steps.pip-cache.outputs.key }}"
    assert by_id["install"]["env"]["PIP_CACHE_DIR"] == "${{ steps.pip-cache.outputs.dir }}"


def test_the_mode_input_names_every_mode_phasegate_has(action: dict[str, Any]) -> None:
    """A new mode shows up in the action's documentation too."""
    description = action["inputs"]["mode"]["description"]
    assert [mode for mode in get_args(Mode) if mode not in description] == []
