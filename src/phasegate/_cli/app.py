"""The ``phasegate`` command line: the commands, and how errors end the process.

Exit codes: 0 every phase accepted; 1 a phase was rejected; 2 bad input (task file,
arguments), with a message naming the file and field; 3 the agent or its infrastructure
failed. Progress goes to stderr, results to stdout, so ``--json`` output can be piped.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from phasegate._cli import task_commands
from phasegate._cli.batch import app as batch_app
from phasegate._cli.claude_cli import claude_cli
from phasegate._cli.github import github_command
from phasegate._cli.pipeline import app as pipeline_app
from phasegate._cli.plan import plan
from phasegate._cli.report import report_command
from phasegate._cli.serve import serve
from phasegate._cli.wiring import error_message
from phasegate.errors import PhasegateError

app = typer.Typer(
    name="phasegate",
    help="Make coding agents do structured, phased work, and prove they did it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(task_commands.check)
app.command()(task_commands.run)
app.command()(task_commands.judge)
app.command()(task_commands.demo)
app.command("report")(report_command)
app.command("claude-cli")(claude_cli)
app.command("github")(github_command)
app.command("serve")(serve)
app.command("plan")(plan)
app.add_typer(pipeline_app, name="pipeline")
app.add_typer(batch_app, name="batch")


def main() -> NoReturn:
    """Console entry point: phasegate errors become a message and an exit code, not a trace."""
    try:
        # Outside standalone mode, click returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except PhasegateError as exc:
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
    sys.exit(code if isinstance(code, int) else 0)
