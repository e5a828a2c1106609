"""The job summary: the facts a reader needs, and nothing from the report as live Markdown.

The summary is rendered by a CommonMark parser with GitHub's tables; every string from the
report carries ``PAYLOAD``, and no ``PAYLOAD`` may appear outside a ``<code>`` element:
there it could be a link, an image, raw HTML, a heading or a mention.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from phasegate._github.summary import job_summary
from phasegate._github.view import Problem, ReportView, Row
from phasegate.evidence.transcript import Usage
from phasegate.validators.reconcile import FileReconciliation
from tests.helpers.fuzz import bounded_memory, hostile_text

ATTACKS = [
    "<script>alert(1)</script>",
    "![x](https://evil.example/PAYLOAD.png)",
    "[click](https://evil.example)",
    "https://evil.example/PAYLOAD",
    "@attacker",
    "# heading",
    "`code` `` ``` ````",
    "a | b \\| c \\",
    "line\n# heading\n<img src=x>",
    "<details><summary>x</summary>",
    "**bold** _it_ ~~s~~",
]
ALLOWED_TAGS = {
    "h3", "p", "strong", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"
}  # fmt: skip


class _OutsideCode(HTMLParser):
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


def hostile_view(text: str) -> ReportView:
    """A report whose every string is ``text``."""
    row = Row(1, text, "rejected", 2, "", (text, "ok.py"))
    problem = Problem("no_changes", text, text, requirement=text, path=text)
    files = FileReconciliation(
        tool_reported=[text], disk_changed=[text], claimed=[text], changed_not_claimed=[text]
    )
    return ReportView(
        kind="task",
        name=text,
        verdict="rejected",
        exit_code=1,
        rows=(row,),
        problems=(problem, Problem("changed_not_claimed", text, text, finding=True)),
        reconciliation=files,
        usage=Usage(cost_usd=0.5),
        final_message=text,
        mode="gate",
        error=text,
    )


def rendered(markdown: str) -> _OutsideCode:
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parser = _OutsideCode()
    parser.feed(html)
    return parser


@pytest.mark.parametrize("attack", ATTACKS)
def test_report_text_is_shown_only_as_code(attack: str) -> None:
    summary = job_summary(hostile_view(f"{attack} PAYLOAD"), omitted_annotations={})

    page = rendered(summary)

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


@pytest.mark.fuzz
@given(text=st.one_of(hostile_text, st.lists(st.sampled_from(ATTACKS)).map("".join)))
def test_no_text_escapes_its_code_span(text: str) -> None:
    with bounded_memory():
        summary = job_summary(hostile_view(f"{text}PAYLOAD"), omitted_annotations={})
        page = rendered(summary)

    assert page.tags <= ALLOWED_TAGS
    assert "PAYLOAD" not in "".join(page.outside)


def test_the_summary_states_verdict_phases_issues_files_cost_and_tokens() -> None:
    view = hostile_view("fix")

    summary = job_summary(view, omitted_annotations={"error": 3, "warning": 0})

    assert summary.startswith("### ❌ phasegate: rejected · task ` fix `")
    assert "0 of 1 phase accepted" in summary
    assert "cost $0.5000" in summary
    assert "| 1 | ` fix ` | ❌ rejected | 2 |" in summary
    assert "- `no_changes` in ` fix `: ` fix ` Requirement: ` fix `" in summary
    assert "**Files** (they disagree)" in summary
    assert "| changed on disk, not claimed | ` fix ` |" in summary
    assert "3 errors not shown as annotations" in summary
