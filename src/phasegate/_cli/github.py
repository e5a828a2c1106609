"""``phasegate github REPORT``: a report as a GitHub Actions step's outputs, job summary and
annotations.

In a workflow (``GITHUB_ACTIONS=true``) it appends the outputs to ``GITHUB_OUTPUT``, the
summary to ``GITHUB_STEP_SUMMARY``, and prints the annotations, the only thing it prints.
Anywhere else it prints what it would write. The action's last step is this command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from phasegate._cli.output import cannot_write, print_result
from phasegate._cli.wiring import same_file
from phasegate._github.fail_on import FailOn, exit_status
from phasegate.modes import RECORDING_PAGE


def github_command(
    report: Annotated[
        Path, typer.Argument(metavar="REPORT", help="JSON report of run, judge or pipeline run.")
    ],
    exit_code: Annotated[
        int | None,
        typer.Option(
            # A process exits with 0 to 255: 256 would wrap to 0 and let a failing step pass.
            min=0,
            max=255,
            help="Exit code of the command that wrote REPORT (default: the report's own); "
            "with no report, the verdict is error.",
        ),
    ] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            help="Fail (exit with the run's code) when the verdict is not accepted "
            "(rejected), only on errors (error), or never."
        ),
    ] = "rejected",
    summary: Annotated[bool, typer.Option(help="Write the job summary.")] = True,
    log: Annotated[
        Path | None, typer.Option(help="The run's event log (--log-file of run or judge).")
    ] = None,
    html_report: Annotated[
        Path | None, typer.Option(help="Write the HTML report of --log here.")
    ] = None,
    workdir: Annotated[
        Path, typer.Option(help="Directory the report's file paths are relative to.")
    ] = Path(),
    recording: Annotated[
        Path | None,
        typer.Option(help="The run's recording folder (run --record): its page is linked."),
    ] = None,
    recording_url: Annotated[
        str | None,
        typer.Option(help="URL of the artifact the recording was uploaded as (an https URL)."),
    ] = None,
) -> None:
    """Turn a report into GitHub Actions outputs, a job summary and annotations."""
    from phasegate._github.annotations import annotations_of
    from phasegate._github.outputs import output_file_text, step_outputs
    from phasegate._github.summary import RecordingLink, job_summary
    from phasegate._github.view import read_report_view
    from phasegate._github.workflow_commands import inert_lines
    from phasegate.errors import UsageError

    if html_report is not None and log is None:
        raise UsageError("--html-report is made from the event log: give --log too")
    for flag, source in (("--log", log), ("REPORT", report)):
        if html_report is not None and source is not None and same_file(html_report, source):
            raise UsageError(
                f"--html-report {html_report} is the {flag} file: writing the HTML there would "
                "replace it; choose another file"
            )
    view = read_report_view(report, exit_code=exit_code)
    html = _write_html(log, html_report)
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    shown, left_out = annotations_of(view, workdir=workdir, workspace=workspace)
    outputs = output_file_text(
        step_outputs(
            view,
            report_file=report,
            log_file=log if log and log.exists() else None,
            html_report=html,
        )
    )
    link = None
    if recording is not None and (recording / "recording.json").is_file():
        link = RecordingLink(str(recording / RECORDING_PAGE), recording_url or None)
    markdown = job_summary(view, omitted_annotations=left_out, recording=link) if summary else ""
    lines = [annotation.command() for annotation in shown]
    if os.environ.get("GITHUB_ACTIONS") == "true":
        _append("GITHUB_OUTPUT", outputs)
        if markdown:
            _append("GITHUB_STEP_SUMMARY", markdown)
        # Written as is: typer.echo would strip ANSI codes from a piped stdout, and the
        # runner would show a message other than the report's.
        print_result("".join(f"{line}\n" for line in lines), nl=False, raw=True)
    else:
        # A runner reads this too when the variable is not passed on (a container started
        # in a step): the report's text in it must not become a command either.
        print_result(f"== outputs (GITHUB_OUTPUT) ==\n{inert_lines(outputs)}", nl=False)
        print_result(f"== summary (GITHUB_STEP_SUMMARY) ==\n{inert_lines(markdown)}", nl=False)
        print_result("== annotations ==\n" + "".join(f"{line}\n" for line in lines), nl=False)
    raise typer.Exit(exit_status(view.verdict, view.exit_code, fail_on))


def _write_html(log: Path | None, target: Path | None) -> Path | None:
    """The HTML report of ``log`` written to ``target`` (None when there is no log)."""
    from phasegate._cli.metrics_report import render_logs

    if log is None or target is None or not log.exists():
        return None
    text = render_logs([str(log)], "html", quiet=True)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise cannot_write(exc, f"cannot write the HTML report to {target}") from None
    return target


def _append(variable: str, text: str) -> None:
    """Append ``text`` to the file the runner named in ``variable``."""
    from phasegate.errors import UsageError

    path = os.environ.get(variable)
    if not path:
        raise UsageError(f"GITHUB_ACTIONS is true but {variable} is not set: run inside a step")
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as file:
            file.write(text)
    except OSError as exc:
        raise UsageError(f"cannot append to {variable} ({path}): {exc.strerror}") from None
