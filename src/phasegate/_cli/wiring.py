"""Turning command-line options into library objects: the agent and the event sinks.

Heavier modules (claude-agent-sdk, structlog, OpenTelemetry) are imported only when a
command asks for them, so ``phasegate --help`` and ``phasegate report`` stay fast.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from phasegate._cli.options import FLAGS, AgentOptions, OutputOptions
from phasegate._cli.output import print_progress
from phasegate.errors import PhasegateError, UsageError

if TYPE_CHECKING:
    from phasegate.agents.protocol import Agent
    from phasegate.telemetry.events import EventSink
    from phasegate.agents.scripted.script import Unmatched


def build_agent(
    stack: contextlib.ExitStack, options: AgentOptions, *, continue_script: bool = False
) -> Agent:
    """The agent ``options`` describe; a model server it needs is stopped with ``stack``.

    ``continue_script``: a scripted agent picks up its script where the last session left it
    (one session per pipeline stage).
    """
    if options.agent == "scripted":
        if options.model_script is not None:
            raise UsageError("--model-script runs the real CLI: drop --agent scripted")
        if options.script is None:
            raise UsageError("--agent scripted needs --script FILE (a script of model replies)")
        from phasegate.agents.scripted.script import load_script
        from phasegate.agents.scripted.agent import ScriptedAgent

        agent = ScriptedAgent(load_script(options.script), continue_script=continue_script)
        _warn_when_unmatched(stack, options.script, lambda: agent.unmatched)
        return agent
    if options.script is not None:
        raise UsageError("--script is for --agent scripted; for the real CLI use --model-script")
    if options.model_script is not None:
        from phasegate.agents.scripted.model_server import ScriptedModelServer

        server = stack.enter_context(ScriptedModelServer(options.model_script))
        _warn_when_unmatched(stack, options.model_script, lambda: server.unmatched)
        return server.claude_agent(timeout=options.timeout, cli_path=options.cli_path)
    from phasegate.agents.claude.adapter import ClaudeAgent

    return ClaudeAgent(
        model=options.model,
        timeout=options.timeout,
        cli_path=options.cli_path,
        max_budget_usd=options.max_cost,
    )


def _warn_when_unmatched(
    stack: contextlib.ExitStack, script: Path, unmatched: Callable[[], list[Unmatched]]
) -> None:
    """When the command ends, one warning on stderr per request that the script's replies
    left unmatched: a script that stopped matching must never look like a model that gave
    up (the model's answer said so too, but it is easy to miss in a report)."""

    def warn() -> None:
        for request in unmatched():
            typer.echo(f"phasegate: warning: model script {script}: {request.describe()}", err=True)

    stack.callback(warn)


def event_sink(stack: contextlib.ExitStack, options: OutputOptions) -> EventSink | None:
    """Where a command's events go: progress lines (unless quiet), the log file (closed with
    ``stack``), OpenTelemetry."""
    from phasegate.telemetry.events import fan_out

    sinks: list[EventSink] = [] if options.quiet else [print_progress]
    if options.log_file is not None:
        from phasegate.telemetry.log import EventLog

        log = EventLog(file=options.log_file, log_format=options.log_format)
        stack.callback(log.close)
        sinks.append(log)
    if options.otel:
        from phasegate.telemetry.otel import OtelSink

        sinks.append(OtelSink())
    return fan_out(sinks)


def refuse_log_over_inputs(log_file: Path | None, inputs: Iterable[Path | None]) -> None:
    """Refuse a ``--log-file`` that is one of the command's inputs (the same file, however it
    is named): appending events would corrupt it."""
    if log_file is None:
        return
    for source in inputs:
        if source is not None and same_file(log_file, source):
            raise UsageError(
                f"--log-file {log_file} is {source}, which this command reads; appending events "
                "to it would change it: log to another file"
            )


def prompt_files(prompts_dir: Path | None) -> list[Path]:
    """The template files of a ``--prompts-dir`` (none when it is not given or unreadable)."""
    if prompts_dir is None:
        return []
    try:
        return [path for path in prompts_dir.iterdir() if path.is_file()]
    except OSError:
        return []  # the templates' own loading reports an unreadable directory


def same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file (through a symlink or a hard link too); a path that
    does not exist is no file."""
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (yet): not the same file
        return False


def error_message(error: PhasegateError) -> str:
    """The line a library error becomes, with the flag that would change the outcome."""
    flag = FLAGS.get(error.option) if error.option else None
    return f"phasegate: error: {error}" + (f" (command line: {flag})" if flag else "")
