"""Whether bubblewrap can make a sandbox on this machine: one probe, one wording.

Claude Code's sandbox (the agent's commands) and phasegate's own confinement of the checks'
commands both run Debian's bubblewrap; each asks, before it relies on it, whether ``bwrap``
can start the namespaces it needs here, and a refusal says what to change.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

PROBE_TIMEOUT = 10.0
"""How long a probe of bubblewrap may take (a machine that hangs there cannot sandbox)."""


def bwrap_refusal(command: Sequence[str], *, pass_fds: Sequence[int] = ()) -> str | None:
    """Why ``command`` (bubblewrap, its flags, then ``true``) fails here, saying what to
    change; None when it runs."""
    bwrap = command[0]
    try:
        done = subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            pass_fds=tuple(pass_fds),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) could not be started: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.strip().splitlines()[-1:] or ["no message"]
    return (
        f"bubblewrap ({bwrap}) cannot make a sandbox here ({said[0]}): enable user "
        "namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also "
        "kernel.apparmor_restrict_unprivileged_userns=0), or run where they are allowed"
    )
