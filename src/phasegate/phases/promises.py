"""Completion promises: ``<promise>TEXT</promise>`` said by the agent in its own words.

A Ralph loop (and a pagent stage's ``promise_in_output``) ends when the agent *says* a
promise. Said means, under the marker grammar's rules (:mod:`phasegate.phases.markers`):

* Only assistant text counts. A promise inside a tool input, a tool result (a file the agent
  wrote, then read back) or a user message is data, never said: that is decided by the
  caller, which only passes the agent's own text blocks here.
* Only prose counts: a promise inside fenced or indented code, a code span or an HTML
  comment is quoted or hidden, not said (:func:`phasegate.phases.prose.prose_blocks`).
* The text between the tags is compared after whitespace normalisation (leading and
  trailing whitespace dropped, every other run of whitespace one space), as Ralph's Stop
  hook compares it; the tags themselves are lower case, as Ralph writes them.
* A promise may run over lines of one paragraph; an opening tag never closed promises
  nothing.
"""

from __future__ import annotations

from phasegate.phases.prose import prose_blocks

OPEN_TAG = "<promise>"
CLOSE_TAG = "</promise>"


def normalize_promise(text: str) -> str:
    """``text`` with its whitespace normalised: stripped, inner runs made one space."""
    return " ".join(text.split())


def promise_tag(text: str) -> str:
    """``<promise>TEXT</promise>``: what the agent must say to keep the promise ``text``."""
    return f"{OPEN_TAG}{text}{CLOSE_TAG}"


def said_promises(text: str) -> list[str]:
    """The promises one block of assistant text says, normalised, in order (prose only)."""
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
