"""docs/batch.md lists exactly the batch file's fields and batch run's options, and links what
exists; so does the example batch's README."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from phasegate._cli.batch import app
from phasegate.batches.model import BatchFile, BatchItem

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "batch.md"
EXAMPLE_README = ROOT / "examples" / "batch" / "README.md"


def _section(heading: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ")[0]


def _first_column(section: str) -> list[str]:
    """The first column's names of the tables in ``section`` (``--out DIR``, ``-o`` -> --out)."""
    return re.findall(r"^\| `([-a-z_]+)", section, flags=re.MULTILINE)


def test_the_field_table_lists_every_field_of_the_batch_file() -> None:
    """Each field of the file and of an item is a row (``name`` is both), and nothing else is."""
    fields = _first_column(_section("The batch file"))
    assert sorted(fields) == sorted([*BatchFile.model_fields, *BatchItem.model_fields])


def test_the_options_table_lists_every_option_of_batch_run() -> None:
    """Same options as ``phasegate batch run --help`` shows, none missing or extra."""
    # typer types the group as a Command; it is a group, with its commands by name.
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    options = {
        name
        for param in command.params
        if param.param_type_name == "option"
        for name in param.opts
        if name.startswith("--")
    } - {"--help"}
    documented = _first_column(_section("Running a batch"))
    assert len(documented) == len(set(documented))
    assert set(documented) == options


def test_every_file_the_batch_docs_link_exists() -> None:
    """Relative links of docs/batch.md and examples/batch/README.md point at files or folders."""
    for doc in (DOC, EXAMPLE_README):
        links = re.findall(r"\]\(((?:\.\./|examples/)[^)#]+)\)", doc.read_text(encoding="utf-8"))
        assert links, doc
        assert [link for link in links if not (doc.parent / link).exists()] == [], doc
