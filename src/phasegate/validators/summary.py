"""Where the output phase's JSON summary comes from, and whether there is one.

The summary is a JSON object (the report's ``summary`` once accepted; the messages the agent
reads call it the phase's answer). Depending on the task's ``completion`` mode it may be printed in
assistant text (``marker``/``either``), handed in as the ``summary`` argument of
``submit_summary`` (``tool``/``either``), or given through the runtime's ``StructuredOutput``
tool (any mode; Claude Code's schema-constrained output). The summary that counts is the last
one inside the output phase's window.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from phasegate.evidence.transcript import AssistantText, ToolCall, Transcript
from phasegate.phases.completion import (
    STRUCTURED_OUTPUT_TOOL,
    SUBMIT_SUMMARY_TOOL,
    Completion,
    SummaryWay,
    counts_markers,
    counts_tools,
    summary_ways,
)
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.json_extract import find_json
from phasegate.validators.windows import PhaseWindow


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryCandidate:
    """One candidate summary: parsed (``error`` is None) or the reason it is not usable."""

    position: int
    """The transcript entry it came from."""
    source: SummaryWay
    raw: str
    value: object = None
    error: str | None = None
    rejected_by_runtime: str | None = None
    """For ``StructuredOutput``: the runtime's error when it refused this output."""

    @property
    def ok(self) -> bool:
        """True when the candidate is a parsed JSON object."""
        return self.error is None and isinstance(self.value, dict)


def summary_candidates(
    transcript: Transcript, start: int, end: int, *, completion: Completion
) -> list[SummaryCandidate]:
    """Every candidate summary in entries ``[start, end)`` that the mode counts, in order (a
    call refused before it ran handed nothing in)."""
    results, refused = transcript.results_by_call(), transcript.refused_calls()
    found: list[SummaryCandidate] = []
    for position in range(start, min(end, len(transcript))):
        entry = transcript.entries[position]
        if isinstance(entry, AssistantText) and counts_markers(completion):
            found.extend(_text_summaries(position, entry.text))
        elif isinstance(entry, ToolCall) and entry.id not in refused:
            candidate = _tool_summary(entry, position, completion)
            if candidate is not None and entry.name == STRUCTURED_OUTPUT_TOOL:
                result = results.get(entry.id)
                if result is not None and not result.ok:
                    reason = result.content.strip().removeprefix("Error:").strip()
                    candidate = replace(candidate, rejected_by_runtime=reason or "rejected")
            if candidate is not None:
                found.append(candidate)
    return found


def _tool_summary(call: ToolCall, position: int, completion: Completion) -> SummaryCandidate | None:
    if call.name == STRUCTURED_OUTPUT_TOOL:
        raw = json.dumps(call.input, ensure_ascii=False)
        return SummaryCandidate(
            position=position, source="structured_output", raw=raw, value=call.input
        )
    if call.name != SUBMIT_SUMMARY_TOOL or not counts_tools(completion):
        return None
    summary = call.input.get("summary")
    raw = json.dumps(summary, ensure_ascii=False)
    if isinstance(summary, str):
        # Models sometimes pass the object as a JSON string; what it holds is what counts.
        parsed = find_json(summary)
        if parsed and parsed[-1].ok and isinstance(parsed[-1].value, dict):
            return SummaryCandidate(
                position=position, source="submit_summary", raw=raw, value=parsed[-1].value
            )
    if not isinstance(summary, dict):
        problem = "no summary argument" if summary is None else "a summary that is not an object"
        return SummaryCandidate(
            position=position,
            source="submit_summary",
            raw=raw,
            error=f"submit_summary was called with {problem}",
        )
    return SummaryCandidate(position=position, source="submit_summary", raw=raw, value=summary)


def check_summary_present(
    window: PhaseWindow, transcript: Transcript, *, markers: bool, completion: Completion
) -> tuple[SummaryCandidate | None, list[Issue]]:
    """The phase's answer (the last candidate in its window) or the issue explaining its absence.

    ``json_missing`` when there is none at all, ``json_before_marker`` when answers only appear
    before the window (before the last work phase was completed), ``json_invalid`` when the
    last candidate does not parse or is not an object.
    """
    mine = summary_candidates(transcript, window.start, window.end, completion=completion)
    if window.head is not None:
        mine = _head_text(transcript, window.head, completion, after=True) + mine
    if mine:
        last = mine[-1]
        if last.ok:
            return last, []
        problem = last.error or "it is not a JSON object"
        return None, [
            Issue.of(
                IssueCode.JSON_INVALID,
                f"The answer of phase {window.index} ({window.phase.name}) is not a usable JSON "
                f"object: {problem}.",
                phase=window.index,
                field="json",
                provided=last.raw,
                requirement=_how_to_summarize(window, completion, corrected=True),
            )
        ]
    head_entry = window.head[0] if window.head is not None else window.start
    earlier = summary_candidates(transcript, 0, head_entry, completion=completion)
    if window.head is not None:
        earlier += _head_text(transcript, window.head, completion, after=False)
    if markers and earlier:
        return None, [
            Issue.of(
                IssueCode.JSON_BEFORE_MARKER,
                f"The answer was given before the work phases were complete; phase "
                f"{window.index} ({window.phase.name}) only accepts it after the last work "
                "phase is marked complete.",
                phase=window.index,
                field="json",
                requirement="Complete the work phases and mark each one complete first; "
                "then give the answer.",
            )
        ]
    return None, [_missing(window, completion)]


def _head_text(
    transcript: Transcript, head: tuple[int, int], completion: Completion, *, after: bool
) -> list[SummaryCandidate]:
    """Answers in the marker's own text block, after (or before) the marker line."""
    entry = transcript.entries[head[0]]
    if not isinstance(entry, AssistantText) or not counts_markers(completion):
        return []
    lines = entry.text.splitlines()
    cut = head[1] + 1
    return _text_summaries(head[0], "\n".join(lines[cut:] if after else lines[:cut]))


def _text_summaries(position: int, text: str) -> list[SummaryCandidate]:
    return [
        SummaryCandidate(
            position=position, source="text", raw=c.source, value=c.value, error=c.error
        )
        for c in find_json(text)
    ]


def _missing(window: PhaseWindow, completion: Completion) -> Issue:
    message = f"Phase {window.index} ({window.phase.name}) needs a JSON object and none was given."
    if window.phase.structured_output:
        # The runtime reports such a session as a success with no structured output.
        message = (
            f"Phase {window.index} ({window.phase.name}) asked for structured output and none "
            "was given: no StructuredOutput call was made."
        )
    return Issue.of(
        IssueCode.JSON_MISSING,
        message,
        phase=window.index,
        field="json",
        requirement=_how_to_summarize(window, completion, corrected=False),
    )


def _how_to_summarize(window: PhaseWindow, completion: Completion, *, corrected: bool) -> str:
    what = "a corrected JSON object" if corrected else "the JSON object the output phase describes"
    ways = summary_ways(completion, structured_output=window.phase.structured_output)
    return f"Give {what} through " + " or ".join(_ANSWER_WORDS[way] for way in ways) + "."


_ANSWER_WORDS: dict[SummaryWay, str] = {
    "structured_output": "the StructuredOutput tool",
    "submit_summary": "submit_summary(summary=...)",
    "text": "a ```json block in your reply",
}


def summary_value(candidate: SummaryCandidate | None) -> dict[str, Any] | None:
    """The candidate's object, or None."""
    return candidate.value if candidate is not None and isinstance(candidate.value, dict) else None
