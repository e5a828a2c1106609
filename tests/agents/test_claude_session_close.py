"""A Claude Code session ended from outside (a stopped branch, a timeout, a cancelled run):
its CLI is ended and its streams are closed before the cancellation goes on, even when a
second cancellation arrives while it closes."""

from __future__ import annotations

import asyncio
import gc
import os
import time
import warnings
from pathlib import Path

import pytest

from phasegate import Runner, Task
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.service import descendants

pytestmark = pytest.mark.cli


def _clis() -> dict[int, str]:
    """The Claude Code CLIs this test process started that are still running."""
    return {pid: line for pid, line in descendants(os.getpid()).items() if "claude" in line}


def test_a_session_cancelled_again_while_it_closes_still_ends_its_cli_and_closes_its_streams(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The first cancellation starts the SDK's close (stdin, a grace, then SIGTERM); a
    second one right after it must not cut that short: the SDK shields its close from
    anyio's cancellation only, and a cut close left the CLI running and the SDK's message
    stream unclosed (a ResourceWarning at garbage collection, an error in this suite)."""
    server = scripted_model_server(Script.model_validate({"replies": [{"hang": True}]}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    before = _clis()

    async def cancelled_twice() -> dict[int, str]:
        run = asyncio.create_task(Runner(agent).run(task, project))
        deadline = time.monotonic() + 60  # a condition waited on, with a timeout
        while not server.main_requests():
            assert not run.done(), run
            assert time.monotonic() < deadline, "the CLI never asked the model"
            await asyncio.sleep(0.05)
        run.cancel()
        await asyncio.sleep(0)  # the run takes the first cancellation and starts closing
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return _clis()

    left = asyncio.run(cancelled_twice())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()

    assert {pid: line for pid, line in left.items() if pid not in before} == {}
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
