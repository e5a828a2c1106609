"""What a command imports: run it in a fresh interpreter under ``-X importtime``.

Entry points a user waits on (``phasegate --help``, the plugin's hooks, which start on
every tool call) must not pay for modules they have no use for. ``imports_of`` runs one in
a subprocess and returns every module it imported; ``HEAVY_MODULES`` is the documented list
such an entry point keeps away from, each with the reason. No timing here: how long start-up
takes is measured in bench/startup.py, against a baseline timed in the same run.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

HEAVY_MODULES: Mapping[str, str] = {
    "claude_agent_sdk": "the agent SDK: most of a second with what it imports",
    "mcp": "the MCP SDK, which claude_agent_sdk and the completion tools import",
    "phasegate.agents.claude": "the Claude Code adapter, which imports claude_agent_sdk",
    "phasegate.tasks.report": "a run's report: pydantic models of phases, tools, issues",
    "phasegate.pipelines.report": "a pipeline's report: pydantic models of stages",
    "phasegate.validators": "the gate's validators, with the task and transcript models",
    "fastapi": "the HTTP service's framework (phasegate serve)",
    "starlette": "under fastapi",
    "uvicorn": "the HTTP service's server",
    "httpx": "the HTTP client",
    "ray": "the distributed batch runner",
    "opentelemetry": "--otel's exporter",
}
"""Modules (each with every module inside it) an entry point that does not run, judge or
report a run has no use for, and why each is heavy."""

_PREFIX = "import time:"


@dataclass(frozen=True, slots=True)
class Imports:
    """How a command ran under ``-X importtime``: every module it imported, and what it
    printed (stderr without the import lines)."""

    modules: frozenset[str]
    returncode: int
    stdout: str
    stderr: str

    def under(self, packages: Iterable[str]) -> list[str]:
        """The imported modules that are one of ``packages`` or inside one, sorted."""
        wanted = tuple(packages)
        return sorted(
            module
            for module in self.modules
            if any(module == name or module.startswith(f"{name}.") for name in wanted)
        )


def imports_of(
    *args: str | Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Imports:
    """Run ``python -X importtime ARGS`` (``stdin`` fed to it, ``env`` its whole environment
    when given) and return the modules it imported.

    A module the interpreter imported before running ``ARGS`` (``sys``, ``os``...) is not
    listed: none of the heavy ones is among them.
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    modules: set[str] = set()
    other: list[str] = []
    for line in done.stderr.splitlines():
        if not line.startswith(_PREFIX):
            other.append(line)
            continue
        # "import time: <self us> | <cumulative us> | <indent><module>"; the first is a header.
        *_, name = line.split("|")
        if name.strip() != "imported package":
            modules.add(name.strip())
    return Imports(frozenset(modules), done.returncode, done.stdout, "\n".join(other))
