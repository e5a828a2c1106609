"""The pagent table of docs/pagent-ralph.md says how ``min_lines`` counts, and it counts so."""

from __future__ import annotations

from pathlib import Path

from phasegate.phases.checks import MinLines
from phasegate.validators.stage_checks import evaluate
from tests.helpers.exit_evidence import FakeEvidence

PAGE = Path(__file__).resolve().parents[2] / "docs" / "pagent-ralph.md"


def _min_lines_row() -> str:
    table = PAGE.read_text(encoding="utf-8").split("\n## pagent pipelines, as they are\n")[1]
    return next(line for line in table.splitlines() if line.startswith('| `{"file_exists"'))


def test_the_pagent_table_says_min_lines_counts_text_lines_unlike_wc() -> None:
    """The "what changes" column names the difference from pagent's `wc -l`."""
    changes = _min_lines_row().split(" | ")[2]
    assert "lines are counted as text lines" in changes
    assert "a last line without newline counts, unlike `wc -l`" in changes
    assert not changes.startswith("nothing")


def test_a_last_line_without_newline_counts_where_wc_would_not() -> None:
    """Two lines, the second unterminated: `wc -l` says 1, min_lines counts 2."""
    text = "first\nsecond"
    assert text.count("\n") == 1
    assert evaluate(MinLines(path="a.md", n=2), FakeEvidence({"a.md": text})).ok
