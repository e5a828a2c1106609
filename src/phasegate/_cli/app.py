"""The ``phasegate`` command line: the commands, and how errors end the process.

Exit codes: 0 every phase accepted; 1 a phase was rejected; 2 bad input (task file,
arguments), with a message naming the file and field; 3 the agent or its infrastructure
failed. Progress goes to stderr, results to stdout, so ``--json`` output can be piped; so do
the library's warnings, as ``phasegate: warning: ...`` lines.

A file that cannot be written is named where it is written (a log file, a state file, a
results folder: exit 2 when found before any work, 3 once work has begun). Anything the
system refuses that no command foresaw (a full disk under standard output, too many open
files) still ends with one line naming what failed and exit code 3, never a trace.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from phasegate._cli.output import OS_ERROR_EXIT_CODE, os_error_message, show_library_warnings
from phasegate.errors import PhasegateError


def _check() -> Callable[..., Any]:
    from phasegate._cli.task_commands import check

    return check


def _run() -> Callable[..., Any]:
    from phasegate._cli.task_commands import run

    return run


def _judge() -> Callable[..., Any]:
    from phasegate._cli.task_commands import judge

    return judge


def _demo() -> Callable[..., Any]:
    from phasegate._cli.task_commands import demo

    return demo


def _report() -> Callable[..., Any]:
    from phasegate._cli.metrics_report import report_command

    return report_command


def _claude_cli() -> Callable[..., Any]:
    from phasegate._cli.doctor import claude_cli

    return claude_cli


def _doctor() -> Callable[..., Any]:
    from phasegate._cli.doctor import doctor

    return doctor


def _github() -> Callable[..., Any]:
    from phasegate._cli.github import github_command

    return github_command


def _serve() -> Callable[..., Any]:
    from phasegate._cli.serve import serve

    return serve


def _loop() -> Callable[..., Any]:
    from phasegate._cli.loop import loop

    return loop


def _execute() -> Callable[..., Any]:
    from phasegate._cli.execute import execute

    return execute


def _plan() -> Callable[..., Any]:
    from phasegate._cli.plan import plan

    return plan


def _view() -> Callable[..., Any]:
    from phasegate._cli.view import view

    return view


def _pipeline() -> typer.Typer:
    from phasegate._cli.pipeline import app as pipeline_app

    return pipeline_app


def _batch() -> typer.Typer:
    from phasegate._cli.batch import app as batch_app

    return batch_app


_LATER: dict[str, Callable[[], typer.Typer | Callable[..., Any]]] = {
    "check": _check,
    "run": _run,
    "judge": _judge,
    "demo": _demo,
    "plan": _plan,
    "execute": _execute,
    "report": _report,
    "claude-cli": _claude_cli,
    "doctor": _doctor,
    "github": _github,
    "serve": _serve,
    "loop": _loop,
    "view": _view,
    "pipeline": _pipeline,
    "batch": _batch,
}
"""Commands whose modules are imported when they are called (or their own help is asked
for), so that ``phasegate run`` does not pay for the imports of the service, the batch
runner or reports, nor ``phasegate report`` for the task commands' (asyncio, the agent
wiring: about 40 ms)."""

_SUMMARIES = {
    "check": "Validate a task file and print the prompt it would send (runs no agent).",
    "run": "Run a phased task with an agent and gate every phase on evidence.",
    "judge": "Judge a saved Claude Code transcript against a task, with no agent run.",
    "demo": "Offline, no key: the same lazy model, without and with the gate.",
    "plan": "Print the plan as one JSON object: inferred values, questions, progress "
    "(never writes).",
    "execute": "Run a planned task or pipeline with the answers to its questions; JSON lines "
    "on stdout.",
    "report": "Metrics per task, mode and phase from run event logs (phasegate run --log-file).",
    "claude-cli": "Print the path of the Claude Code CLI phasegate runs (bundled with "
    "claude-agent-sdk).",
    "doctor": "Show what runs would use: the Claude Code CLI and its version, "
    "claude-agent-sdk,\nwhether they are inside the tested window, Python, the extras and "
    "the credentials found.",
    "github": "Turn a report into GitHub Actions outputs, a job summary and annotations.",
    "serve": "Serve tasks and pipelines over HTTP, with their events as Server-Sent Events.",
    "loop": "Run a Ralph loop: the same task, iteration after iteration, in one session, "
    "until the\nagent says its promise in its own words (not in a file, a tool call or code).",
    "view": "Write a recorded run's page (one HTML file, no network, no script) and print "
    "its path.",
    "pipeline": "Multi-stage pipelines: stages gated on exit checks, in one agent session.",
    "batch": "Run a batch of tasks and pipelines in several modes and repeats, and report on it.",
}
"""The first paragraph of each command's help, which is all ``phasegate --help`` shows of
it: listed from here, the commands' modules (the execute command's report models and
validators, the batch runner...) are not imported to print the top-level help, which stays
under a fifth of ``import claude_agent_sdk`` (bench/startup.py). A test holds each line
equal to its command's own help (tests/_cli/test_startup_imports.py)."""


class _Commands(TyperGroup):
    """The top-level commands, each built on first use; the top-level help lists those not
    built yet from their summaries."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in _LATER if n not in self.commands)]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in _LATER:
            return found
        if self._listing:
            # Only named and summed up in a help table: never added, never run.
            return TyperCommand(cmd_name, help=_SUMMARIES[cmd_name])
        target = _LATER[cmd_name]()
        if isinstance(target, typer.Typer):
            command: Any = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False)
            single.command(cmd_name)(target)
            command = typer.main.get_command(single)
        command.name = cmd_name
        self.add_command(command, cmd_name)
        return command


app = typer.Typer(
    name="phasegate",
    help="Make coding agents do structured, phased work, and prove they did it.",
    cls=_Commands,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# With every command in _LATER, typer sees none registered: a callback keeps it a group.
@app.callback()
def _group() -> None:
    """The top-level command: it does nothing of its own (its help is the app's)."""


def main() -> NoReturn:
    """Console entry point: phasegate errors become a message and an exit code, not a trace."""
    show_library_warnings()
    try:
        # Outside standalone mode, click returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except PhasegateError as exc:
        from phasegate._cli.wiring import error_message

        typer.echo(error_message(exc), err=True)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("phasegate: interrupted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # click's usage errors: bad option, missing argument
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"phasegate: error: {exc}", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except OSError as exc:
        _say(f"phasegate: error: {os_error_message(exc)}")
        # What the failure left half made (an event loop without its pipe, a coroutine never
        # awaited) would add traces while the interpreter shuts down: the line above says it.
        sys.unraisablehook = lambda _: None
        warnings.simplefilter("ignore")
        sys.exit(OS_ERROR_EXIT_CODE)
    sys.exit(code if isinstance(code, int) else 0)


def _say(line: str) -> None:
    """Print ``line`` on stderr, unless stderr itself cannot be written."""
    with contextlib.suppress(OSError):
        typer.echo(line, err=True)
