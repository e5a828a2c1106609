"""``phasegate execute``: run a planned task or pipeline with the answers, as JSON lines.

The plan (from ``phasegate plan``) is checked against the definition, its context and the work
directory first; the answers are merged over what the plan inferred and checked by the
clarification rules; only then does an agent start. With ``--idempotency-key`` the result is
kept in the work directory's ``.phasegate/executions/``: the same key and request print the
kept result again without running anything, the same key with another request is refused.
A failed run (the agent, not the gate) is not kept, so retrying with the same key runs again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from phasegate._cli.options import (
    AgentChoice,
    AgentOptions,
    CliPath,
    FilesRoot,
    GraderMaxCost,
    GraderModel,
    GraderTurns,
    LogFile,
    LogFormatChoice,
    MaxAttempts,
    MaxCost,
    MaxParallel,
    Model,
    ModelScript,
    OutputOptions,
    PromptsDir,
    Record,
    Retries,
    RunMode,
    RunTimeout,
    SandboxSwitch,
    Script,
    TaskFile,
    Workdir,
    grader_settings,
    sandbox_default,
)
from phasegate._cli.output import print_recording, recording_folder
from phasegate._cli.wiring import build_agent, error_message, event_sink, refuse_log_over_inputs
from phasegate.errors import LinkedPathError, PhasegateError, UsageError
from phasegate.modes import DEFAULT_MAX_ATTEMPTS

if TYPE_CHECKING:
    from phasegate.pipelines.report import PipelineReport
    from phasegate.tasks.report import RunReport

PlanFile = Annotated[Path, typer.Option("--plan", help="The plan `phasegate plan` printed.")]
Responses = Annotated[
    str | None,
    typer.Option(
        "--responses",
        help='Answers as JSON ({"id": "value"} or AskUserQuestion\'s {"answers": {...}}), '
        "or @FILE.",
    ),
]
IdempotencyKey = Annotated[
    str | None,
    typer.Option(
        "--idempotency-key",
        help="Run once per key: the same key and request print the kept result again.",
    ),
]


def execute(
    task_file: TaskFile,
    plan_file: PlanFile,
    workdir: Workdir = Path(),
    responses: Responses = None,
    idempotency_key: IdempotencyKey = None,
    mode: RunMode = "gate",
    max_attempts: MaxAttempts = DEFAULT_MAX_ATTEMPTS,
    agent: AgentChoice = "claude",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: RunTimeout = 1800.0,
    cli_path: CliPath = None,
    max_cost: MaxCost = None,
    retries: Retries = 2,
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
    log_file: LogFile = None,
    log_format: LogFormatChoice = "json",
    record: Record = None,
    sandbox: SandboxSwitch = None,
    max_parallel: MaxParallel = None,
    grader_model: GraderModel = None,
    grader_turns: GraderTurns = None,
    grader_max_cost: GraderMaxCost = None,
) -> None:
    """Run a planned task or pipeline with the answers to its questions; JSON lines on stdout.

    Progress lines come as the phases go; the last line is the result. Exit codes as for
    `run`: 0 accepted, 1 rejected, 2 bad input (a stale plan, a missing or refused answer),
    3 the agent failed.
    """
    # Here, not at the top: `phasegate execute --help` has no use for the report models.
    from phasegate._cli.execution_lines import ProgressLines, write_line
    from phasegate._cli.json_arguments import json_argument
    from phasegate._cli.plan import load_definition
    from phasegate._files.digests import json_digest
    from phasegate._files.idempotency import IdempotencyStore
    from phasegate.modes import STATE_DIR
    from phasegate.planning.plan import load_plan
    from phasegate.planning.values import resolve_inputs
    from phasegate.running import RunOptions, run_definition
    from phasegate.telemetry.events import fan_out

    with _result_on_error(), contextlib.ExitStack() as stack:
        if not workdir.is_dir():
            raise UsageError(f"--workdir {workdir} is not a directory")
        task = load_definition(task_file, files_root)
        plan = load_plan(plan_file)
        answers = json_argument(responses, "--responses", lists=True) or {}
        answers_file = Path(responses[1:]) if responses and responses.startswith("@") else None
        refuse_log_over_inputs(log_file, [task_file, plan_file, script, model_script, answers_file])
        folder = recording_folder(record)
        request = json_digest(
            {
                "task": task.digest(),
                "plan_id": plan.plan_id,
                "responses": answers,
                "workdir": str(workdir.resolve()),
                "run": [
                    mode,
                    max_attempts,
                    agent,
                    model,
                    max_cost,
                    timeout,
                    retries,
                    str(cli_path),
                    str(prompts_dir),
                    str(files_root),
                    _digest_of(model_script or script),
                    # Only a recorded run adds its folder: the digests of others stay as they were.
                    *([str(folder)] if folder is not None else []),
                    *([f"max_parallel={max_parallel}"] if max_parallel is not None else []),
                ],
            }
        )
        store: IdempotencyStore | None = None
        if idempotency_key is not None:
            store = IdempotencyStore(workdir / STATE_DIR / "executions", inside=workdir)
            try:
                stack.enter_context(store.holding(idempotency_key))
                kept = store.find(idempotency_key, request)
            except LinkedPathError as exc:
                raise LinkedPathError(exc.root, f"{exc.problem} (where --idempotency-key "
                                      "keeps results)", option=exc.option) from None  # fmt: skip
            except OSError as exc:
                raise UsageError(f"cannot keep results in {store.folder}: "
                                 f"{exc.strerror or exc}; make it writable, or drop "
                                 "--idempotency-key") from None  # fmt: skip
            if kept is not None:
                _replay(kept, store.path_of(idempotency_key))
        values = resolve_inputs(task, workdir, plan, answers)
        logged = event_sink(
            stack, OutputOptions(quiet=True, log_file=log_file, log_format=log_format)
        )
        agent_options = AgentOptions(agent, script=script, model_script=model_script,
                                     model=model, timeout=timeout, cli_path=cli_path,
                                     max_cost=max_cost, sandbox=sandbox,
                                     grader=grader_settings(grader_model, grader_turns,
                                                            grader_max_cost))  # fmt: skip
        options = RunOptions(
            mode=mode, max_attempts=max_attempts, timeout=timeout, retries=retries,
            prompts_dir=prompts_dir, record=folder, sandbox=agent_options.sandbox_mode,
            sandbox_default=sandbox_default(), max_parallel=max_parallel,
            grader=agent_options.grader,
            on_event=fan_out([ProgressLines(), *([logged] if logged else [])]),
        )  # fmt: skip
        chosen = build_agent(stack, agent_options)
        run = run_definition(task, workdir, chosen, options, inputs=values.as_text())
        code, line = _observed(run, workdir, log_file)
        line["inputs"] = values.provenance
        if store is not None and idempotency_key is not None and line["verdict"] != "error":
            try:
                store.remember(idempotency_key, request, {"exit": code, "line": line})
            except OSError as exc:  # the run happened: its result is still printed
                typer.echo(f"phasegate: warning: the result was not kept in {store.folder}: "
                           f"{exc.strerror or exc}", err=True)  # fmt: skip
    print_recording(folder)
    write_line(line)
    raise typer.Exit(code)


def _observed(
    run: Coroutine[Any, Any, RunReport | PipelineReport], workdir: Path, log_file: Path | None
) -> tuple[int, dict[str, Any]]:
    """Carry out ``run``; its exit code and result line, with the files it created and
    modified in ``workdir``."""
    import asyncio

    from phasegate._cli.execution_lines import result_line
    from phasegate.evidence.workspace import WorkspaceDiff
    from phasegate.workspace.observer import WorkspaceObserver

    observer = WorkspaceObserver(workdir, unobserved=[log_file] if log_file else [])
    before = observer.snapshot()
    report = asyncio.run(run)
    return report.exit_code, result_line(report, WorkspaceDiff.between(before, observer.snapshot()))


def _digest_of(path: Path | None) -> str | None:
    """A script's content digest: the same path with another script is another request."""
    from phasegate._files import ParseProblem, read_bounded

    try:
        return hashlib.sha256(read_bounded(path)).hexdigest() if path is not None else None
    except (OSError, ParseProblem):
        return str(path)  # unreadable, too large, not a file: loading it reports the problem


def _replay(kept: dict[str, Any], file: Path) -> None:
    """Print the kept result line again and end with its exit code; a kept result that is
    not one phasegate wrote (edited by hand, damaged) is a usage error naming the file."""
    from phasegate._cli.execution_lines import write_line

    line, code = kept.get("line"), kept.get("exit")
    if not isinstance(line, dict) or type(code) is not int or code not in _EXIT_CODES:
        field = "line" if not isinstance(line, dict) else "exit"
        raise UsageError(
            f"{file}: the result kept for this --idempotency-key is not one phasegate "
            f"wrote ({field} is {kept.get(field)!r:.80}); delete the file to run again, or use "
            "another key"
        )
    write_line({**line, "replayed": True})
    raise typer.Exit(code)


_EXIT_CODES = (0, 1, 2, 3)
"""The exit codes a kept result may carry: those of `run`."""


@contextlib.contextmanager
def _result_on_error() -> Iterator[None]:
    """A phasegate error still ends with a result line (and its exit code), so a program
    reading stdout always gets one."""
    try:
        yield
    except PhasegateError as exc:
        from phasegate._cli.execution_lines import error_line, write_line

        message = error_message(exc).removeprefix("phasegate: error: ")
        write_line(error_line(exc, message))
        typer.echo(error_message(exc), err=True)
        raise typer.Exit(exc.exit_code) from None
