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
* A promise to wait for holds no invisible character (:func:`invisible_characters`: a zero
  width space, a joiner, a byte order mark, any other format or control character): a
  loop waiting for ``DONE\u200b`` never ends, while every promise the agent says looks the
  same as the one asked for. Feedback shows such characters escaped (:func:`visible`).
"""

from __future__ import annotations

import re
import unicodedata

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


_INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u3164\uffa0")
"""Characters outside the format and control categories that show nothing: the combining
grapheme joiner and the Hangul fillers."""


def invisible_characters(text: str) -> list[str]:
    """The characters of ``text`` that show nothing (once each, in order): format characters
    (category Cf: U+200B to U+200F, U+2060, U+FEFF, ...), control characters other than
    white space, and the few letters that are blank."""
    found: dict[str, None] = {}
    for char in text:
        if char in _INVISIBLE_LETTERS or (
            unicodedata.category(char) in ("Cf", "Cc") and not char.isspace()
        ):
            found[char] = None
    return list(found)


def code_point(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``: a character named so a reader can find it."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def visible(text: str) -> str:
    """``text`` with each invisible character (:func:`invisible_characters`) written as its
    escape, ``\\u200b``: two promises that look the same no longer do."""
    hidden = set(invisible_characters(text))
    if not hidden:
        return text
    return "".join(
        (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if c in hidden else c
        for c in text
    )


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
