"""What the gate costs in input: what ``phasegate run`` sends the model against a bare ``query()``.

Users pay per input token on every request of a run, and every character of tool
definitions also takes context from the task. This runs examples/fix-vulnerability through
``python -m phasegate run TASK --json`` once per completion mode (the task's ``completion``
field: ``either``, the default, ``marker`` and ``tool``) and through bench/bare_query.py's
``query()`` loop with the same prompt (the phased prompt of that mode: it is the feature,
so both sides send it), each against a fresh scripted model server that records every
request body. Both sides replay the same script:

- ``markers``: read app.py, edit it, say the phase marker and the JSON summary;
- ``tools``: read, edit, call ``phase_complete`` and ``submit_summary`` (without searching
  for them), then stop. On the bare side those calls come back as unknown tools, which
  changes nothing the model is sent but their results' text.

For each side it prints, per request of the main conversation and per run: the number of
tools, the characters of their definitions, of the system prompt and of the messages (each
as compact JSON), the total, and per run the ratio to the bare side; then the counts the
API reported (input tokens, cache reads and writes) from phasegate's report and the bare
side's result message. The scripted server reports a constant per response, so those
count requests, not content: the characters are the measure here.
Target, printed and not enforced: with the default completion mode, at most 1.05x the
bare side's characters per run. Run with ``make bench`` or ``.venv/bin/python
bench/tokens.py`` (any environment's python: it runs that environment's CLI).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml
from bare_query import run as bare_run
from claude_agent_sdk import ResultMessage

from phasegate import Runner, load_task
from phasegate.agents.claude.cli import claude_code_version
from phasegate.agents.scripted.model_server import RecordedRequest, ScriptedModelServer
from phasegate.agents.scripted.script import Script

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "fix-vulnerability"
TARGET = 1.05
"""At most this many times the bare side's characters per run, default completion mode."""
BUGGY = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"
FIXED = "    return float(expression)  # only numbers\n"
SUMMARY: dict[str, Any] = {
    "files_changed": ["app.py"],
    "description": "Replaced eval with float parsing.",
}
READ: dict[str, Any] = {"tools": [{"Read": {"file_path": "app.py"}}]}
EDIT: dict[str, Any] = {
    "when": "tool_result",
    "tools": [{"Edit": {"file_path": "app.py", "old_string": BUGGY, "new_string": FIXED}}],
}
SCRIPTS = {
    "markers": Script.model_validate({"replies": [READ, EDIT, {
        "when": "tool_result",
        "text": f"PHASE 1 COMPLETE: Files have been edited\n\n```json\n{json.dumps(SUMMARY)}\n```",
    }]}),
    "tools": Script.model_validate({"replies": [READ, EDIT,
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "fixed"}}]},
        # No condition: on the bare side the completion tools' results are errors.
        {"tools": [{"submit_summary": {"summary": SUMMARY}}]},
        {"text": "Done: app.py no longer evaluates Python."},
    ]}),
}  # fmt: skip
"""The model's replies, by how it completes phases."""
CASES = (("either", "markers"), ("either", "tools"), ("marker", "markers"), ("tool", "tools"))
"""(completion mode, script): the default mode both ways, each other mode its own way."""


def fail(message: str) -> NoReturn:
    sys.exit(f"bench/tokens.py: {message}")


def characters(value: object) -> int:
    """Characters of ``value`` as compact JSON: what it adds to a request body."""
    if value is None:
        return 0
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True)
class Sent:
    """What one request of the main conversation sent the model."""

    tools: tuple[str, ...]
    tool_chars: int
    system_chars: int
    message_chars: int

    @classmethod
    def of(cls, request: RecordedRequest) -> Sent:
        body = request.body or {}
        tools = body.get("tools") or []
        names = tuple(str(tool.get("name", "?")) for tool in tools)
        return cls(names, characters(tools), characters(body.get("system")),
                   characters(body.get("messages")))  # fmt: skip

    @property
    def total(self) -> int:
        return self.tool_chars + self.system_chars + self.message_chars


@dataclass(frozen=True)
class Side:
    """One run of the scenario: its requests and the usage the API reported."""

    label: str
    sent: tuple[Sent, ...]
    side_requests: int
    usage: dict[str, int]

    def sum(self, field: str) -> int:
        return sum(int(getattr(each, field)) for each in self.sent)


def recorded(server: ScriptedModelServer, label: str) -> tuple[tuple[Sent, ...], int]:
    if server.unmatched:
        fail(f"{label}: the script stopped matching: {server.unmatched[0]}")
    main = server.main_requests()
    return tuple(Sent.of(r) for r in main), len(server.requests) - len(main)


def gated(mode: str, script: str, scratch: Path) -> Side:
    """``python -m phasegate run`` of the example task with ``completion: mode``."""
    task_file = scratch / f"task-{mode}.yaml"
    definition = yaml.safe_load((EXAMPLE / "task.yaml").read_text(encoding="utf-8"))
    task_file.write_text(yaml.safe_dump({**definition, "completion": mode}), encoding="utf-8")
    work = fresh_project(scratch, f"gated-{mode}-{script}")
    with ScriptedModelServer(SCRIPTS[script]) as server:
        command = [sys.executable, "-m", "phasegate", "run", str(task_file), "--workdir",
                   str(work), "--json", "-q"]  # fmt: skip
        done = subprocess.run(command, env={**os.environ, **server.env()}, cwd=work,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        label = f"phasegate run, completion {mode}, {script}"
        if done.returncode != 0:
            fail(f"{label} exited {done.returncode}: {done.stderr[-1500:]}")
        report = json.loads(done.stdout)
        if report["verdict"] != "accepted":
            fail(f"{label} ended {report['verdict']}: {report.get('error')}")
        sent, side_requests = recorded(server, label)
    return Side(label, sent, side_requests, api_usage(report["usage"]))


def bare(prompt: str, script: str, scratch: Path) -> Side:
    """bench/bare_query.py's ``query()`` loop with ``prompt``, in this process."""
    work = fresh_project(scratch, f"bare-{script}")
    messages: list[object] = []
    with ScriptedModelServer(SCRIPTS[script]) as server:
        asyncio.run(bare_run(prompt, str(work), env=server.env(), messages=messages))
        sent, side_requests = recorded(server, f"bare query(), {script}")
    results = [m for m in messages if isinstance(m, ResultMessage)]
    usage = api_usage(results[-1].usage or {}) if results else {}
    return Side("bare query()", sent, side_requests, usage)


def api_usage(usage: dict[str, Any]) -> dict[str, int]:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return {key: int(usage.get(key) or 0) for key in keys}


def fresh_project(scratch: Path, name: str) -> Path:
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch)) / "project"
    shutil.copytree(EXAMPLE / "project", work)
    return work


def show(side: Side, baseline: Side | None) -> None:
    print(f"  {side.label}:")
    for number, sent in enumerate(side.sent, start=1):
        print(f"    request {number}: {len(sent.tools):>2} tools {sent.tool_chars:>8,}  "
              f"system {sent.system_chars:>7,}  messages {sent.message_chars:>7,}  "
              f"total {sent.total:>8,}")  # fmt: skip
    total = side.sum("total")
    ratio = f"  ratio {total / baseline.sum('total'):.3f}x" if baseline else ""
    print(f"    per run ({len(side.sent)} requests, {side.side_requests} side): tools "
          f"{side.sum('tool_chars'):,}  system {side.sum('system_chars'):,}  messages "
          f"{side.sum('message_chars'):,}  total {total:,}{ratio}")  # fmt: skip
    usage = ", ".join(f"{key} {value:,}" for key, value in side.usage.items())
    print(f"    the API reported: {usage or 'nothing'}")


def main() -> None:
    print(f"bench/tokens.py: Claude Code {claude_code_version() or '?'}, "
          f"examples/fix-vulnerability, characters as compact JSON")  # fmt: skip
    ratios: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-tokens-") as folder:
        scratch = Path(folder)
        for mode, script in CASES:
            task = load_task(EXAMPLE / "task.yaml").model_copy(update={"completion": mode})
            prompt = Runner(object()).prompt_for(task)  # type: ignore[arg-type]
            baseline = bare(prompt, script, scratch)
            side = gated(mode, script, scratch)
            print(f"completion {mode}, the model completing by {script}:")
            show(side, baseline)
            show(baseline, None)
            extra = sorted(set().union(*(s.tools for s in side.sent)) -
                           set().union(*(s.tools for s in baseline.sent)))  # fmt: skip
            missing = sorted(set().union(*(s.tools for s in baseline.sent)) -
                             set().union(*(s.tools for s in side.sent)))  # fmt: skip
            print(f"  tools only phasegate sends: {', '.join(extra) or 'none'}; "
                  f"only the bare side: {', '.join(missing) or 'none'}")  # fmt: skip
            ratios[mode, script] = side.sum("total") / baseline.sum("total")
    default = max(ratios["either", "markers"], ratios["either", "tools"])
    verdict = "meets" if default <= TARGET else "misses"
    print(
        f"default completion (either): {default:.3f}x per run, {verdict} the target "
        f"{TARGET:.2f}x; " + ", ".join(f"{m}/{s} {r:.3f}x" for (m, s), r in ratios.items())
    )


if __name__ == "__main__":
    main()
