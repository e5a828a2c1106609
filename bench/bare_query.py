"""The least a script can do to run Claude Code on a task: one bare ``query()`` loop.

``python bench/bare_query.py PROMPT_FILE WORKDIR``: the same options phasegate gives the CLI
(the work directory, edits accepted, no user or project settings), no hooks, no tools of its
own, nothing judged. bench/overhead.py runs it as the baseline of ``phasegate run``; the
environment (the model's address, an isolated HOME) comes from the caller.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, query


async def run(
    prompt: str,
    workdir: str,
    env: dict[str, str] | None = None,
    messages: list[object] | None = None,
) -> int:
    """Run ``prompt`` in ``workdir`` to the end (``env`` added to the CLI's environment);
    the number of messages received, each appended to ``messages`` when given."""
    options = ClaudeAgentOptions(
        cwd=workdir, permission_mode="acceptEdits", setting_sources=[], env=env or {}
    )
    received = 0
    async for message in query(prompt=prompt, options=options):
        received += 1
        if messages is not None:
            messages.append(message)
    return received


if __name__ == "__main__":
    asyncio.run(run(Path(sys.argv[1]).read_text(encoding="utf-8"), sys.argv[2]))
