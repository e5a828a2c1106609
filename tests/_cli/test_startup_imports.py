"""What the command line imports to start: only what the command asked for needs.

``phasegate --help`` lists every command from its one-line summary, without importing the
command (the execute command's report models and validators cost most of a second of
imports); a command's own help imports its module, never the agent SDK, the report models
or the validators. Timing is not asserted here: bench/startup.py measures it.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from phasegate._cli.app import _LATER, _SUMMARIES, app
from tests.helpers.imports import HEAVY_MODULES, imports_of

_COMMAND_MODULES = [
    f"phasegate._cli.{name}"
    for name in ("task_commands", "execute", "execution_lines", "plan", "metrics_report",
                 "doctor", "github", "serve", "loop", "view", "pipeline", "batch", "demo")
]  # fmt: skip
"""The modules of the commands: the top-level help imports none of them."""


@pytest.mark.parametrize(("args", "code"), [(["--help"], 0), ([], 2)], ids=["help", "no-args"])
def test_the_top_level_help_imports_no_agent_sdk_report_models_validators_or_commands(
    args: list[str], code: int
) -> None:
    """`phasegate --help` (and `phasegate` alone, which prints the same help) imports none of
    HEAVY_MODULES, no command's module, and not pydantic either: typer builds a pydantic
    adapter per option of a command it builds, and listing the commands builds none."""
    imports = imports_of("-m", "phasegate", *args)

    assert imports.returncode == code, imports.stderr
    assert {"typer", "phasegate._cli.app"} <= imports.modules  # the imports were read
    help_text = imports.stdout + imports.stderr
    assert all(f" {name} " in help_text for name in _LATER)
    assert imports.under(HEAVY_MODULES) == []
    assert imports.under(_COMMAND_MODULES) == []
    assert imports.under(["pydantic"]) == []


@pytest.mark.parametrize("command", list(_LATER))
def test_a_command_s_own_help_imports_no_agent_sdk_report_models_or_validators(
    command: str,
) -> None:
    """`phasegate COMMAND --help` builds the command from its module, which imports what
    the command runs (a report, the validators, the agent) inside the function only."""
    imports = imports_of("-m", "phasegate", command, "--help")

    assert imports.returncode == 0, imports.stderr
    assert "Usage:" in imports.stdout
    assert imports.under(HEAVY_MODULES) == []


def test_the_top_level_help_sums_up_each_command_with_the_first_paragraph_of_its_own_help() -> None:
    """The summaries the top-level help lists are the commands' own words: a command whose
    docstring changes fails here until `_SUMMARIES` in _cli/app.py says the same."""
    import typer.main
    from typer.core import TyperGroup

    group = typer.main.get_group(app)
    assert isinstance(group, TyperGroup)
    context = group.make_context("phasegate", ["run"])

    assert list(_SUMMARIES) == list(_LATER)
    for name, summary in _SUMMARIES.items():
        command = group.get_command(context, name)
        assert command is not None and command.help is not None
        assert inspect.cleandoc(command.help).split("\n\n")[0].strip() == summary, name


def test_the_top_level_help_reads_the_same_as_when_every_command_is_built() -> None:
    """Listed from their summaries or built from their modules, the commands show the same
    help, character for character (narrow enough to wrap the long summaries)."""
    built = (
        "import sys\n"
        "from typer.core import TyperGroup\n"
        "from phasegate._cli import app\n"
        "app._Commands.format_help = TyperGroup.format_help\n"
        "app.app(['--help'], prog_name='python -m phasegate', standalone_mode=False)\n"
        "print('phasegate._cli.execute' in sys.modules, file=sys.stderr)\n"
    )
    env = {"COLUMNS": "70", "PATH": "/usr/bin:/bin"}
    listed = subprocess.run(
        [sys.executable, "-m", "phasegate", "--help"], capture_output=True, text=True, env=env
    )
    eager = subprocess.run([sys.executable, "-c", built], capture_output=True, text=True, env=env)

    assert listed.returncode == eager.returncode == 0, listed.stderr + eager.stderr
    assert "Commands" in listed.stdout and "batch" in listed.stdout
    assert eager.stderr.strip() == "True"  # the commands were built to print it
    assert listed.stdout == eager.stdout
