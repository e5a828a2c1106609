"""The JSON Schemas docs/events.md documents, one per event, for the tests that hold what the
runners write to them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).parents[2] / "docs" / "events.md"


def documented_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of each event, read from the ```json blocks of docs/events.md."""
    blocks = re.findall(r"```json\n(.*?)\n```", DOCS.read_text(), re.S)
    schemas = [json.loads(block) for block in blocks]
    return {schema["title"]: schema for schema in schemas}
