"""The library speaks to Python callers: its messages never name a command-line flag or command.

Advice about flags belongs to the command line, which adds it from ``error.option``. Every
string in the library outside ``_cli/`` and ``_plugin/`` is read, docstrings excepted (they may
describe the command line). The plugin is an edge like the command line: its own commands
(``/phasegate:loop PROMPT --until CHECK --max-iterations N``) take options of their own, and
its usage text names them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from phasegate._cli.app import app

SRC = Path(__file__).resolve().parents[1] / "src" / "phasegate"


def _flags_of(command: Any) -> Iterator[str]:
    """Every long option of ``command`` and its subcommands (those built on first use too)."""
    for param in command.params:
        yield from (opt for opt in param.opts if opt.startswith("--"))
    if hasattr(command, "list_commands"):
        context = command.make_context(command.name, [], resilient_parsing=True)
        for name in command.list_commands(context):
            yield from _flags_of(command.get_command(context, name))


_FLAGS = sorted(set(_flags_of(typer.main.get_command(app))) - {"--help"})
_OUR_FLAGS = re.compile("|".join(re.escape(flag) + r"(?![\w-])" for flag in _FLAGS))
_OUR_COMMANDS = re.compile(
    r"`phasegate (?:check|run|judge|report|demo|pipeline|serve|batch)\b|phasegate pipeline"
)
_ARGUMENT = re.compile(r"--[a-z-]+")
"""A string that is one option alone is an argument to another program (git), not a message."""


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function, attribute)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def _message_strings(file: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(file.read_text(), str(file))
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _offending(root: Path) -> list[str]:
    return [
        f"{file}:{line}: {text!r}"
        for file in sorted(root.rglob("*.py"))
        if not {"_cli", "_plugin"} & set(file.relative_to(root).parts)
        for line, text in _message_strings(file)
        if not _ARGUMENT.fullmatch(text) and (_OUR_FLAGS.search(text) or _OUR_COMMANDS.search(text))
    ]


def test_no_library_message_names_a_flag_or_a_command_of_the_command_line() -> None:
    assert {"--restart", "--timeout", "--workdir", "--model-script"} <= set(_FLAGS)
    assert _offending(SRC) == []


def test_the_scan_finds_a_flag_in_a_message_but_not_in_a_docstring(tmp_path: Path) -> None:
    """The check itself: a flag in an f-string message is found; one in a docstring is not."""
    (tmp_path / "mod.py").write_text(
        '"""Run `phasegate run --timeout 5` to try."""\n'
        "def f(n: int) -> None:\n"
        '    """Docstrings may name --restart."""\n'
        '    raise ValueError(f"took {n} s; pass --timeout")\n'
    )
    (found,) = _offending(tmp_path)
    assert found == f"{tmp_path / 'mod.py'}:4: ' s; pass --timeout'"
