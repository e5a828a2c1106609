"""``phasegate loop``: a Ralph loop, judged on what the agent said.

The prompt comes from the command line, a file, or Ralph's own state file
(``.claude/ralph-loop.local.md``, never changed or deleted). Exit codes: 0 the promise was
said; 1 the iterations ran out first; 2 bad input (a broken state file names its line);
3 the agent or its infrastructure failed.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from phasegate._cli.options import (
    AgentChoice,
    AgentOptions,
    CliPath,
    GraderMaxCost,
    GraderModel,
    GraderTurns,
    JsonOutput,
    LogFile,
    Model,
    ModelScript,
    OutputOptions,
    PromptsDir,
    Quiet,
    Record,
    Retries,
    SandboxSwitch,
    Script,
    Workdir,
    grader_settings,
    sandbox_default,
)
from phasegate._cli.output import finish, format_pipeline, print_recording, recording_folder
from phasegate._cli.wiring import build_agent, event_sink, refuse_log_over_inputs
from phasegate.errors import UsageError

if TYPE_CHECKING:
    from phasegate.phases.loop import Loop
    from phasegate.pipelines.loop import LoopReport

DEFAULT_TIMEOUT = 3600.0


def loop(
    prompt: Annotated[
        str | None,
        typer.Argument(metavar="PROMPT", help="What the agent works on."),
    ] = None,
    prompt_file: Annotated[
        Path | None, typer.Option("--prompt-file", help="Read the prompt from this file.")
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="Ralph's state file (.claude/ralph-loop.local.md): its prompt, promise and "
            "limit. It is read, never changed.",
        ),
    ] = None,
    promise: Annotated[
        str | None,
        typer.Option(help="The loop ends when the agent says <promise>TEXT</promise>."),
    ] = None,
    max_iterations: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="At most this many iterations (default 10, or what --state leaves); 0: "
            "unlimited (the timeout and --max-cost still apply).",
        ),
    ] = None,
    workdir: Workdir = Path(),
    restart: Annotated[
        bool,
        typer.Option(
            "--restart", help="Start over even if the work directory holds an unfinished run."
        ),
    ] = False,
    agent: AgentChoice = "claude",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Annotated[
        float, typer.Option(min=1, help="Seconds the whole loop may take, retries included.")
    ] = DEFAULT_TIMEOUT,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", min=0, help="Stop once the run cost this (USD).")
    ] = None,
    cli_path: CliPath = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    log_file: LogFile = None,
    record: Record = None,
    sandbox: SandboxSwitch = None,
    grader_model: GraderModel = None,
    grader_turns: GraderTurns = None,
    grader_max_cost: GraderMaxCost = None,
) -> None:
    """Run a Ralph loop: the same task, iteration after iteration, in one session, until the
    agent says its promise in its own words (not in a file, a tool call or code)."""
    from phasegate.running import RunOptions, run_definition

    the_loop = _the_loop(prompt, prompt_file, state, promise, max_iterations)
    refuse_log_over_inputs(log_file, [prompt_file, state, script, model_script])
    folder = recording_folder(record)
    options = AgentOptions(
        agent,
        script=script,
        model_script=model_script,
        model=model,
        timeout=timeout,
        cli_path=cli_path,
        max_cost=max_cost,
        sandbox=sandbox,
        grader=grader_settings(grader_model, grader_turns, grader_max_cost),
    )
    with contextlib.ExitStack() as stack:
        settings = RunOptions(
            timeout=timeout, retries=retries, prompts_dir=prompts_dir,
            on_event=event_sink(stack, OutputOptions(quiet=quiet, log_file=log_file)),
            record=folder, sandbox=options.sandbox_mode, sandbox_default=sandbox_default(),
            grader=options.grader,
        )  # fmt: skip
        agent_built = build_agent(stack, options)
        report = asyncio.run(
            run_definition(the_loop, workdir, agent_built, settings, restart=restart)
        )
    print_recording(folder)
    finish(report, json_output=json_output, human=_format_loop)


def _the_loop(
    prompt: str | None,
    prompt_file: Path | None,
    state: Path | None,
    promise: str | None,
    max_iterations: int | None,
) -> Loop:
    """The loop the options describe, from exactly one source of its prompt."""
    from phasegate.errors import LoopStateError
    from phasegate.phases.loop import DEFAULT_MAX_ITERATIONS, make_loop
    from phasegate.phases.ralph import read_ralph_state

    given = [name for name, value in (("PROMPT", prompt), ("--prompt-file", prompt_file),
                                      ("--state", state)) if value is not None]  # fmt: skip
    if len(given) != 1:
        raise UsageError(
            "give the prompt one way: PROMPT, --prompt-file FILE or --state FILE"
            + (f" (got {', '.join(given)})" if given else "")
        )
    limit: int | None = DEFAULT_MAX_ITERATIONS
    name = "loop"
    state_promise: str | None = None
    if state is not None:
        ralph = read_ralph_state(state)
        state_promise = ralph.promise
        prompt, name = ralph.prompt, "ralph-loop"
        promise = promise if promise is not None else ralph.promise
        left = ralph.iterations_left
        if left == 0:
            raise UsageError(
                f"{state}: the loop already reached its max_iterations ({ralph.max_iterations}); "
                "raise it, or give --max-iterations"
            )
        if left is not None:
            limit = left
        elif max_iterations is None:
            _note(f"{state} sets no iteration limit: at most {limit} (--max-iterations N, 0: none)")
        if ralph.fresh_context_interval:
            _note(f"{state}: fresh_context_interval is not applied; the loop keeps one session")
    elif prompt_file is not None:
        from phasegate._files import ParseProblem, read_text

        try:
            prompt = read_text(prompt_file)
        except OSError as exc:
            raise UsageError(
                f"--prompt-file {prompt_file}: cannot read it: {exc.strerror or exc}"
            ) from None
        except ParseProblem as exc:
            raise UsageError(f"--prompt-file {prompt_file} {exc}") from None
    if promise is None:
        raise UsageError("a loop needs a promise that ends it: --promise TEXT")
    if max_iterations is not None:
        limit = max_iterations or None
    try:
        return make_loop(prompt=prompt or "", promise=promise, max_iterations=limit, name=name)
    except UsageError as exc:
        if exc.option != "promise" or state is None or promise != state_promise:
            raise
        # The promise is the state file's: name the file and its key, not a flag not given.
        problem = str(exc).removeprefix("the loop's promise: ")
        raise LoopStateError(state, "completion_promise", problem) from None


def _note(text: str) -> None:
    typer.echo(f"phasegate: note: {text}", err=True)


def _format_loop(report: LoopReport) -> str:
    """The pipeline account, with the loop's count first."""
    bound = report.max_iterations if report.max_iterations is not None else "unlimited"
    said = "said" if report.promise_said else "not said"
    head = (
        f"{report.pipeline}: <promise>{report.promise}</promise> {said} after "
        f"{report.iterations} of {bound} iteration(s)"
    )
    return head + "\n" + format_pipeline(report)
