"""Untrusted text made inert in GitHub-flavoured Markdown.

Text from a report (model output, file names, tool output, messages quoting them) is only
ever shown inside code: an inline code span or a fenced block whose backtick fence is longer
than any run of backticks in the text, so nothing in it becomes HTML, a link, an image, a
mention or a heading. Inline text is folded to one line and cut. In a table cell a ``|``
would end the cell even inside code, and no escape of it is safe next to a backslash, so it
is shown as ``│``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

INLINE_LIMIT = 300
"""Characters of untrusted text shown inline; longer text is cut with "…"."""

_BACKTICKS = re.compile(r"`+")


def inline(text: str, *, limit: int = INLINE_LIMIT, in_table: bool = False) -> str:
    """``text`` as one inert inline code span (empty text gives an empty string)."""
    folded = " ".join(text.replace("\0", "\ufffd").split())
    if not folded:
        return ""
    if len(folded) > limit:
        folded = folded[: limit - 1] + "…"
    if in_table:
        folded = folded.replace("|", "│")
    fence = "`" * (_longest_backtick_run(folded) + 1)
    return f"{fence} {folded} {fence}"


def block(text: str, *, limit: int) -> str:
    """``text`` as an inert fenced code block, cut at ``limit`` characters."""
    body = text.replace("\0", "\ufffd").replace("\r\n", "\n").replace("\r", "\n")
    if len(body) > limit:
        body = body[:limit] + f"\n[… cut at {limit} characters]"
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}text\n{body}\n{fence}"


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; cells must already be inert (trusted words or :func:`inline`)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)
