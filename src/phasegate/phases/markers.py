"""The marker grammar, in one place.

A work phase is claimed complete by a line of *assistant text* of the form::

    PHASE <n> COMPLETE: <text>

where ``n`` is the phase's 1-based index in the task. The rules:

* The marker must start its line. Up to three spaces, a Markdown heading (``## ``) or bold
  (``**``) around it are tolerated, because models decorate; anything else before it on the
  line (``I will print PHASE 1 COMPLETE: ...``) makes it mid-sentence and it does not count.
  Four spaces or a tab before it make it code (or an indented continuation), not a marker.
* ``PHASE`` and ``COMPLETE`` are upper case; ``phase 1 complete:`` does not count. ``n`` is
  one to four ASCII digits (a fullwidth or other non-ASCII digit does not count).
* A marker a reader of the rendered Markdown would not see as a line of prose is quoted or
  hidden, not said, and does not count: inside fenced code (closed only by a fence of the
  same character and at least the same length), indented code, an HTML comment
  (``<!-- … -->``, across lines too) or a code span running over lines. Lines end at
  ``\n``, ``\r\n`` or ``\r`` only. :mod:`phasegate.phases.prose` reads that structure.
* Only assistant text is searched. Text inside tool inputs, tool results and user messages
  never yields a marker: that is decided by the caller
  (:func:`phasegate.validators.windows.entry_claims`), which only passes assistant text here.
* ``n`` names the phase; the text after the colon is recorded but not compared, so a model
  that paraphrases the marker text still completes the phase it numbered.
* A number that is not a work phase of the task (0, too large, the output phase) completes
  nothing.
* A marker counts only if it comes after that phase's required work; that ordering rule is
  judged by :func:`phasegate.validators.work.find_late_work` and
  :func:`~phasegate.validators.work.check_order`, which see the whole transcript.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from phasegate.phases.prose import prose_lines

MARKER_TEMPLATE = "PHASE {index} COMPLETE: {text}"
"""The marker line the prompt asks for, with the phase's ``index`` and its marker ``text``."""

# At most three spaces of indentation (four make code); a Markdown heading has one to six "#";
# a phase number has one to four ASCII digits (`\d` would take any script's digits).
_MARKER_LINE = re.compile(
    r" {0,3}(?:#{1,6}[ \t]+)?(?:\*\*|__)?PHASE[ \t]+([0-9]{1,4})[ \t]+COMPLETE:[ \t]*(.*?)[ \t]*"
)
"""A whole line holding a marker: its phase number, then the text after the colon."""
_MARKER_ANYWHERE = re.compile(r"PHASE[ \t]+[0-9]{1,4}[ \t]+COMPLETE:")
"""The core every marker line holds. Lines are substrings of the text, so a text without it
has no marker and its Markdown structure need not be read (most assistant text has none)."""
_EMPHASIS_EDGES = re.compile(r"^(?:\*\*|__)(?=[ \t])|(?:\*\*|__)$")
"""Bold markup left around a marker's text, to strip."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerMatch:
    """One marker found in a block of assistant text."""

    index: int
    """The phase number the marker names (1-based)."""
    text: str
    """What followed ``COMPLETE:``, without decoration."""
    line: int
    """The 0-based line of the block the marker stood on."""


def marker_line(index: int, text: str) -> str:
    """The exact marker line the prompt asks the agent to print for phase ``index``."""
    return MARKER_TEMPLATE.format(index=index, text=text)


def find_markers(text: str) -> list[MarkerMatch]:
    """Every marker in one block of assistant text, in order; ``line`` counts lines as
    :func:`phasegate.phases.prose.prose_lines` does.

    Never raises: any string is valid input, and text without markers gives ``[]``.
    """
    found: list[MarkerMatch] = []
    if _MARKER_ANYWHERE.search(text) is None:
        return found
    for number, line in prose_lines(text):
        match = _MARKER_LINE.fullmatch(line)
        if match:
            claim = _EMPHASIS_EDGES.sub("", match.group(2)).strip()
            found.append(MarkerMatch(index=int(match.group(1)), text=claim, line=number))
    return found
