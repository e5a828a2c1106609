"""What a scripted model server charged, and the check that a report's usage adds up."""

from __future__ import annotations

import json
from typing import Any

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.evidence.transcript import TOKEN_COUNTS, Usage

COUNTS = TOKEN_COUNTS


def sent_usage(server: ScriptedModelServer, *, main: bool = True) -> Usage:
    """The tokens of every response the server streamed (the main conversation's, or the
    side requests'), as the API's final counts: input from ``message_start``, output from
    ``message_delta``."""
    total = Usage()
    for record in server.requests:
        if record.main != main or record.status != 200:
            continue
        for line in record.response.decode().splitlines():
            if not line.startswith("data: "):
                continue
            data = json.loads(line.removeprefix("data: "))
            if data.get("type") == "message_start":
                total = total + Usage(input_tokens=data["message"]["usage"]["input_tokens"])
            elif data.get("type") == "message_delta":
                total = total + Usage(output_tokens=data["usage"]["output_tokens"])
    return total


def assert_usage_adds_up(report: dict[str, Any]) -> None:
    """A report's parts (``phases`` or ``stages``: the agent's ``usage`` and the grader's
    ``grader_usage`` of each) plus ``unattributed_usage`` equal its ``usage``, and the parts'
    ``grader_usage`` its ``grader_usage``: every token count exactly, the cost within a
    millionth of a dollar."""
    steps = report.get("phases", report.get("stages", []))
    graders = [step.get("grader_usage", dict.fromkeys(COUNTS, 0)) for step in steps]
    if "grader_usage" in report:  # a report's; a pipeline's state file keeps only the stages'
        for name in COUNTS:
            assert sum(g[name] for g in graders) == report["grader_usage"][name], name
    shares = [*(step["usage"] for step in steps), *graders, report["unattributed_usage"]]
    for name in COUNTS:
        assert sum(share[name] for share in shares) == report["usage"][name], name
    cost = report["usage"]["cost_usd"]
    if cost is None:
        assert all(share.get("cost_usd") is None for share in shares)
    else:
        known = [share.get("cost_usd") or 0.0 for share in shares]
        assert abs(sum(known) - cost) <= 1e-6
