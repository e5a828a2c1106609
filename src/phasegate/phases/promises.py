"""Completion promises: ``<promise>TEXT</promise>`` said by the agent in its own words.

A Ralph loop (and a pagent stage's ``promise_in_output``) ends when the agent *says* a
promise. Said means, under the marker grammar's rules (:mod:`phasegate.phases.markers`):

* The promise stands on a line of its own. Up to three spaces, a Markdown heading (``## ``)
  or bold (``**``) around it are tolerated, because models decorate; anything else on the
  line makes it a mention, not a promise: ``I cannot output <promise>DONE</promise> yet``
  says the opposite. A line starting with ``>`` (a block quote) or a list bullet quotes or
  lists, it does not promise. Two promises on one line are neither on a line of its own.

* Only assistant text counts. A promise inside a tool input, a tool result (a file the agent
  wrote, then read back) or a user message is data, never said: that is decided by the
  caller, which only passes the agent's own text blocks here.
* Only prose counts: a promise inside fenced or indented code, a code span or an HTML
  comment is quoted or hidden, not said (:func:`phasegate.phases.prose.prose_blocks`).
* The text between the tags is compared after whitespace normalisation (leading and
  trailing whitespace dropped, every other run of whitespace one space), as Ralph's Stop
  hook compares it; the tags themselves are lower case, as Ralph writes them.
* The tags and the text between them are on one line, and that text holds no backtick or
  ``<!--`` (a code span or comment could hide the closing tag); an opening tag never closed
  promises nothing.
"""

from __future__ import annotations

import re

from phasegate.phases.prose import prose_blocks, prose_lines

OPEN_TAG = "<promise>"
CLOSE_TAG = "</promise>"

# The decoration the marker grammar tolerates: at most three spaces (four make code), a
# Markdown heading, bold; then the promise, then the closing bold and spaces only.
_PROMISE_LINE = re.compile(
    r" {0,3}(?:#{1,6}[ \t]+)?(?:\*\*|__)?<promise>([^`]*?)</promise>(?:\*\*|__)?[ \t]*"
)
"""A whole line holding one promise: the text between the tags."""
_NOT_INSIDE = (OPEN_TAG, CLOSE_TAG, "<!--")
"""What a promise said on its own line never holds: a second promise, a comment's start."""


def normalize_promise(text: str) -> str:
    """``text`` with its whitespace normalised: stripped, inner runs made one space."""
    return " ".join(text.split())


def promise_tag(text: str) -> str:
    """``<promise>TEXT</promise>``: what the agent must say to keep the promise ``text``."""
    return f"{OPEN_TAG}{text}{CLOSE_TAG}"


def said_promises(text: str) -> list[str]:
    """The promises one block of assistant text says, normalised, in order: each on a line
    of prose of its own. Never raises; linear in the text."""
    found: list[str] = []
    for _, line in prose_lines(text):
        match = _PROMISE_LINE.fullmatch(line)
        if match and not any(tag in match.group(1) for tag in _NOT_INSIDE):
            found.append(normalize_promise(match.group(1)))
    return found


def mentioned_promises(text: str) -> list[str]:
    """Every promise of one block of assistant text that stands in prose, said or only
    mentioned (mid-sentence, in a quote), normalised, in order."""
    return [promise for block in prose_blocks(text) for promise in tagged(block)]


def tagged(text: str) -> list[str]:
    """Every ``<promise>…</promise>`` in ``text``, normalised, wherever it stands (code
    included). Linear in the text: once no closing tag is left, nothing more can close."""
    found: list[str] = []
    at = 0
    while (start := text.find(OPEN_TAG, at)) >= 0:
        end = text.find(CLOSE_TAG, start + len(OPEN_TAG))
        if end < 0:
            break
        found.append(normalize_promise(text[start + len(OPEN_TAG) : end]))
        at = end + len(CLOSE_TAG)
    return found
