"""The parent's side: start ``python -m MODULE`` in a session of its own, hand it a job, and
end its whole process group.

A session of its own keeps a Ctrl-C at the terminal from reaching the child's agent, and lets
the parent end the child together with everything it started (the agent's CLI and the
commands that runs), which a signal to the child alone would leave behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import sys
from typing import IO

from phasegate._process.child import LENGTH_BYTES


async def start_child(
    module: str, *args: str, stdout: int | IO[bytes] | None = None
) -> asyncio.subprocess.Process:
    """Start ``python -m module args`` with a pipe on its stdin, in a new session."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args,
        stdin=asyncio.subprocess.PIPE, stdout=stdout, start_new_session=True,
    )  # fmt: skip


async def send_job(process: asyncio.subprocess.Process, job: object) -> None:
    """Write ``job``, pickled and prefixed with its length, to the child's stdin. The pipe
    stays open: the child ends itself when it closes."""
    assert process.stdin is not None
    data = pickle.dumps(job)
    process.stdin.write(len(data).to_bytes(LENGTH_BYTES, "big") + data)
    await process.stdin.drain()


async def end_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """End the child's process group: SIGTERM, ``grace`` seconds to go, then SIGKILL for
    whatever is left (the agent's CLI may outlive the child itself)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    kill_group(process.pid)
    await process.wait()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``, if any of it is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
