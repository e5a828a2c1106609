"""A run's page: one self-contained HTML document made from its recording folder.

The page shows the run's header and totals, a timeline of its parts (phases, or stage
visits), for a pipeline whose stages run in parallel its stages as a graph (a column per
level, each stage with its branch and what it needs, and the tokens and cost of each branch),
and for each part the conversation (prompts and feedback, the model's text with its
``PHASE N COMPLETE:`` markers picked out, tool calls with their inputs and results, refusals,
what the sandbox blocked), its gate checks (trigger, issues, the exact feedback), a phase's
``checks`` as the gate last ran them (passed or failed, exit code, time, and what was found:
a command's output; for a rubric, the grader's verdict and reason on each criterion), a
stage's exit checks as they last ran (on its last visit) and its diff (a join's part first
says what was merged into it); the task's own checks follow the parts. The grader's tokens and
cost are shown beside the agent's: the run's in the header (part of its totals), a phase's or
a stage's in its section.
Long blocks fold into ``<details>``, so the page needs no script at all; the CSS is inline and
the page's Content-Security-Policy forbids every fetch and every script, so it reads the same
offline, as a CI artifact or served by ``phasegate serve``.

Everything in a recording came from a model, a tool, a file or a task file, so every text is
escaped (quotes too) wherever it appears, and is shown as text, never as markup.

One module past 500 lines on purpose: the page is one document whose parts share one
escaping rule, one stylesheet and one set of class names; split, the escaping that keeps
untrusted text inert would be spread over files that must agree.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from phasegate._files.atomic import write_atomic
from phasegate.evidence.transcript import (
    AssistantText,
    Notice,
    RunResult,
    SandboxBlocked,
    SessionStart,
    StopOverridden,
    ToolCall,
    ToolRefused,
    ToolResult,
    UserText,
)
from phasegate.metrics.formatting import MISSING, duration, quantity, usd
from phasegate.phases.completion import COMPLETION_TOOLS, PHASE_COMPLETE, SUBMIT_SUMMARY
from phasegate.phases.markers import find_markers
from phasegate.phases.stage_graph import StageGraph
from phasegate.recording.reading import CheckSeen, PartSeen, Recording, read_recording
from phasegate.validators.subagents import SubagentWork

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The page's Content-Security-Policy: no fetch and no script; inline styles only. A server
sending the page sends it as a header too."""
COLLAPSE_CHARS = 1200
"""A block longer than this many characters is folded (its first lines stay visible)."""
COLLAPSE_LINES = 16
"""A block of more lines than this is folded."""
_PREVIEW_CHARS = 160
_COMPLETION_NAMES = {PHASE_COMPLETE, SUBMIT_SUMMARY}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; background: #f6f7f9;
       line-height: 1.4; max-width: 1200px; }
h1 { margin: 0 0 6px; word-break: break-word; }
h2 { margin: 28px 0 8px; border-bottom: 1px solid #dde1e6; padding-bottom: 4px;
     word-break: break-word; }
h3 { margin: 16px 0 6px; font-size: 15px; color: #444; }
.tags span { display: inline-block; margin: 0 6px 6px 0; padding: 1px 8px; border-radius: 10px;
             background: #e6e9ee; font-size: 13px; }
.totals { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0 16px; }
.totals div { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 4px 12px; }
.totals dt { font-size: 12px; color: #666; }
.totals dd { margin: 0; font-size: 18px; font-weight: 600; }
table { border-collapse: collapse; background: #fff; font-size: 14px; margin: 6px 0 12px; }
th, td { border: 1px solid #dde1e6; padding: 3px 10px; text-align: right; }
th:first-child, td:first-child, td.name { text-align: left; }
th { background: #eef0f3; }
.bar { display: inline-block; height: 10px; background: #4c78a8; vertical-align: middle;
       min-width: 2px; }
.accepted, .yes { color: #1b7a35; } .rejected, .failed, .error, .no { color: #b3261e; }
.status { font-weight: 600; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-size: 13px;
      font-family: ui-monospace, Menlo, Consolas, monospace; }
.entry { background: #fff; border: 1px solid #dde1e6; border-left: 4px solid #c7ccd4;
         border-radius: 4px; margin: 6px 0; padding: 4px 10px; }
.who { font-size: 12px; color: #666; }
.user { border-left-color: #8c8c8c; } .feedback { border-left-color: #e45756; background: #fff7f6; }
.assistant { border-left-color: #4c78a8; } .tool { border-left-color: #72b7b2; }
.completion { border-left-color: #54a24b; background: #f5fbf3; }
.refusal, .blocked { border-left-color: #b3261e; background: #fff3f2; }
.quiet { border-left-color: #e6e9ee; color: #555; font-size: 13px; }
mark.marker { background: #fde68a; padding: 0 2px; font-weight: 600; }
.result-error { background: #fff3f2; }
summary { cursor: pointer; }
summary .brief { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }
.check { background: #fff; border: 1px solid #dde1e6; border-radius: 4px; padding: 4px 10px;
         margin: 6px 0; }
.check-at { font-size: 12px; color: #b3261e; margin: 2px 0 2px 12px; }
.check-at.ok { color: #1b7a35; }
.task-check { background: #fff; border: 1px solid #dde1e6; border-left: 4px solid #b3261e;
              border-radius: 4px; margin: 6px 0; padding: 4px 10px; }
.task-check.passed { border-left-color: #1b7a35; }
.issues code { background: #eef0f3; padding: 0 4px; }
.diff { background: #fff; border: 1px solid #dde1e6; padding: 4px 0; }
.diff span { display: block; padding: 0 10px; }
.diff .add { background: #e6ffec; } .diff .del { background: #ffebe9; }
.diff .hunk { color: #6f42c1; background: #f6f0ff; } .diff .file { font-weight: 600; }
.note { color: #8a4b00; }
.levels { display: flex; gap: 12px; align-items: flex-start; overflow-x: auto; }
.level { flex: 0 0 auto; min-width: 160px; }
.node { background: #fff; border: 1px solid #dde1e6; border-left: 4px solid #4c78a8;
        border-radius: 4px; margin: 6px 0; padding: 4px 10px; font-size: 13px; }
.node .needs { color: #666; }
table.criteria { margin: 4px 0 6px; }
table.criteria td { text-align: left; vertical-align: top; }
"""


def render_page(folder: Path) -> str:
    """The page of the recording in ``folder``, as one HTML document that needs nothing else.

    Raises :class:`~phasegate.errors.RecordingError` when the folder is not a readable
    recording (it names the file and what is wrong).
    """
    return page_html(read_recording(folder))


def write_page(folder: Path, output: Path | None = None) -> Path:
    """Render the page of the recording in ``folder`` and write it atomically to ``output``
    (by default the page file the manifest names in the folder, ``index.html``); the path
    written.

    Raises :class:`~phasegate.errors.RecordingError` for a folder that is not a readable
    recording, and :class:`OSError` when the page cannot be written. In the folder itself
    the page is never written through a symbolic link
    (:class:`~phasegate.errors.LinkedPathError`).
    """
    recording = read_recording(folder)
    data = page_html(recording).encode()
    if output is None:
        output = folder / recording.page_file
        write_atomic(output, data, inside=folder)
    else:
        write_atomic(output, data)
    return output


def page_html(recording: Recording) -> str:
    """A read recording as its page (what :func:`render_page` returns)."""
    title = f"{recording.name} · {recording.verdict}"
    sections = "".join(_part_section(recording, n) for n in range(len(recording.parts)))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · phasegate</title>
<style>{_STYLE}</style>
</head>
<body>
{_header(recording)}
{_sandbox(recording)}
{_timeline(recording)}
{_stage_graph(recording)}
{sections}
{_task_checks(recording)}
{_unowned(recording)}
{_cut(recording)}
</body>
</html>
"""


# -- the header and the timeline ---------------------------------------------------------
def _header(recording: Recording) -> str:
    parts = recording.parts
    tokens_in = sum(p.input_tokens for p in parts) + recording.unowned.input_tokens
    tokens_out = sum(p.output_tokens for p in parts) + recording.unowned.output_tokens
    costs = [p.cost_usd for p in parts] + [recording.unowned.cost_usd]
    cost = None if all(c is None for c in costs) else sum(c or 0.0 for c in costs)
    run_ms = recording.report.get("duration_ms")
    if not isinstance(run_ms, int | float) or isinstance(run_ms, bool):
        known = [p.duration_ms for p in parts if p.duration_ms is not None]
        run_ms = sum(known) if known else None
    calls = sum(1 for e in recording.entries if isinstance(e, ToolCall))
    tags = [("kind", recording.kind), ("verdict", recording.verdict), ("mode", recording.mode),
            ("run", recording.run_id), ("written", recording.written_at),
            ("phasegate", recording.phasegate_version)]  # fmt: skip
    tag_html = "".join(
        f'<span data-tag="{_e(name)}">{_e(name)}: {_e(value)}</span>'
        for name, value in tags
        if value
    )
    graded = _reported_usage(recording.report.get("grader_usage"))
    if graded is not None:  # the parts and what no part owns are the agent's: the grader adds
        tokens_in += graded["input_tokens"]
        tokens_out += graded["output_tokens"]
        if graded["cost_usd"] is not None:
            cost = (cost or 0.0) + graded["cost_usd"]
    totals = [("verdict", recording.verdict), (_part_noun(recording) + "s", str(len(parts))),
              ("gate checks", str(len(recording.checks))), ("tool calls", str(calls)),
              ("tokens in / out", f"{tokens_in} / {tokens_out}"), ("cost", usd(cost)),
              ("time", duration(run_ms))]  # fmt: skip
    if graded is not None:
        totals.insert(6, ("of it the grader", _usage_text(graded)))
    check_ms = _count(recording.report.get("check_ms"))
    if check_ms:
        totals.append(("of it in checks", duration(check_ms)))
    cells = "".join(f"<div><dt>{_e(n)}</dt><dd>{_e(v)}</dd></div>" for n, v in totals)
    error = recording.error or recording.report.get("error")
    error_html = f'<p class="error">{_e(error)}</p>' if isinstance(error, str) and error else ""
    return (f'<header><h1>{_e(recording.name)}</h1><div class="tags">{tag_html}</div>'
            f'<dl class="totals">{cells}</dl>{error_html}</header>')  # fmt: skip


def _sandbox(recording: Recording) -> str:
    """How the agent was confined and each attempt to leave (docs/sandbox.md), as the
    report says; nothing when no sandbox was asked for. The report is read from disk: only
    values of the expected shape are shown, each escaped."""
    sandbox = recording.report.get("sandbox")
    if not isinstance(sandbox, dict):
        return ""
    hosts = sandbox.get("network")
    listed = [h for h in hosts if isinstance(h, str)] if isinstance(hosts, list) else []
    if sandbox.get("confined") is True:
        said = f"confined ({sandbox.get('mode')}); hosts allowed: {', '.join(listed) or 'none'}"
    elif sandbox.get("mode") == "off":
        said = "off: not confined"
    else:
        said = f"not confined: {sandbox.get('unavailable') or 'unavailable'}"
    blocked = recording.report.get("blocked")
    items = [b for b in blocked if isinstance(b, dict)] if isinstance(blocked, list) else []
    lines = "".join(
        f"<li>{_e(b.get('kind'))}: {_e(b.get('tool'))} {_target(b)}<code>{_e(b.get('detail'))}"
        "</code></li>"
        for b in items
    )
    listing = f"<p>Blocked by the sandbox ({len(items)}):</p><ul>{lines}</ul>" if items else ""
    return f'<section class="sandbox"><h2>Sandbox</h2><p>{_e(said)}</p>{listing}</section>'


def _target(blocked: dict[str, Any]) -> str:
    """What an attempt went for, when the report says (reports before it was recorded do
    not)."""
    target = blocked.get("target")
    return f"<code>{_e(target)}</code>: " if isinstance(target, str) and target else ""


def _timeline(recording: Recording) -> str:
    parts = recording.parts
    if not parts:
        return '<p class="empty">The run has no parts: it ended before its first one.</p>'
    longest = max((p.duration_ms or 0 for p in parts), default=0) or 1
    rows = []
    for n, part in enumerate(parts):
        width = round(200 * (part.duration_ms or 0) / longest)
        title = _e(_part_title(recording, part))
        rows.append(
            f'<tr data-part="{n}"><td class="name"><a href="#part-{n}">{title}'
            f'</a></td><td class="status {_e(part.status)}">{_e(part.status)}</td>'
            f"<td>{part.attempts}</td><td>{part.input_tokens} / {part.output_tokens}</td>"
            f"<td>{_e(usd(part.cost_usd))}</td><td>{_e(duration(part.duration_ms))}</td>"
            f'<td class="name"><span class="bar" style="width: {width}px"></span></td></tr>'
        )
    head = "".join(f"<th>{h}</th>" for h in (_part_noun(recording), "status", "attempts",
                                             "tokens in / out", "cost", "time", ""))  # fmt: skip
    return (f'<h2 id="timeline">Timeline</h2><table class="timeline"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


class _OnFail:
    back_to = None  # a report does not say where a stage goes back to; no check needs it


_NO_BACK_TO = _OnFail()


@dataclass(frozen=True, slots=True)
class _ReportedStage:
    """A stage as ``report.json`` lists it, for the graph (read from disk: checked)."""

    name: str
    needs: tuple[str, ...]
    branch: str
    status: str
    usage: dict[str, Any]

    @property
    def on_fail(self) -> _OnFail:
        """Nowhere to go back to, as far as the graph is concerned."""
        return _NO_BACK_TO


def _reported_stages(recording: Recording) -> list[_ReportedStage] | None:
    """The report's stages with their branch and needs; None for a report without them
    (a task's, or a pipeline's written before branches) or of another shape."""
    stages = recording.report.get("stages")
    if recording.kind != "pipeline" or not isinstance(stages, list):
        return None
    found = []
    for stage in stages:
        if not isinstance(stage, dict):
            return None
        name, branch, needs = stage.get("name"), stage.get("branch"), stage.get("needs")
        usage = stage.get("usage")
        if not (isinstance(name, str) and isinstance(branch, str) and isinstance(needs, list)
                and all(isinstance(n, str) for n in needs)):  # fmt: skip
            return None
        found.append(_ReportedStage(name=name, needs=tuple(needs), branch=branch,
                                    status=str(stage.get("status")),
                                    usage=usage if isinstance(usage, dict) else {}))  # fmt: skip
    return found


def _stage_graph(recording: Recording) -> str:
    """A pipeline's stages as a graph, when they did not all run one after another: a
    column per level, each stage with its branch, status and needs, then each branch's tokens
    and cost (the agent's: the branches' rows add up to the stages', and with the grader's and
    what no stage owns to the run's). Nothing for a sequential pipeline or a report that does
    not say."""
    stages = _reported_stages(recording)
    if not stages:
        return ""
    try:
        graph = StageGraph.of_stages(stages)
    except ValueError:  # names repeated, unknown or in a cycle: not a report phasegate wrote
        return ""
    if graph.sequential:
        return ""
    by_name = {stage.name: stage for stage in stages}
    columns = []
    for number, level in enumerate(graph.levels(), start=1):
        nodes = "".join(_graph_node(by_name[name], graph) for name in level)
        columns.append(f'<div class="level" data-level="{number}"><h3>Level {number}</h3>'
                       f"{nodes}</div>")  # fmt: skip
    rows = []
    for branch in graph.branches:
        names = [s.name for s in stages if s.branch == branch]
        usage = _usage_sum([by_name[n].usage for n in names])
        rows.append(_usage_row(f"branch {branch}", ", ".join(names), usage, branch=branch))
    every = _usage_sum([s.usage for s in stages])
    rows.append(_usage_row("all stages", str(len(stages)), every))
    graded = _reported_usage(recording.report.get("grader_usage"))
    if graded is not None:
        rows.append(_usage_row("the grader", "", graded))
    for label, key in (("no stage", "unattributed_usage"), ("run", "usage")):
        reported = recording.report.get(key)
        rows.append(_usage_row(label, "", reported if isinstance(reported, dict) else {}))
    head = "".join(f"<th>{h}</th>" for h in ("", "stages", "tokens in / out", "cost"))
    return (
        '<section id="graph"><h2>Stages as a graph</h2><p>A column per level: a stage starts '
        "once every stage it needs is accepted, each branch in its own session and work "
        "directory; a join merges the branches it needs into its own.</p>"
        f'<div class="levels">{"".join(columns)}</div>'
        f'<table class="branches"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
        "</tbody></table></section>"
    )


def _graph_node(stage: _ReportedStage, graph: StageGraph) -> str:
    needs = graph.needs(stage.name)
    if graph.is_join(stage.name):
        how = f"joins {', '.join(graph.joins(stage.name))} into branch {stage.branch}"
    elif graph.starts_branch(stage.name):
        fork = graph.forks_from(stage.name)
        how = f"starts branch {stage.branch}" + (f", forked from {fork}" if fork else "")
    else:
        how = f"continues branch {stage.branch}"
    arrow = f"← needs {', '.join(needs)}" if needs else "needs nothing"
    return (
        f'<div class="node" data-stage="{_e(stage.name)}" data-branch="{_e(stage.branch)}">'
        f"<strong>{_e(stage.name)}</strong> "
        f'<span class="status {_e(stage.status)}">{_e(stage.status)}</span><br>{_e(how)}<br>'
        f'<span class="needs">{_e(arrow)}</span></div>'
    )


def _usage_sum(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """Token counts added; cost added, None when no share has one."""

    def number(usage: dict[str, Any], key: str) -> float:
        value = usage.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

    costs = [u.get("cost_usd") for u in usages]
    return {
        "input_tokens": sum(int(number(u, "input_tokens")) for u in usages),
        "output_tokens": sum(int(number(u, "output_tokens")) for u in usages),
        "cost_usd": None if all(c is None for c in costs)
        else sum(number(u, "cost_usd") for u in usages),
    }  # fmt: skip


def _usage_row(label: str, stages: str, usage: dict[str, Any], branch: str | None = None) -> str:
    cost = usage.get("cost_usd")
    attribute = f' data-branch="{_e(branch)}"' if branch is not None else ""
    return (
        f"<tr{attribute}><td>{_e(label)}</td><td>{_e(stages)}</td>"
        f"<td>{_e(usage.get('input_tokens'))} / {_e(usage.get('output_tokens'))}</td>"
        f"<td>{_e(usd(cost if isinstance(cost, int | float) else None))}</td></tr>"
    )


def _part_noun(recording: Recording) -> str:
    if recording.kind == "loop":
        return "loop"
    if recording.parts and all(p.kind == "phase" for p in recording.parts):
        return "phase"
    return "stage visit" if recording.parts else "part"


def _part_title(recording: Recording, part: PartSeen) -> str:
    if recording.kind == "loop":  # one stage, visited once: its checks are the iterations
        return f"Loop · {quantity(part.attempts, 'iteration')}"
    if part.kind == "phase":
        return f"Phase {part.index} · {part.name}" if part.index is not None else part.name
    visit = f" · visit {part.visit}" if part.visit is not None else ""
    return f"{part.kind.capitalize()} {part.name}{visit}"


# -- one part ------------------------------------------------------------------------------
def _part_section(recording: Recording, n: int) -> str:
    part = recording.parts[n]
    checks = [c for c in recording.checks if c.part == n]
    start, end = part.entries
    figures = (f"{part.status} · {quantity(part.attempts, 'attempt')} · "
               f"{part.input_tokens} / {part.output_tokens} tokens · {usd(part.cost_usd)} · "
               f"{duration(part.duration_ms)}")  # fmt: skip
    reported = _reported_phase(recording, part)
    check_ms = _count(reported.get("check_ms"))
    if check_ms:
        figures += f" (of it in checks: {duration(check_ms)})"
    stage = _reported_stage(recording, n)
    graded = _reported_usage((stage or reported).get("grader_usage"))
    if graded is not None:
        whose = "its grader, every visit" if stage else "its grader"
        figures += f" · {whose}: {_usage_text(graded)}"
    conversation = _conversation(recording, range(start, end), checks)
    title = _e(_part_title(recording, part))
    phase_checks = _ran_checks(reported.get("checks"))
    ran = f"<h3>Checks</h3>{phase_checks}" if phase_checks else ""
    if stage is not None:
        exits = _exit_checks(stage.get("checks"))
        ran += f"<h3>Exit checks, as they last ran</h3>{exits}" if exits else ""
    return (
        f'<section class="part" id="part-{n}" data-part="{n}">'
        f'<h2>{title}</h2><p class="status {_e(part.status)}">{_e(figures)}</p>'
        f"{_subagents(recording, part)}{_merged(recording, n)}"
        f"<h3>Conversation</h3>{conversation or '<p>No transcript entries.</p>'}"
        f"<h3>Gate checks</h3>{_checks(checks)}{ran}"
        f"<h3>Diff</h3>{_diff(part)}</section>"
    )


def _reported_stage(recording: Recording, n: int) -> dict[str, Any] | None:
    """The report's entry of the stage whose last visit in this recording is part ``n`` (its
    exit checks as they last ran, its figures over every visit); None for any other part."""
    part, stages = recording.parts[n], recording.report.get("stages")
    if part.kind != "stage" or not isinstance(stages, list):
        return None
    if any(later.kind == "stage" and later.index == part.index
           for later in recording.parts[n + 1 :]):  # fmt: skip
        return None
    return next((s for s in stages if isinstance(s, dict) and s.get("index") == part.index), None)


def _reported_usage(raw: object) -> dict[str, Any] | None:
    """A report's usage object (a ``grader_usage``) as tokens in and out and cost, each a
    number or None; None when it is not one or is zero (no grader spent anything)."""
    if not isinstance(raw, dict):
        return None
    usage = _usage_sum([raw])
    if not usage["input_tokens"] and not usage["output_tokens"] and not usage["cost_usd"]:
        return None
    return usage


def _usage_text(usage: dict[str, Any]) -> str:
    """``600 / 80 tokens · $0.0240``."""
    return f"{usage['input_tokens']} / {usage['output_tokens']} tokens · {usd(usage['cost_usd'])}"


def _reported_phase(recording: Recording, part: PartSeen) -> dict[str, Any]:
    """The report's entry of a phase part (empty for a stage visit, or a report without it)."""
    phases = recording.report.get("phases")
    if part.kind != "phase" or not isinstance(phases, list):
        return {}
    return next((p for p in phases if isinstance(p, dict) and p.get("index") == part.index), {})


def _subagents(recording: Recording, part: PartSeen) -> str:
    """The part of a phase's work its subagents did, as the run report counts it."""
    raw = _reported_phase(recording, part).get("subagents")
    try:
        work = [SubagentWork.model_validate(w) for w in raw] if isinstance(raw, list) else []
    except ValidationError:
        return ""  # a report a later phasegate wrote: the conversation still shows the calls
    if not work:
        return ""
    rows = "".join(
        f'<tr data-agent="{_e(w.agent)}"><td>{_e(w.label)}</td><td>{_e(w.summary)}</td></tr>'
        for w in work
    )
    return (
        "<h3>Subagents</h3><p>Their work counts in this phase's figures; the rest is the "
        "main agent's.</p><table><thead><tr><th>subagent</th><th>successful calls, errors, "
        f"files</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _merged(recording: Recording, n: int) -> str:
    """What was merged into a join before its first visit here, as the report's ``branches``
    say (the branches, the files each merge changed, the files left in conflict); nothing for
    another part, or a report without it. Read from disk: only values of the expected shape
    are shown, each escaped."""
    part = recording.parts[n]
    branches = recording.report.get("branches")
    first = next((i for i, p in enumerate(recording.parts) if p.name == part.name), None)
    if part.kind != "stage" or first != n or not isinstance(branches, list):
        return ""
    record = next((b for b in branches if isinstance(b, dict) and b.get("first") == part.name
                   and isinstance(b.get("merged"), list) and b["merged"]), None)  # fmt: skip
    if record is None:
        return ""
    files = record.get("merged_files")
    files = files if isinstance(files, dict) else {}
    items = []
    for branch in record["merged"]:
        changed = files.get(branch)
        named = [f for f in changed if isinstance(f, str)] if isinstance(changed, list) else []
        said = f"files: {', '.join(named)}" if named else "no file changed"
        if not isinstance(changed, list):
            said = "its files are not in the report"
        items.append(f'<li data-branch="{_e(branch)}">branch {_e(branch)}: {_e(said)}</li>')
    conflicts = record.get("conflicts")
    left = [c for c in conflicts if isinstance(c, str)] if isinstance(conflicts, list) else []
    conflict_html = (
        f'<p class="note">Left in conflict for it to resolve: {_e(", ".join(left))}</p>'
        if left
        else "<p>No conflict.</p>"
    )
    return (
        f'<div class="merged"><h3>Merged into it</h3><p>Into branch {_e(record.get("branch"))}'
        "'s work directory before it began (its diff is what it changed after):</p>"
        f"<ul>{''.join(items)}</ul>{conflict_html}</div>"
    )


def _conversation(recording: Recording, positions: range, checks: list[CheckSeen]) -> str:
    entries = recording.entries
    feedback = {c.feedback for c in recording.checks if c.feedback}
    results = {e.tool_use_id: e for i in positions if isinstance(e := entries[i], ToolResult)}
    shown_results: set[str] = set()
    at: dict[int, list[tuple[int, CheckSeen]]] = {}
    for number, check in enumerate(checks, start=1):
        where = check.entry if check.entry is not None else positions.stop
        at.setdefault(min(max(where, positions.start), positions.stop), []).append((number, check))
    out: list[str] = []
    for i in [*positions, positions.stop]:
        out.extend(_check_mark(number, check) for number, check in at.get(i, ()))
        if i == positions.stop:
            break
        entry = entries[i]
        if isinstance(entry, ToolCall):
            result = results.get(entry.id)
            if result is not None:
                shown_results.add(entry.id)
            out.append(_tool_call(i, entry, result))
        elif isinstance(entry, ToolResult):
            if entry.tool_use_id not in shown_results:
                out.append(_tool_result(i, entry))
        else:
            out.append(_entry(i, entry, feedback))
    return "".join(out)


def _check_mark(number: int, check: CheckSeen) -> str:
    issues = quantity(len(check.issues), "issue")
    verdict = "accepted" if check.accepted else f"not accepted ({issues})"
    css = "check-at ok" if check.accepted else "check-at"
    return f'<p class="{css}">⟶ gate check {number} ({_e(check.trigger)}): {_e(verdict)}</p>'


def _entry(i: int, entry: Any, feedback: set[str]) -> str:
    if isinstance(entry, UserText):
        is_feedback = entry.text in feedback
        who = "gate feedback to the model" if is_feedback else "to the model"
        css = "feedback" if is_feedback else "user"
        return _block(i, css, who, _folded(entry.text))
    if isinstance(entry, AssistantText):
        return _block(i, "assistant", "assistant", _folded(entry.text, markers=True))
    if isinstance(entry, ToolRefused):
        where = f" in phase {entry.phase}" if entry.phase is not None else ""
        head = f"refused before it ran{where}: {entry.name} {entry.input}"
        return _block(i, "refusal", _e(head), f"<pre>{_e(entry.reason)}</pre>", raw_who=True)
    if isinstance(entry, SandboxBlocked):
        head = f"blocked by the sandbox ({entry.blocked}): {entry.tool} {entry.target}"
        return _block(i, "blocked", head, f"<pre>{_e(entry.detail)}</pre>")
    if isinstance(entry, SessionStart):
        text = ", ".join(f"{k}: {v}" for k, v in (("model", entry.model), ("cwd", entry.cwd),
                                                   ("session", entry.session_id)) if v)  # fmt: skip
        return _block(i, "quiet", "session started", f"<pre>{_e(text)}</pre>" if text else "")
    if isinstance(entry, Notice):
        return _block(i, "quiet", "notice from the runtime", _folded(entry.text))
    if isinstance(entry, StopOverridden):
        blocks = f" after {entry.blocks} blocks" if entry.blocks is not None else ""
        return _block(i, "quiet", f"the runtime ended the turn{blocks}", _folded(entry.text))
    if isinstance(entry, RunResult):
        words = [entry.subtype or "", "error" if entry.is_error else "",
                 f"{entry.num_turns} turns" if entry.num_turns is not None else "",
                 duration(entry.duration_ms) if entry.duration_ms is not None else ""]  # fmt: skip
        head = "turn ended" + (": " + ", ".join(w for w in words if w) if any(words) else "")
        return _block(i, "quiet", head, _folded(entry.text) if entry.text else "")
    return ""  # usage entries: their tokens are in the figures


def _tool_call(i: int, call: ToolCall, result: ToolResult | None) -> str:
    short = call.name.rsplit("__", 1)[-1]
    completion = call.name in COMPLETION_TOOLS or short in _COMPLETION_NAMES
    arguments = json.dumps(call.input, ensure_ascii=False, indent=2, default=str)
    body = f'<div class="who">input</div>{_folded(arguments)}'
    outcome = ""
    if result is not None:
        css = "" if result.ok else " result-error"
        label = "result" if result.ok else "error result"
        shown = _folded(result.content)
        body += f'<div class="who{css}">{label}</div><div class="{css.strip()}">{shown}</div>'
        outcome = "" if result.ok else " · error"
    else:
        outcome = " · no result"
    long = len(arguments) + (len(result.content) if result else 0) > COLLAPSE_CHARS
    kind = "completion tool" if completion else "tool call"
    if call.agent is not None:
        kind = f"subagent {call.agent.label} · {kind}"
    css = "completion" if completion else "tool"
    summary = (f'<summary><span class="who">{kind}{outcome}</span> <b>{_e(call.name)}</b> '
               f'<span class="brief">{_e(call.brief)}</span></summary>')  # fmt: skip
    state = "" if long else " open"
    return (f'<details class="entry {css}" id="e{i}" data-entry="{i}" data-tool="{_e(call.name)}"'
            f"{state}>{summary}{body}</details>")  # fmt: skip


def _tool_result(i: int, result: ToolResult) -> str:
    label = "tool result" if result.ok else "tool error result"
    return _block(i, "tool", f"{label} for {result.tool_use_id}", _folded(result.content))


def _block(i: int, css: str, who: str, body: str, *, raw_who: bool = False) -> str:
    label = who if raw_who else _e(who)
    return (f'<div class="entry {css}" id="e{i}" data-entry="{i}"><div class="who">{label}</div>'
            f"{body}</div>")  # fmt: skip


def _folded(text: str, *, markers: bool = False) -> str:
    """``text`` in a ``<pre>``; a long one folded into ``<details>`` with its start shown."""
    shown = _marked(text) if markers else _e(text)
    lines = text.count("\n") + 1
    if len(text) <= COLLAPSE_CHARS and lines <= COLLAPSE_LINES:
        return f"<pre>{shown}</pre>"
    preview = text[:_PREVIEW_CHARS].split("\n", 3)
    start = "\n".join(preview[:3])
    size = f"{quantity(lines, 'line')}, {quantity(len(text), 'character')}"
    return (f'<details class="long"><summary><span class="who">{_e(size)}: show all</span>'
            f"<pre>{_e(start)}…</pre></summary><pre>{shown}</pre></details>")  # fmt: skip


def _marked(text: str) -> str:
    """Assistant text escaped, its marker lines in ``<mark class="marker">``."""
    lines = {m.line for m in find_markers(text)}
    if not lines:
        return _e(text)
    pieces, breaks = _LINE_BREAK.split(text), _LINE_BREAK.findall(text)
    out = []
    for number, piece in enumerate(pieces):
        out.append(f'<mark class="marker">{_e(piece)}</mark>' if number in lines else _e(piece))
        if number < len(breaks):
            out.append(breaks[number])
    return "".join(out)


# -- checks and diffs ----------------------------------------------------------------------
def _checks(checks: list[CheckSeen]) -> str:
    if not checks:
        return "<p>No gate check judged this part.</p>"
    out = []
    for number, check in enumerate(checks, start=1):
        verdict = "accepted" if check.accepted else "not accepted"
        attempt = f", attempt {check.attempt}" if check.attempt is not None else ""
        issues = "".join(
            f"<li><code>{_e(issue.code)}</code> {_issue_message(issue.message)}</li>"
            for issue in check.issues
        )
        issues_html = f'<ul class="issues">{issues}</ul>' if issues else ""
        if check.feedback is None:
            feedback = "<p>No feedback: the run ended here.</p>" if not check.accepted else ""
        else:
            label = "what the model received" if check.trigger != "tool" else "the tool's answer"
            text = _e(check.feedback)
            feedback = f'<div class="who">{label}</div><pre class="feedback-text">{text}</pre>'
        css = "accepted" if check.accepted else "rejected"
        out.append(
            f'<div class="check" data-check="{number}"><b>Check {number}</b>{_e(attempt)} · '
            f'trigger {_e(check.trigger)} · <span class="status {css}">{verdict}</span>'
            f"{issues_html}{feedback}</div>"
        )
    return "".join(out)


def _issue_message(message: str) -> str:
    """An issue's message: on the line, or, when it runs over lines (a failed check's message
    holds the end of a command's output), in a ``<pre>`` that keeps them, folded when long."""
    return _folded(message) if "\n" in message or "\r" in message else _e(message)


def _task_checks(recording: Recording) -> str:
    """The task's own checks, as the gate last ran them at the final acceptance; or that no
    check was run, when a judgment was asked to run none."""
    if recording.report.get("checks_skipped") is True:
        return (
            '<section class="part" id="task-checks"><h2>Checks not run</h2><p>This judgment '
            "was asked to run none of the task's checks: its verdict rests on the other "
            "evidence alone.</p></section>"
        )
    shown = _ran_checks(recording.report.get("checks"))
    if not shown:
        return ""
    return (
        '<section class="part" id="task-checks"><h2>The task\'s own checks</h2><p>Run when '
        "every phase was otherwise accepted, on the disk the run ended with.</p>"
        f"{shown}</section>"
    )


def _ran_checks(raw: object) -> str:
    """A report's ``checks`` (a phase's or the task's own): each check as the gate last ran it,
    whether it passed, its exit code and time, and what was found (a command's output) as
    text; "" when there are none. The report is read from disk: an entry not of the expected
    shape is left out, every value shown is escaped."""
    checks = [c for c in raw if _is_check(c)] if isinstance(raw, list) else []
    out = []
    for number, check in enumerate(checks, start=1):
        passed = check["passed"]
        said = "passed" if passed else "failed"
        exit_code = check.get("exit_code")
        facts = [check["kind"], f"time {duration(check['duration_ms'])}",
                 f"run at gate judgment {check['run']}"]  # fmt: skip
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            facts.insert(1, f"exit code {exit_code}")
        out.append(
            f'<div class="task-check{" passed" if passed else ""}" data-task-check="{number}">'
            f'<b>{_e(check["description"])}</b> · <span class="status '
            f'{"accepted" if passed else "rejected"}">{said}</span> · {_e(" · ".join(facts))}'
            f'<div class="who">what was found</div>{_folded(check["detail"])}'
            f"{_criteria(check.get('criteria'))}</div>"
        )
    if not out:
        return ""
    return (
        "<p>Each check as the gate last ran it; a failed run before it is in the gate check "
        f"that reported it.</p>{''.join(out)}"
    )


def _exit_checks(raw: object) -> str:
    """A stage's exit checks as the report keeps them (its latest outcomes): each held or
    not, what was found, and a rubric's verdicts; "" when there are none. Read from disk: an
    entry not of the expected shape is left out, every value shown is escaped."""
    checks = [
        c for c in raw
        if isinstance(c, dict) and isinstance(c.get("ok"), bool)
        and all(isinstance(c.get(key), str) for key in ("kind", "description", "detail"))
    ] if isinstance(raw, list) else []  # fmt: skip
    out = []
    for number, check in enumerate(checks, start=1):
        ok = check["ok"]
        out.append(
            f'<div class="task-check{" passed" if ok else ""}" data-exit-check="{number}">'
            f'<b>{_e(check["description"])}</b> · <span class="status '
            f'{"accepted" if ok else "rejected"}">{"held" if ok else "failed"}</span> · '
            f'{_e(check["kind"])}<div class="who">what was found</div>{_folded(check["detail"])}'
            f"{_criteria(check.get('criteria'))}</div>"
        )
    return "".join(out)


_VERDICT_WORDS = {"met": "met", "not_met": "not met", "cannot_tell": "cannot tell"}
_VERDICT_CSS = {"met": "accepted", "not_met": "rejected", "cannot_tell": "rejected"}


def _criteria(raw: object) -> str:
    """A rubric's criteria as a grader judged them (a report's ``criteria``): a row each with
    the criterion, the verdict and the grader's reason (its own lines kept), all escaped; ""
    for a check without them. An entry not of the expected shape is left out."""
    items = [
        c for c in raw
        if isinstance(c, dict) and c.get("verdict") in _VERDICT_WORDS
        and all(isinstance(c.get(key), str) for key in ("id", "criterion", "reason"))
    ] if isinstance(raw, list) else []  # fmt: skip
    if not items:
        return ""
    rows = "".join(
        f'<tr data-criterion="{_e(c["id"])}"><td>{_e(c["id"])}</td><td>{_e(c["criterion"])}</td>'
        f'<td class="status {_VERDICT_CSS[c["verdict"]]}">{_VERDICT_WORDS[c["verdict"]]}</td>'
        f"<td>{_folded(c['reason'])}</td></tr>"
        for c in items
    )
    return (
        '<div class="who">the grader\'s verdicts (only met counts)</div><table class="criteria">'
        "<thead><tr><th>criterion</th><th>what it asks</th><th>verdict</th><th>the grader's "
        f"reason</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _is_check(value: object) -> bool:
    """Whether ``value`` has the shape of a report's check."""
    return (
        isinstance(value, dict)
        and all(isinstance(value.get(key), str) for key in ("kind", "description", "detail"))
        and isinstance(value.get("passed"), bool)
        and _count(value.get("duration_ms")) is not None
        and _count(value.get("run")) is not None
    )


def _count(value: object) -> int | None:
    """``value`` when it is a whole number of at least 0 (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _diff(part: PartSeen) -> str:
    note = f'<p class="note">{_e(part.diff_note)}</p>' if part.diff_note else ""
    cut = '<p class="note">The diff was cut at its size bound.</p>' if part.diff_cut else ""
    files = ", ".join(part.diff_files)
    files_html = f"<p>Files changed: {_e(files)}</p>" if files else ""
    if part.diff is None:
        empty = "" if note else "<p>No change to the work directory.</p>"
        return f"{files_html}{note}{empty}"
    counts = Counter(_line_kind(line) for line in part.diff.split("\n"))
    stat = f"<p>+{counts['add']} −{counts['del']}</p>"
    lines = "".join(_diff_line(line) for line in _diff_lines(part.diff))
    return f'{files_html}{stat}{note}{cut}<pre class="diff">{lines}</pre>'


def _diff_lines(diff: str) -> Iterator[str]:
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    yield from lines


def _line_kind(line: str) -> str:
    if line.startswith(("+++ ", "--- ", "diff ")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "context"


def _diff_line(line: str) -> str:
    return f'<span class="{_line_kind(line)}">{_e(line) or " "}</span>'


# -- what no part owns ---------------------------------------------------------------------
def _unowned(recording: Recording) -> str:
    ranges = recording.unowned.entries
    if not ranges:
        return ""
    body = "".join(_conversation(recording, range(start, end), []) for start, end in ranges
                   if 0 <= start <= end <= len(recording.entries))  # fmt: skip
    figures = (f"{recording.unowned.input_tokens} / {recording.unowned.output_tokens} tokens · "
               f"{usd(recording.unowned.cost_usd)}")  # fmt: skip
    return (f'<section class="part" id="unowned"><h2>Outside any '
            f"{_e(_part_noun(recording))}</h2><p>{_e(figures)}</p>{body}</section>")  # fmt: skip


def _cut(recording: Recording) -> str:
    if not recording.cut:
        return ""
    items = "".join(f"<li>{_e(sentence)}</li>" for sentence in recording.cut)
    return f'<section id="cut"><h2>Left out for size</h2><ul class="note">{items}</ul></section>'


def _e(value: object) -> str:
    """Any value as escaped text (quotes too: it may stand in an attribute)."""
    return escape(MISSING if value is None else str(value), quote=True)
