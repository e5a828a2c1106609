"""Stage evidence and the tail of a command's output (phasegate.validators.stage_evidence)."""

from __future__ import annotations

import pytest

from phasegate.validators.stage_evidence import output_tail


@pytest.mark.parametrize(
    ("text", "max_lines", "max_chars", "kept"),
    [
        ("a\nb\nc\n", 3, 100, "a\nb\nc"),
        ("a\nb\nc\nd\ne\n", 2, 100, "…d\ne"),
        ("x" * 10, 3, 4, "…xxxx"),
        ("", 3, 4, ""),
    ],
)
def test_output_tail_keeps_the_last_lines_and_characters(
    text: str, max_lines: int, max_chars: int, kept: str
) -> None:
    """Cutting is marked with a leading ellipsis; trailing blank lines are dropped."""
    assert output_tail(text, max_lines=max_lines, max_chars=max_chars) == kept
