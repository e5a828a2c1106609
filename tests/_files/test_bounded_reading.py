"""The one bounded reader: regular files only, refused at once otherwise, never past its bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from phasegate._files import (
    FileTooLargeError,
    NotRegularFileError,
    ParseProblem,
    read_bounded,
    read_mapping,
    read_text,
)
from phasegate.errors import TaskFileError
from tests.helpers.alarm import within


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"hello")
    assert read_bounded(tmp_path / "a.txt") == b"hello"


def test_a_fifo_is_refused_at_once_naming_the_file_and_what_it_is(tmp_path: Path) -> None:
    """No writer ever comes: the read must not wait for one."""
    fifo = tmp_path / "task.yaml"
    os.mkfifo(fifo)
    with within(5), pytest.raises(NotRegularFileError) as raised:
        read_bounded(fifo)
    assert raised.value.filename == str(fifo)
    assert raised.value.strerror == "is a FIFO (named pipe), not a regular file"


def test_a_directory_is_refused_as_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="is a directory, not a regular file"):
        read_bounded(tmp_path)


def test_a_device_that_never_ends_is_refused_before_a_byte_is_read() -> None:
    """`/dev/zero` would fill the memory if it were read up to a bound of gigabytes."""
    with pytest.raises(NotRegularFileError, match="is a character device, not a regular file"):
        read_bounded("/dev/zero", 1024**4)


def test_a_file_larger_than_the_bound_is_refused_naming_the_bound(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 2049)
    with pytest.raises(FileTooLargeError, match="is larger than 2 KiB") as raised:
        read_bounded(tmp_path / "big", 2048)
    assert raised.value.limit == 2048
    assert read_bounded(tmp_path / "big", 2049) == b"x" * 2049


def test_a_symbolic_link_is_refused_when_links_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert read_bounded(tmp_path / "link.json") == b"{}"
    with pytest.raises(NotRegularFileError, match="is a symbolic link"):
        read_bounded(tmp_path / "link.json", follow_links=False)


def test_a_fifo_behind_a_symbolic_link_is_refused_too(tmp_path: Path) -> None:
    """What is checked is the open descriptor: the file the link leads to."""
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "prompt.md").symlink_to(tmp_path / "pipe")
    with within(5), pytest.raises(NotRegularFileError, match="FIFO"):
        read_text(tmp_path / "prompt.md")


def test_read_text_refuses_a_too_large_file_as_a_parse_problem(tmp_path: Path) -> None:
    """Callers that name the file catch ParseProblem for contents, OSError for the file."""
    (tmp_path / "big.yaml").write_bytes(b"#" * (2 * 1024 * 1024 + 1))
    with pytest.raises(ParseProblem, match="larger than 2 MiB"):
        read_text(tmp_path / "big.yaml")


def test_a_definition_file_that_is_a_fifo_is_a_file_error_naming_it(tmp_path: Path) -> None:
    """The error a command prints: the file, what it is, what was expected."""
    fifo = tmp_path / "task.yaml"
    os.mkfifo(fifo)
    with within(5), pytest.raises(TaskFileError) as raised:
        read_mapping(fifo, TaskFileError)
    assert str(raised.value) == (
        f"{fifo}: is a FIFO (named pipe), not a regular file; expected a YAML or JSON file"
    )
