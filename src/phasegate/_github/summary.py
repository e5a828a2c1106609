"""The job summary: a report as Markdown for ``GITHUB_STEP_SUMMARY``.

Only our own words are Markdown; every string from the report goes through
:mod:`~phasegate._github.markdown` and is shown as inert code: a check's output (what its
command printed) only ever in a fenced code block, a grader's reason in an inline code span.
The summary goes to the runner's summary file, never to stdout, where a line could be a
workflow command (``phasegate github`` prints it outside Actions only through
:func:`~phasegate._github.workflow_commands.inert_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from phasegate._github.annotations import PER_LEVEL
from phasegate._github.markdown import block, inline, table
from phasegate._github.view import CheckLine, Problem, RefusedLine, ReportView, VerdictsLine
from phasegate.evidence.transcript import Usage
from phasegate.metrics.formatting import duration, quantity, usd
from phasegate.validators.reconcile import FileReconciliation

SHOWN_PROBLEMS = 50
"""Issues and findings listed in the summary; the rest are counted."""
SHOWN_FILES = 30
"""File names listed per cell of the files table; the rest are counted."""
SHOWN_ROW_FILES = 10
"""File names listed per phase or stage; the rest are counted."""
FINAL_MESSAGE_SHOWN = 4000
"""Characters of the final message shown."""
SHOWN_ROWS = 100
"""Phases or stages listed in the table; the rest are counted."""
SHOWN_CHECKS = 50
"""Checks listed, with their output; the rest are counted."""
CHECK_OUTPUT_SHOWN = 3000
"""Characters of a check's output shown (a report keeps at most about 2,000 of a command's)."""
REASON_SHOWN = 600
"""Characters of a grader's reason shown in its cell (a report keeps at most 2,000; a task
check's full reasons are in what it found, below its table)."""
SUMMARY_LIMIT = 1000 * 1024
"""Bytes a summary may have: GitHub refuses a step summary over 1 MiB."""

EXACT = 6
"""Decimal places of the costs shown: the rows' shares are whole millionths, so they add up
to the run's cost as printed."""
_MARK = {"accepted": "✅", "rejected": "❌"}
_ARTIFACT_URL = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]+)?/[A-Za-z0-9._~/%-]*")
"""What a link to an uploaded artifact may look like: https, a host, a path of plain
characters (nothing that could end the link or start Markdown or HTML)."""
_LEFT_OUT = "*A section is left out here: too long for a job summary (see the JSON report).*"


@dataclass(frozen=True, slots=True)
class RecordingLink:
    """The run's recording in a job summary: its ``page`` (a path on the runner) and the
    ``url`` of the artifact it was uploaded as (None when it was not, or is unknown)."""

    page: str
    url: str | None = None


def job_summary(
    view: ReportView, *, omitted_annotations: dict[str, int], recording: RecordingLink | None = None
) -> str:
    """The Markdown of one report's job summary (with a line on the run's ``recording``)."""
    parts = [_headline(view), _facts(view)]
    if recording is not None:
        parts.append(_recording(recording))
    if view.error:
        parts.append(f"**Error:** {inline(view.error)}")
    if view.rows:
        parts.append(_rows(view))
    parts += _problems("Issues", [p for p in view.problems if not p.finding])
    parts += _problems("Findings (reported, not judged)", [p for p in view.problems if p.finding])
    parts += _refusals(view.refusals)
    parts += _confinement(view)
    parts += _subagents(view)
    parts += _checks(view)
    parts += _verdicts(view)
    if view.reconciliation is not None:
        parts.append(_files(view.reconciliation))
    if view.final_message:
        parts.append("**Final message**\n\n" + block(view.final_message, limit=FINAL_MESSAGE_SHOWN))
    left_out = [
        f"{quantity(count, level)}" for level, count in omitted_annotations.items() if count
    ]
    if left_out:
        parts.append(
            f"{' and '.join(left_out)} not shown as annotations (GitHub shows {PER_LEVEL} of "
            "each kind per step); all are listed above."
        )
    return "\n\n".join(_within(parts, SUMMARY_LIMIT)) + "\n"


def _recording(link: RecordingLink) -> str:
    """A line saying where the run's page is: a link to the artifact when its URL is a plain
    https URL (anything else is not linked), and the page's path as inert code."""
    page = inline(link.page)
    if link.url and _ARTIFACT_URL.fullmatch(link.url):
        opened = inline("index.html")
        return (f"**Recorded run:** [download the recording]({link.url}) (an artifact) and "
                f"open {opened} in it: the run's page ({page} on the runner).")  # fmt: skip
    return f"**Recorded run:** the run's page is {page} on the runner (not uploaded)."


def _within(parts: list[str], limit: int) -> list[str]:
    """``parts`` with the largest left out, one by one, until they fit in ``limit`` bytes
    (the headline always stays)."""
    sizes = [len(part.encode("utf-8")) + 2 for part in parts]
    kept = list(parts)
    while sum(sizes) > limit and len(kept) > 1:
        largest = max(range(1, len(kept)), key=sizes.__getitem__)
        kept[largest] = _LEFT_OUT
        sizes[largest] = len(_LEFT_OUT) + 2
    return kept


def _headline(view: ReportView) -> str:
    mark = _MARK.get(view.verdict, "⚠️")
    return f"### {mark} phasegate: {view.verdict} · {view.kind} {inline(view.name)}"


def _facts(view: ReportView) -> str:
    usage = view.usage
    facts = [f"mode {view.mode}"] if view.mode else []
    if view.rows:
        accepted = view.count("accepted")
        facts.append(f"{accepted} of {quantity(len(view.rows), view.unit)} accepted")
    facts.append(duration(view.duration_ms))
    if view.check_ms:
        facts.append(f"of it in checks {duration(view.check_ms)}")
    facts.append(f"cost {usd(usage.cost_usd, EXACT)}")
    facts.append(f"tokens: {_tokens(usage)}")
    rest, graded = view.unattributed_usage, view.grader_usage
    if not rest.is_zero:
        facts.append(f"in no {view.unit}: {_tokens(rest)}, cost {usd(rest.cost_usd, EXACT)}")
    if not graded.is_zero:
        facts.append(f"of it the grader: {_tokens(graded)}, cost {usd(graded.cost_usd, EXACT)}")
    overhead = view.overhead
    if not overhead.is_zero:
        facts.append(
            f"input carried: {overhead.input_tokens:,} tokens, the gate's ≈"
            f"{overhead.gate_tokens:,} (tool definitions ≈{overhead.tool_tokens:,}, text ≈"
            f"{overhead.text_tokens:,})"
        )
    facts.append(f"exit code {view.exit_code}")
    return " · ".join(facts)


def _rows(view: ReportView) -> str:
    """A row per phase or stage: the agent's tokens and cost in it, and (when a grader ran in
    the run) its grader's."""
    graded = not view.grader_usage.is_zero
    rows = [
        (
            str(row.index),
            inline(row.name, in_table=True),
            f"{_MARK.get(row.status, '')} {row.status}".strip(),
            str(row.attempts),
            inline(row.how, in_table=True),
            _file_list(row.files_changed, SHOWN_ROW_FILES),
            f"{row.usage.input_tokens:,} / {row.usage.output_tokens:,}",
            usd(row.usage.cost_usd, EXACT),
            *(
                (f"{row.grader_usage.input_tokens:,} / {row.grader_usage.output_tokens:,}",
                 usd(row.grader_usage.cost_usd, EXACT))
                if graded
                else ()
            ),
        )
        for row in view.rows[:SHOWN_ROWS]
    ]  # fmt: skip
    head = (view.unit, "name", "status", "gate checks", "how", "files changed", "tokens in / out",
            "cost", *(("grader tokens in / out", "grader cost") if graded else ()))  # fmt: skip
    more = len(view.rows) - SHOWN_ROWS
    left_out = f"\n\n… {more} more {view.unit}s left out (see the JSON report)" if more > 0 else ""
    return table(head, rows) + left_out


def _tokens(usage: Usage) -> str:
    return (
        f"{usage.input_tokens:,} in, {usage.output_tokens:,} out, "
        f"{usage.cache_read_input_tokens:,} cache read, "
        f"{usage.cache_creation_input_tokens:,} cache written"
    )


def _problems(title: str, problems: list[Problem]) -> list[str]:
    if not problems:
        return []
    lines = [f"**{title}**", ""]
    for problem in problems[:SHOWN_PROBLEMS]:
        line = f"- {inline(problem.code)} in {inline(problem.where)}: {inline(problem.message)}"
        if problem.requirement:
            line += f" Requirement: {inline(problem.requirement)}"
        lines.append(line)
    if len(problems) > SHOWN_PROBLEMS:
        lines.append(f"- … and {len(problems) - SHOWN_PROBLEMS} more (see the JSON report)")
    return ["\n".join(lines)]


def _refusals(refusals: Sequence[RefusedLine]) -> list[str]:
    """The calls refused before they ran: they did nothing, and the model was told why."""
    if not refusals:
        return []
    lines = ["**Refused before they ran**", ""]
    for refused in refusals[:SHOWN_PROBLEMS]:
        lines.append(
            f"- {inline(refused.tool)} {inline(refused.input)} in {inline(refused.where)}: "
            f"{inline(refused.reason)}"
        )
    if len(refusals) > SHOWN_PROBLEMS:
        lines.append(f"- … and {len(refusals) - SHOWN_PROBLEMS} more (see the JSON report)")
    return ["\n".join(lines)]


def _confinement(view: ReportView) -> list[str]:
    """How the agent was confined, and each attempt to leave (docs/sandbox.md); nothing when
    no sandbox was asked for."""
    sandbox = view.sandbox
    if sandbox is None:
        return []
    if sandbox.confined:
        hosts = ", ".join(inline(host) for host in sandbox.network) or "none"
        said = f"**Sandbox:** confined ({sandbox.mode}); hosts allowed: {hosts}"
    elif sandbox.mode == "off":
        said = "**Sandbox:** off (not confined)"
    else:
        said = f"**Sandbox:** ⚠️ not confined: {inline(sandbox.unavailable or 'unavailable')}"
    lines = [said]
    if view.blocked:
        lines += ["", f"**Blocked by the sandbox** ({len(view.blocked)})", ""]
        for blocked in view.blocked[:SHOWN_PROBLEMS]:
            target = f"{inline(blocked.target)}: " if blocked.target else ""
            tool, detail = inline(blocked.tool), inline(blocked.detail)
            lines.append(f"- {blocked.kind}: {tool} {target}{detail}")
        if len(view.blocked) > SHOWN_PROBLEMS:
            lines.append(f"- … and {len(view.blocked) - SHOWN_PROBLEMS} more (see the JSON report)")
    return ["\n".join(lines)]


def _subagents(view: ReportView) -> list[str]:
    """The work subagents did, per phase: counted in the phase's figures, shown apart."""
    if not view.subagents:
        return []
    rows = [
        (inline(line.where, in_table=True), inline(line.agent, in_table=True),
         inline(line.work, in_table=True))
        for line in view.subagents[:SHOWN_PROBLEMS]
    ]  # fmt: skip
    more = len(view.subagents) - SHOWN_PROBLEMS
    left_out = f"\n\n… {more} more left out (see the JSON report)" if more > 0 else ""
    return [
        f"**Subagents** (their work counts in the {view.unit}'s figures)\n\n"
        + table((view.unit, "subagent", "successful calls, errors, files"), rows)
        + left_out
    ]


def _checks(view: ReportView) -> list[str]:
    """Each check as the gate last ran it, per phase (the task's own last): a table of whether
    it passed, its exit code and time, then what each found (a command's output) as inert
    code blocks, the failed ones first."""
    if view.checks_skipped:
        return [
            "**Checks not run**: this judgment was asked to run none of the task's checks; "
            "its verdict rests on the other evidence alone."
        ]
    if not view.checks:
        return []
    shown = view.checks[:SHOWN_CHECKS]
    rows = [
        (inline(check.where, in_table=True), inline(check.description, in_table=True),
         "✅ passed" if check.passed else "❌ failed", inline(check.kind, in_table=True),
         "–" if check.exit_code is None else str(check.exit_code), duration(check.duration_ms),
         str(check.run))
        for check in shown
    ]  # fmt: skip
    more = len(view.checks) - SHOWN_CHECKS
    left_out = f"\n\n… {more} more checks left out (see the JSON report)" if more > 0 else ""
    head = (view.unit, "check", "result", "kind", "exit code", "time", "gate judgment")
    outputs = [_check_output(check) for check in sorted(shown, key=lambda c: c.passed)]
    said = f"**Checks** (as the gate last ran them; {duration(view.check_ms)} in checks in all)"
    return [f"{said}\n\n{table(head, rows)}{left_out}", "\n\n".join(outputs)]


def _verdicts(view: ReportView) -> list[str]:
    """Each rubric a grader judged (as it last ran): a row per criterion with the grader's
    verdict and reason, every string of them inert code."""
    if not view.verdicts:
        return []
    shown: list[VerdictsLine] = []
    rows: list[tuple[str, ...]] = []
    for line in view.verdicts:
        if len(rows) >= SHOWN_PROBLEMS:
            break
        shown.append(line)
        rows.extend(
            (inline(line.where, in_table=True), inline(line.description, in_table=True),
             inline(c.id, in_table=True), inline(c.criterion, in_table=True),
             _VERDICT_MARK[c.verdict], inline(c.reason, limit=REASON_SHOWN, in_table=True))
            for c in line.criteria
        )  # fmt: skip
    more = sum(len(line.criteria) for line in view.verdicts) - len(rows)
    left_out = f"\n\n… {more} more criteria left out (see the JSON report)" if more > 0 else ""
    head = (view.unit, "check", "criterion", "what it asks", "verdict", "the grader's reason")
    said = "**The grader's verdicts** (only met counts; cannot tell is not met)"
    return [f"{said}\n\n{table(head, rows)}{left_out}"]


_VERDICT_MARK = {"met": "✅ met", "not_met": "❌ not met", "cannot_tell": "❔ cannot tell"}


def _check_output(check: CheckLine) -> str:
    """What a check found, as a fenced code block under a line naming it."""
    mark = "✅" if check.passed else "❌"
    return (f"{mark} {inline(check.description)} in {inline(check.where)} found:\n\n"
            f"{block(check.output, limit=CHECK_OUTPUT_SHOWN)}")  # fmt: skip


def _files(files: FileReconciliation) -> str:
    differences = [
        ("changed on disk, not claimed", files.changed_not_claimed),
        ("claimed, not changed on disk", files.claimed_not_changed),
        ("edited by a tool, unchanged on disk", files.edit_not_on_disk),
        ("changed on disk, no editing tool names it", files.change_without_tool),
    ]
    rows = [
        ("reported by tools", _file_list(files.tool_reported)),
        ("changed on disk", _file_list(files.disk_changed)),
        (
            "claimed in the answer",
            "no claims field" if files.claimed is None else _file_list(files.claimed),
        ),
    ]
    rows += [(what, _file_list(paths)) for what, paths in differences if paths]
    verdict = "all three agree" if files.consistent else "they disagree"
    return f"**Files** ({verdict})\n\n" + table(("", "files"), rows)


def _file_list(paths: tuple[str, ...] | list[str], shown_at_most: int = SHOWN_FILES) -> str:
    if not paths:
        return "none"
    shown = [inline(path, in_table=True) for path in paths[:shown_at_most]]
    more = f" and {len(paths) - shown_at_most} more" if len(paths) > shown_at_most else ""
    return ", ".join(shown) + more
