"""In-memory evidence for judging exit checks without a disk (the validators' tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from phasegate.validators.stage_checks import CommandOutcome


@dataclass
class FakeEvidence:
    """Evidence from memory: files by path, scripted command outcomes, changes, tool counts."""

    files: dict[str, str] = field(default_factory=dict)
    directories: set[str] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    commands: dict[tuple[str, ...], CommandOutcome] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    ran: list[tuple[tuple[str, ...], float]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def read_text(self, path: str) -> str:
        """The file's text, or the error the disk would raise."""
        if path in self.outside:
            raise ValueError(f"{path} resolves to /elsewhere, outside the work directory")
        if path in self.directories:
            raise IsADirectoryError(21, "Is a directory", path)
        if path not in self.files:
            raise FileNotFoundError(2, "No such file or directory", path)
        return self.files[path]

    def run_command(self, argv: Sequence[str], timeout: float) -> CommandOutcome:
        """The scripted outcome for ``argv``; an unscripted command was not found."""
        self.ran.append((tuple(argv), timeout))
        return self.commands.get(
            tuple(argv), CommandOutcome(exit_code=None, output="", error="program not found")
        )

    def changed_paths(self) -> Sequence[str]:
        """The scripted changes."""
        return self.changed

    def tool_successes(self) -> Mapping[str, int]:
        """The scripted tool counts."""
        return self.tools

    def files_under(self, path: str) -> Sequence[str]:
        """The files below directory ``path``, or the error the disk would raise."""
        if path in self.outside:
            raise ValueError(f"{path} resolves to /elsewhere, outside the work directory")
        if path in self.files:
            raise NotADirectoryError(20, "Not a directory", path)
        if path not in self.directories:
            raise FileNotFoundError(2, "No such file or directory", path)
        return [name for name in self.files if name.startswith(path + "/")]

    def assistant_texts(self) -> Sequence[str]:
        """The scripted assistant text blocks."""
        return self.texts
