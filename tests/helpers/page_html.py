"""A run's page read back in tests: its elements and text, and one part's section."""

from __future__ import annotations

from html.parser import HTMLParser


class Elements(HTMLParser):
    """Every element of a page, and its text with the markup gone."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def section(page: str, part: int) -> str:
    """The HTML of the page's ``part``-th part."""
    start = page.index(f'<section class="part" id="part-{part}"')
    return page[start : page.index("</section>", start)]
