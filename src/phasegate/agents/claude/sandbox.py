"""Claude Code's sandbox: whether it can run here, and the settings that turn it on.

Claude Code (2.1.332) runs each Bash command and its children under bubblewrap on Linux
(Seatbelt, ``sandbox-exec``, on macOS): the working directory writable, the rest read-only,
the network through its own proxy (socat bridges it into the sandbox) that lets through only
``network.allowedDomains``. It reads the ``sandbox`` key of ``--settings``, where
claude-agent-sdk merges ``ClaudeAgentOptions.sandbox``: besides the SDK's documented keys it
honours ``failIfUnavailable`` (without it a missing bubblewrap runs every command unconfined,
with a warning) and ``filesystem.denyWrite`` (paths its commands may not write even in the
working directory). The file tools (Edit, Write, ...) are not sandboxed: phasegate's
PreToolUse hook keeps them in the work directory (:func:`~phasegate.validators.protect.
write_refusal`). What was relied on, by version: docs/claude-code.md.

:func:`sandbox_problem` is the one pre-flight check (the runner asks it before the model is
called, ``phasegate doctor`` shows :func:`sandbox_facts`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate._process.bubblewrap import PROBE_TIMEOUT, bwrap_refusal
from phasegate._process.starting import short_base
from phasegate.agents.protocol import Confinement
from phasegate.errors import UsageError
from phasegate.validators.protect import protected_paths

LINUX_TOOLS = {"bwrap": "bubblewrap", "socat": "socat"}
"""The programs Claude Code's sandbox needs on Linux, and the Debian package of each."""

BRIDGE_SOCKET = len("/claude-socks-0123456789abcdef.sock")
"""What Claude Code (2.1.332) adds to its temporary folder for each of the proxy's Unix
sockets (``claude-http-…``, ``claude-socks-…``): under a longer ``TMPDIR`` than the socket
limit leaves (72 bytes on Linux) the sandbox fails to start ("Failed to create bridge
sockets"), and a confined command is refused."""


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    """What to add to the CLI's environment ``env`` (on top of this process's) so that its
    sandbox can start: a short ``TMPDIR`` when the one it would use leaves no room for the
    proxy's sockets (:data:`BRIDGE_SOCKET`), else nothing. Raises
    :class:`~phasegate.errors.UsageError` when no short folder is usable."""
    given = env.get("TMPDIR") or os.environ.get("TMPDIR") or tempfile.gettempdir()
    base = short_base(
        BRIDGE_SOCKET, "Claude Code's sandbox proxy socket", "run without a sandbox", given
    )
    return {} if str(base) == given else {"TMPDIR": str(base)}


def sandbox_problem(path: str | None = None) -> str | None:
    """Why Claude Code's sandbox cannot run on this machine with ``path`` as ``PATH``
    (default: this process's), saying what to install; None when it can. Asked once per
    process and ``PATH``."""
    return _problem(path if path is not None else os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=8)
def _problem(path: str) -> str | None:
    if sys.platform == "darwin":
        found = shutil.which("sandbox-exec", path=path)
        return None if found else "sandbox-exec (macOS's Seatbelt) is not on PATH"
    if not sys.platform.startswith("linux"):
        return f"Claude Code's sandbox runs on Linux and macOS only, not on {sys.platform}"
    try:
        sandbox_env({})
    except UsageError as exc:
        return str(exc)
    missing = [name for name in LINUX_TOOLS if shutil.which(name, path=path) is None]
    if missing:
        packages = " and ".join(LINUX_TOOLS[name] for name in missing)
        return (
            f"{' and '.join(missing)} not found on PATH: install {packages} (Debian and Ubuntu: "
            f"apt-get install {' '.join(LINUX_TOOLS[name] for name in missing)})"
        )
    return _namespaces_problem(shutil.which("bwrap", path=path) or "bwrap")


def _namespaces_problem(bwrap: str) -> str | None:
    """Why bubblewrap cannot start the namespaces the sandbox uses, or None."""
    return bwrap_refusal(
        [bwrap, "--unshare-user", "--unshare-net", "--unshare-pid", "--ro-bind", "/", "/",
         "--dev", "/dev", "--proc", "/proc", "true"]
    )  # fmt: skip


def sandbox_settings(confinement: Confinement, workdir: Path) -> dict[str, Any]:
    """The ``sandbox`` settings of a session confined as ``confinement`` says in
    ``workdir``: commands confined with no way out, allowed without asking (they cannot
    leave), the protected paths and phasegate's own files there read-only, the network
    closed but to the listed hosts. The
    runner asked :func:`sandbox_problem` before (an ``optional`` sandbox that cannot run
    gets no confinement), so a sandbox that still fails to start fails the command: never
    unconfined by surprise."""
    settings: dict[str, Any] = {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "autoAllowBashIfSandboxed": True,
        "network": {"allowedDomains": list(confinement.network)},
    }
    read_only = protected_paths(confinement.read_only, str(workdir))
    # Only what exists: the CLI keeps a missing path from being made, which would keep
    # phasegate's own folder from being made later too.
    read_only += [os.path.realpath(p) for p in confinement.own if os.path.lexists(p)]
    if read_only:
        settings["filesystem"] = {"denyWrite": read_only}
    return settings


def sandbox_facts(path: str | None = None) -> dict[str, Any]:
    """What ``phasegate doctor`` shows about the sandbox here: ``can_run`` and, when it
    cannot, ``problem`` (what to install); on Linux ``bwrap`` and ``socat`` (each program's
    path and the version line it prints, null when missing), ``user_namespaces`` (``available``
    or why not) and ``seccomp`` (whether the kernel offers the filters Claude Code applies)."""
    search = path if path is not None else os.environ.get("PATH", os.defpath)
    problem = sandbox_problem(search)
    facts: dict[str, Any] = {"can_run": problem is None, "problem": problem}
    if not sys.platform.startswith("linux"):
        return facts
    for name in LINUX_TOOLS:
        found = shutil.which(name, path=search)
        facts[name] = {"path": found, "version": _version(found)} if found else None
    bwrap = shutil.which("bwrap", path=search)
    facts["user_namespaces"] = (_namespaces_problem(bwrap) or "available") if bwrap else None
    facts["seccomp"] = Path("/proc/sys/kernel/seccomp/actions_avail").exists()
    return facts


def _version(program: str) -> str | None:
    flag = "-V" if Path(program).name == "socat" else "--version"
    try:
        done = subprocess.run(
            [program, flag], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        if "version" in line.lower() or line.startswith("bubblewrap"):
            return line.strip()
    return None
