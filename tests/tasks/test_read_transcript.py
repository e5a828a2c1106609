"""Reading a transcript file for judging (phasegate.tasks.saved.read_transcript)."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate import read_transcript
from phasegate.errors import UsageError
from phasegate.tasks.saved import MAX_TRANSCRIPT_BYTES
from tests.helpers.fuzz import bounded_memory
from tests.helpers.wild import WILD

INIT = {"type": "system", "subtype": "init", "cwd": "/p", "session_id": "s"}


def test_a_transcript_file_gives_its_entries_and_how_they_were_read(tmp_path: Path) -> None:
    """The stats tell the caller (judge, the GitHub Action) what was understood and skipped."""
    transcript, stats = read_transcript(WILD / "execution_file.json")

    assert transcript.cwd == "/work/project"
    assert stats.shape == "json-array"
    assert stats.understood > 0
    assert stats.skipped == 0


def test_a_file_larger_than_the_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    """Read whole, so bounded: past max_bytes it is a usage error, not a memory blow-up."""
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps(INIT) + "\n" + " " * 2000)

    with pytest.raises(UsageError) as raised:
        read_transcript(big, max_bytes=1000)

    assert raised.value.option == "max_bytes"
    assert f"transcript {big} is larger than 1000 bytes" in str(raised.value)
    assert MAX_TRANSCRIPT_BYTES == 128 * 1024 * 1024


def test_a_session_log_and_its_subagent_files_share_the_limit_in_bytes(tmp_path: Path) -> None:
    """The subagent files count against what the log left of max_bytes, counted in bytes (not
    characters), and the refusal names the session log, not a subagent file and its share."""
    log = tmp_path / "s.jsonl"
    line = json.dumps({**INIT, "note": "é" * 300}, ensure_ascii=False) + "\n"
    log.write_text(line, encoding="utf-8")
    (tmp_path / "s" / "subagents").mkdir(parents=True)
    sub = tmp_path / "s" / "subagents" / "agent-a1.jsonl"
    sub.write_text(line, encoding="utf-8")
    size = len(line.encode())  # 300 more than its characters

    read_transcript(log, max_bytes=2 * size)
    with pytest.raises(UsageError) as raised:
        read_transcript(log, max_bytes=2 * size - 1)

    assert str(raised.value).startswith(
        f"transcript {log} with its subagent files is larger than {2 * size - 1} bytes"
    )
    assert len(line) + size <= 2 * size - 1  # counted in characters, it would have passed


def test_a_file_at_the_limit_is_read(tmp_path: Path) -> None:
    """The limit is inclusive."""
    text = json.dumps(INIT) + "\n"
    exact = tmp_path / "exact.jsonl"
    exact.write_text(text)

    transcript, _ = read_transcript(exact, max_bytes=len(text.encode()))

    assert transcript.cwd == "/p"


def test_a_file_with_nothing_understood_says_what_it_found_and_what_was_expected(
    tmp_path: Path,
) -> None:
    """The count of each kind of line, the first foreign one, and the three shapes read."""
    foreign = tmp_path / "events.jsonl"
    foreign.write_text('{"event": "run.started"}\nnot json\n{"type": "rate_limit_event"}\n')

    with pytest.raises(UsageError) as raised:
        read_transcript(foreign)

    message = str(raised.value)
    assert message.startswith(f"{foreign} holds no Claude Code messages (")
    assert (
        "1 line(s) that are not JSON, 1 other JSON value(s), 1 line(s) with nothing to judge"
        in message
    )
    assert 'e.g. line 1: {"event": "run.started"}' in message
    assert "a JSON array of those messages (claude-code-action's execution file" in message
    assert "session log (~/.claude/projects/<project>/<session>.jsonl)" in message


def test_an_empty_file_is_refused_as_empty(tmp_path: Path) -> None:
    """Nothing at all is said plainly."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")

    with pytest.raises(UsageError, match=r"holds no Claude Code messages \(it is empty\)"):
        read_transcript(empty)


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    """Named, with the system's reason."""
    with pytest.raises(UsageError, match=r"cannot read transcript .*absent\.jsonl"):
        read_transcript(tmp_path / "absent.jsonl")


@pytest.mark.fuzz
@given(st.binary(max_size=2000))
def test_any_bytes_in_a_file_give_a_transcript_or_a_usage_error(data: bytes) -> None:
    """Undecodable bytes, partial UTF-8, anything: only phasegate's usage error escapes."""
    with tempfile.TemporaryDirectory() as directory:
        file = Path(directory) / "t.jsonl"
        file.write_bytes(data)
        with bounded_memory(), contextlib.suppress(UsageError):
            read_transcript(file)
