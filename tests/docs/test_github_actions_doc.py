"""docs/github-actions.md lists exactly the action's inputs and outputs, and links what exists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "github-actions.md"
ACTION = ROOT / "action.yml"


def _table(heading: str) -> list[str]:
    """The first column's names, in order, of the table under ``## heading``."""
    section = DOC.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ")[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)


def _action() -> dict[str, Any]:
    if not ACTION.is_file():
        pytest.skip("action.yml is not in this checkout")
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_inputs_table_lists_every_input_of_the_action_in_its_order() -> None:
    """Same names, same order, none missing or extra."""
    assert _table("Inputs") == list(_action()["inputs"])


def test_the_outputs_table_lists_every_output_of_the_action_in_its_order() -> None:
    """Same names, same order, none missing or extra."""
    assert _table("Outputs") == list(_action()["outputs"])


def test_the_outputs_table_lists_the_twenty_one_outputs() -> None:
    """The outputs people read: verdict first, the log and the HTML report last."""
    outputs = _table("Outputs")
    assert len(outputs) == len(set(outputs)) == 21
    assert outputs[0] == "verdict" and outputs[-2:] == ["log_file", "html_report"]


def test_every_file_the_doc_links_exists() -> None:
    """Relative links point at files (or folders) of this repository."""
    links = re.findall(r"\]\((\.\./[^)#]+)\)", DOC.read_text(encoding="utf-8"))
    assert links
    assert [link for link in links if not (DOC.parent / link).exists()] == []
