"""What the GitHub Actions runner makes of a step's files and output, for the tests.

Ported rule for rule from the Linux runner (actions/runner: ``FileCommandManager`` and
``ActionCommandManager``), so a test asserts what GitHub would act on, not what we meant to
write:

- a file command file (``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_STATE``) is split on
  ``\\n`` only; an empty line is skipped; ``NAME=VALUE`` when ``=`` comes before any
  ``<<``, else ``NAME<<DELIMITER`` and the value is every line up to one equal to the
  delimiter; a missing delimiter or an empty name fails the step; a later value of a name
  replaces an earlier one;
- a line of stdout is a workflow command when, after leading white space, it starts with
  ``::name`` of a known command followed by ``::`` (the v2 form), or when it holds
  ``##[name`` anywhere followed by ``]`` (the legacy form, still parsed); names are compared
  without regard to case; stdout lines end at ``\r\n``, ``\r`` or ``\n``; while commands
  are stopped, only the resume token is a command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

KNOWN_COMMANDS = frozenset(
    {
        "add-mask",
        "add-matcher",
        "add-path",
        "debug",
        "echo",
        "endgroup",
        "error",
        "group",
        "notice",
        "remove-matcher",
        "save-state",
        "set-env",
        "set-output",
        "stop-commands",
        "warning",
        "internal-set-repo-path",
    }
)
"""The commands a Linux runner registers."""


class FileCommandError(Exception):
    """The runner would fail the step reading this file command file."""


def file_command_pairs(text: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of a file command file, in order, as the runner reads them."""
    lines = text.split("\n")
    # The runner's ReadLine yields no empty last line after a final "\n".
    ended = text.endswith("\n")
    if ended:
        lines.pop()
    pairs: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, value = line.split("=", 1)
            pairs.append((name, value))
            continue
        if heredoc < 0:
            raise FileCommandError(f"Invalid format {line!r}")
        name, delimiter = line.split("<<", 1)
        if not name or not delimiter:
            raise FileCommandError(f"Invalid format {line!r}: empty name or delimiter")
        value_lines: list[str] = []
        while True:
            if index >= len(lines):
                raise FileCommandError(f"Matching delimiter not found {delimiter!r}")
            candidate = lines[index]
            index += 1
            if candidate == delimiter:
                break
            if index == len(lines) and not ended:
                raise FileCommandError("EOF marker missing new line")
            value_lines.append(candidate)
        pairs.append((name, "\n".join(value_lines)))
    return pairs


def read_outputs(path: Path) -> dict[str, str]:
    """The outputs a step's ``GITHUB_OUTPUT`` file sets (a later value replaces an earlier)."""
    if not path.exists():
        return {}
    # newline="": the runner keeps a "\r" inside a value; universal newlines would not.
    with path.open(encoding="utf-8", newline="") as file:
        return dict(file_command_pairs(file.read()))


@dataclass(frozen=True, slots=True)
class WorkflowCommand:
    """One command the runner acted on."""

    name: str
    properties: dict[str, str]
    data: str
    line: str


def _unescape(text: str, *, properties: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")]
    if properties:
        pairs += [("%3A", ":"), ("%2C", ",")]
    for escaped, plain in pairs:
        text = text.replace(escaped, plain)
    return text.replace("%25", "%")


def _parse_v2(line: str, known: frozenset[str]) -> WorkflowCommand | None:
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    name, _, props = info.partition(" ")
    if name.lower() not in known:
        return None
    properties = {}
    for item in props.strip().split(","):
        key, sep, value = item.partition("=")
        if item and sep and key and value:
            properties[key] = _unescape(value, properties=True)
    return WorkflowCommand(name, properties, _unescape(message[end + 2 :], properties=False), line)


def _parse_v1(line: str, known: frozenset[str]) -> WorkflowCommand | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    info = line[start + 3 : end]
    name, _, props = info.partition(" ")
    if name.lower() not in known:
        return None
    properties = {}
    for item in props.split(";"):
        key, sep, value = item.partition("=")
        if item and sep and key and value:
            properties[key] = value
    return WorkflowCommand(name, properties, line[end + 1 :], line)


@dataclass
class CommandProcessor:
    """The runner's reading of a step's stdout: which lines it acts on, stop tokens included."""

    acted: list[WorkflowCommand] = field(default_factory=list)
    _stop_token: str | None = None

    @property
    def stopped(self) -> bool:
        """Whether commands are stopped at this point of the output."""
        return self._stop_token is not None

    def feed(self, lines: Iterable[str]) -> None:
        """Process output lines in order (each without its line break)."""
        for line in lines:
            self._process(line)

    def _process(self, line: str) -> None:
        if self._stop_token is not None:
            known = frozenset({self._stop_token.lower()})
            if _parse_v2(line, known) or _parse_v1(line, known):
                self._stop_token = None
            return
        command = _parse_v2(line, KNOWN_COMMANDS) or _parse_v1(line, KNOWN_COMMANDS)
        if command is None:
            return
        if command.name.lower() == "stop-commands":
            if not command.data or command.data.lower() in KNOWN_COMMANDS:
                raise AssertionError(f"the runner fails the step on stop token {command.data!r}")
            self._stop_token = command.data
            return
        self.acted.append(command)


def commands_in(output: str) -> list[WorkflowCommand]:
    """Every command the runner would act on in a step's stdout (stop and resume excluded)."""
    processor = CommandProcessor()
    processor.feed(output_lines(output))
    return processor.acted


def as_shown(text: str) -> str:
    """``text`` as an annotation shows it: ``##[`` (which has no escape the runner undoes)
    as ``#\\x23[``, everything else exactly."""
    return text.replace("##[", "#\\x23[")


def command_like_lines(output: str) -> list[str]:
    """The lines of ``output`` a runner could take for a command: those holding ``##[`` (the
    legacy form, anywhere) or starting with ``::`` after white space, acted on or not."""
    return [
        line for line in output_lines(output) if "##[" in line or line.lstrip().startswith("::")
    ]


def output_lines(output: str) -> list[str]:
    """A step's stdout split as the runner reads it: at "\r\n", "\r" or "\n"."""
    return re.split(r"\r\n|\r|\n", output)
