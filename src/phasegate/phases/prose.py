"""Which lines of a Markdown text are prose, and which are code or hidden.

A reader of the rendered text sees some lines as things said and others as quoted code or
not at all. This module reads just enough of CommonMark's structure to tell them apart:

* **Fenced code.** A fence is a run of at least three backticks or three tildes, indented by
  at most three spaces; a backtick fence's info string holds no backtick. It closes only on a
  fence of the same character, at least as long, with nothing but spaces after it. A fence
  never closed runs to the end of the text. A fence opened inside a list item or block quote
  also ends where that container ends.
* **Indented code.** A line indented by four columns or more (a tab counts to the next
  multiple of four) after a blank line, a block or the start of the text. Inside a paragraph
  such a line continues the paragraph instead; it is still not a line start a reader sees.
* **HTML comments.** A line starting (after at most three spaces) with ``<!--`` opens a block
  that runs to the first line holding ``-->``. Inside a paragraph, ``<!-- … -->`` hides its
  text even across lines.
* **Code spans.** Inside a paragraph, a run of backticks up to the next run of the same
  length is code, even across lines.

Lines are split where CommonMark splits them: at ``\\n``, ``\\r\\n`` and ``\\r`` only.
Containers are read only as far as fences and comments inside them need: their own prose is
not unwrapped (a line starting with ``>`` or ``-`` does not start with its content).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_QUOTE = re.compile(r" {0,3}> ?")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|[0-9]{1,9}[.)]) {1,4}(?=\S)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_COMMENT = re.compile(r" {0,3}<!--")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_INLINE = re.compile(r"[\\`<]")
_BACKTICKS = re.compile(r"`+")
_TEXT = re.compile(r"[^ ]")

Containers = tuple[int | None, ...]
"""Block quotes (``None``) and list items (their content's column), outermost first."""


@dataclass(frozen=True, slots=True)
class _RawBlock:
    """An open fenced code block (``fence`` is its opening run) or HTML comment (``""``)."""

    containers: Containers
    fence: str

    def closed_by(self, line: str) -> bool:
        if not self.fence:
            return "-->" in line
        close = _FENCE.fullmatch(line)
        return (
            close is not None
            and close.group(1)[0] == self.fence[0]
            and len(close.group(1)) >= len(self.fence)
            and not close.group(2).strip(" \t")
        )


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line of ``text`` a reader sees as prose, with its 0-based number, in order."""
    raw: _RawBlock | None = None
    paragraph: list[tuple[int, str]] = []
    for number, line in enumerate(_LINE_BREAK.split(text)):
        columns = line.expandtabs(4)
        if raw is not None:
            rest = _inside(raw.containers, columns)
            if rest is not None:
                raw = None if raw.closed_by(rest) else raw
                continue
            raw = None  # its container ended, and the block with it
        if not columns.strip(" "):
            yield from _outside_spans(paragraph)
            paragraph = []
        elif _indent(columns) >= 4 and not paragraph:
            continue  # indented code
        elif (opened := _open_raw_block(columns)) is not None:
            yield from _outside_spans(paragraph)
            paragraph = []
            raw = None if opened.closed_by(_after_opener(columns, opened)) else opened
        elif _HEADING.match(columns):
            yield from _outside_spans(paragraph)
            paragraph = []
            yield number, line
        else:
            if _LIST_ITEM.match(columns):
                yield from _outside_spans(paragraph)
                paragraph = []
            paragraph.append((number, line))
    yield from _outside_spans(paragraph)


def prose_blocks(text: str) -> list[str]:
    """The prose of ``text`` as a reader sees it: each run of consecutive prose lines
    (:func:`prose_lines`) joined by ``\\n``, with its code spans and HTML comments cut out
    (a space stands in their place). Never raises; linear in the text."""
    runs: list[list[str]] = []
    last = -2
    for number, line in prose_lines(text):
        if number != last + 1:
            runs.append([])
        runs[-1].append(line)
        last = number
    return [_without_spans("\n".join(run)) for run in runs]


def _without_spans(text: str) -> str:
    """``text`` with each code span and HTML comment replaced by a space."""
    kept: list[str] = []
    at = 0
    for start, end in _inline_spans(text):
        kept.extend((text[at:start], " "))
        at = end
    kept.append(text[at:])
    return "".join(kept)


def _indent(line: str, at: int = 0) -> int:
    """How many spaces stand in ``line`` from ``at``."""
    text = _TEXT.search(line, at)
    return (len(line) if text is None else text.start()) - at


def _inside(containers: Containers, line: str) -> str | None:
    """What is left of ``line`` inside ``containers``, or None when one of them has ended."""
    at, spaces_end = 0, -1
    for container in containers:
        if container is None:
            quote = _QUOTE.match(line, at)
            if quote is None:
                return None
            at = quote.end()
            continue
        if spaces_end < at:  # measured once per run of spaces, however many items share it
            spaces_end = at + _indent(line, at)
        if spaces_end == len(line):
            return ""  # a blank line stays in a list item
        if spaces_end - at < container:
            return None
        at += container
    return line[at:]


def _open_raw_block(line: str) -> _RawBlock | None:
    """The fence or HTML comment ``line`` opens, inside any containers it opens first."""
    containers: list[int | None] = []
    at = 0
    while True:
        if quote := _QUOTE.match(line, at):
            containers.append(None)
            at = quote.end()
        elif item := _LIST_ITEM.match(line, at):
            containers.append(item.end() - at)
            at = item.end()
        else:
            break
    fence = _FENCE.fullmatch(line, at)
    if fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
        return _RawBlock(tuple(containers), fence.group(1))
    if _COMMENT.match(line, at):
        return _RawBlock(tuple(containers), "")
    return None


def _after_opener(line: str, block: _RawBlock) -> str:
    """What may close ``block`` on its own opening line: a comment's text after ``<!``."""
    return "" if block.fence else line[line.index("<!--") + 2 :]


def _outside_spans(paragraph: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines of a paragraph whose start is not inside a code span or an HTML comment
    opened on an earlier line."""
    if len(paragraph) < 2:
        yield from paragraph
        return
    joined = "\n".join(line for _, line in paragraph)
    spans = iter(_inline_spans(joined))
    span = next(spans, None)
    start = 0
    for number, line in paragraph:
        while span is not None and span[1] <= start:
            span = next(spans, None)
        if span is None or not span[0] < start:
            yield number, line
        start += len(line) + 1


def _inline_spans(text: str) -> Iterator[tuple[int, int]]:
    """Start and end of each code span and HTML comment in ``text``, in order.

    Linear in the text: closing backtick runs are looked up by length, and once no ``-->``
    is left, no later ``<!--`` is searched for one.
    """
    runs: dict[int, list[int]] = {}
    for run in _BACKTICKS.finditer(text):
        runs.setdefault(len(run.group()), []).append(run.start())
    comments_close = True
    at = 0
    while (found := _INLINE.search(text, at)) is not None:
        at = found.start()
        if text[at] == "\\":
            at += 2  # an escaped character opens nothing
        elif text[at] == "`":
            length = _run_length(text, at)
            starts = runs.get(length, [])
            closing = bisect_right(starts, at)
            if closing < len(starts):
                end = starts[closing] + length
                yield at, end
                at = end
            else:
                at += length
        elif comments_close and text.startswith("<!--", at):
            end = text.find("-->", at + 2)
            if end < 0:
                comments_close = False
                at += 1
            else:
                yield at, end + 3
                at = end + 3
        else:
            at += 1


def _run_length(text: str, at: int) -> int:
    """How many backticks stand in a row from ``at``."""
    end = at
    while end < len(text) and text[end] == "`":
        end += 1
    return end - at
