"""Run the two-phase example offline: Claude Code (the real CLI, a scripted model) follows the
skill in .claude/skills/ through its Bash tool: phasegate plan, AskUserQuestion, phasegate
plan with the answers, phasegate execute.

    python examples/two-phase/run_offline.py [--workdir DIR]

It works in a copy of this folder (DIR, or a temporary one), with the project's own Claude
Code settings loaded (.claude/settings.json allows the two phasegate commands; the skill is
found there too) and the interpreter's scripts folder first on PATH, so `phasegate` is the
one installed with it. It prints each command the model ran with what it printed, and ends
with the session's verdict; the exit code is the session's (0 accepted).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from phasegate import Runner, load_task
from phasegate.testing import ScriptedModelServer

HERE = Path(__file__).resolve().parent


def trust(config_dir: Path, project: Path) -> None:
    """Mark ``project`` trusted in this (throwaway) Claude Code configuration, as a person
    does once in the trust dialog: only then does the CLI apply the project's permissions."""
    config_dir.mkdir(parents=True, exist_ok=True)
    trusted = {"projects": {str(project.resolve()): {"hasTrustDialogAccepted": True}}}
    (config_dir / ".claude.json").write_text(json.dumps(trusted), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where to copy the example (kept)")
    arguments = parser.parse_args()
    workdir = arguments.workdir or Path(tempfile.mkdtemp(prefix="phasegate-two-phase-"))
    shutil.copytree(HERE, workdir, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("run_offline.py", "__pycache__"))  # fmt: skip
    scripts = str(Path(sys.executable).parent)
    os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    with ScriptedModelServer(workdir / "outer-model.yaml") as server:
        trust(Path(server.env()["CLAUDE_CONFIG_DIR"]), workdir)
        # Not isolated: the project's settings (its permissions, its skill) are the point.
        agent = server.claude_agent(isolated=False)
        report = Runner(agent).run_sync(load_task(workdir / "orchestrate.yaml"), workdir)
    calls = {}
    for entry in report.transcript.entries if report.transcript else ():
        if entry.kind == "tool_call":
            calls[entry.id] = entry
        elif entry.kind == "tool_result" and entry.tool_use_id in calls:
            call = calls[entry.tool_use_id]
            shown = call.input.get("command") or call.input.get("file_path") or "(questions)"
            print(f"$ {call.name}: {shown}\n{entry.content.strip()}\n")
    print(f"session: {report.verdict}; the work is in {workdir / 'project'}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
