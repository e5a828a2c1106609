"""A job summary as GitHub renders it (CommonMark with tables), for the tests that hold report
text to inert code: the tags it makes, and the text outside every ``<code>`` element."""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "h3", "p", "strong", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"
}  # fmt: skip
"""The elements a summary's own Markdown makes."""


class OutsideCode(HTMLParser):
    """Collects tags, and text that is not inside a ``<code>`` element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.outside: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._depth += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        self._depth -= tag == "code"

    def handle_data(self, data: str) -> None:
        if not self._depth:
            self.outside.append(data)


def rendered(markdown: str) -> OutsideCode:
    """``markdown`` rendered as GitHub does, parsed."""
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parser = OutsideCode()
    parser.feed(html)
    return parser
