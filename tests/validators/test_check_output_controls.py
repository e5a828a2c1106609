"""What a check's command printed reaches the model, the terminal's text report, the job
summary and the recording page: its control characters (an escape sequence that retitles the
terminal or clears it, a carriage return that overwrites a line, a NUL) are shown as visible
escapes, never passed through; tabs and line ends stay."""

from __future__ import annotations

from pathlib import Path

from phasegate.validators.stage_checks import output_tail
from phasegate.workspace.commands import run_bounded


def test_control_characters_in_a_commands_output_are_shown_as_visible_escapes() -> None:
    kept = output_tail("\x1b]0;pwned\x07tests\tfailed\r\nnext\rover\x00\x9b2J\x7f\n")

    assert kept == "\\x1b]0;pwned\\x07tests\tfailed\nnext\\rover\\x00\\x9b2J\\x7f"
    assert not any(ord(c) < 32 and c not in "\t\n" for c in kept)


def test_a_command_printing_an_escape_sequence_leaves_none_in_its_outcome(
    tmp_path: Path,
) -> None:
    outcome = run_bounded(
        ["sh", "-c", "printf '\\033[2J\\033]0;pwned\\007FAILED\\n'; exit 1"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=10,
    )

    assert outcome.exit_code == 1
    assert "\x1b" not in outcome.output and "\x07" not in outcome.output
    assert outcome.output == "\\x1b[2J\\x1b]0;pwned\\x07FAILED"
