"""Whether a process a test started (or made start) is still running."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

GONE_WITHIN = 30.0
"""How long a killed process may take to be gone: it guards a hang only, generous under load."""


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust the signal probe
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pid: int, within: float = GONE_WITHIN) -> bool:
    """Whether ``pid`` is gone now or within ``within`` seconds; if it is not, it is killed
    (so a failing test leaves nothing running) and the answer is False."""
    deadline = time.monotonic() + within
    while is_running(pid):
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            return False
        time.sleep(0.05)
    return True
