"""Record what the Claude Code CLI sends the model, for the test kit's wire-format fixtures.

Runs one small gated task through the real CLI bundled with the installed claude-agent-sdk,
against the scripted model server: the model works, stops without its marker, receives the
gate's feedback through the Stop hook, then completes. Every main-conversation request body
is written to ``tests/fixtures/cli_requests/<claude code version>.json`` with the work
directory replaced by ``/work`` and the tool definitions reduced to their names (they are
~100k characters and the test kit reads only whether ``tools`` is there).

Record a new release: install it in a virtual environment (``make compat`` leaves one per
version under ``.venv-compat/``) and run ``VENV/bin/python tools/record_cli_requests.py``;
``tests/testing/test_cli_wire_formats.py`` reads every recording in that folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from phasegate import Phase, Runner, Task
from phasegate.agents.claude.versions import bundled_cli_version
from phasegate.testing import ScriptedModelServer
from phasegate.agents.scripted.script import Script

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cli_requests"

SCRIPT = Script.model_validate(
    {
        "replies": [
            {"text": "Reading notes.txt.", "tools": [{"Read": {"file_path": "notes.txt"}}]},
            {
                "when": "tool_result",
                "tools": [
                    {
                        "Edit": {
                            "file_path": "notes.txt",
                            "old_string": "draft",
                            "new_string": "final",
                        }
                    }
                ],
            },
            {"when": "tool_result", "text": "The note is final."},
            {
                "when": "user",
                "contains": "marker_missing",
                "text": "PHASE 1 COMPLETE: done",
            },
        ]
    }
)

TASK = Task(
    name="record",
    phases=[
        Phase(
            name="edit",
            instructions="Change the word draft to final in notes.txt.",
            require_changes=True,
        )
    ],
)


def _scrub(value: Any, workdir: str) -> Any:
    if isinstance(value, str):
        return value.replace(workdir, "/work")
    if isinstance(value, list):
        return [_scrub(item, workdir) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item, workdir) for key, item in value.items()}
    return value


def main() -> int:
    version = bundled_cli_version()
    if version is None:
        print("no bundled Claude Code CLI: install claude-agent-sdk", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(SCRIPT) as server:
        work = Path(tmp).resolve()
        (work / "notes.txt").write_text("a draft note\n")
        report = asyncio.run(Runner(server.claude_agent()).run(TASK, work))
        bodies = []
        for record in server.main_requests():
            body = dict(record.body or {})
            body["tools"] = sorted(
                str(tool.get("name")) for tool in body.get("tools", []) if isinstance(tool, dict)
            )
            bodies.append(_scrub(body, str(work)))
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"{version}.json"
    recording = {"claude_code": version, "verdict": report.verdict, "requests": bodies}
    target.write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n")
    print(f"{target}: {len(bodies)} requests, verdict {report.verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
