"""How one service instance runs: its root, its bounds, its offline model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate.phases.sandbox import SandboxMode

DEFAULT_TIMEOUT = 1800.0
"""Seconds a run may take when its request sets no timeout."""
SANDBOX_DEFAULT: SandboxMode = "optional"
"""The service's runs come from elsewhere: confined where the sandbox can run (the report
says when it could not), unless their definition or ``--no-sandbox`` says otherwise."""


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """``root``: every path a request names lies inside it, and the service keeps its runs in
    ``root/.phasegate``. ``max_concurrent``: agent sessions at once. ``grace``: seconds a
    shutdown waits for running runs before it interrupts them. ``model_script``: every run
    replays this scripted model offline instead of asking a real one."""

    root: Path
    max_concurrent: int
    grace: float = 30.0
    stop_grace: float = 10.0
    """Seconds a stopped run has to judge and write its report before its group is killed."""
    model_script: Path | None = None
    cli_path: str | None = None
    secrets: tuple[str, ...] = ()
    """Text no response or event may show (the service's token)."""
    max_streams: int = 256
    """Event streams open at once, in all (each holds a connection while its run lasts)."""
    max_streams_per_client: int = 32
    """Event streams open at once from one client address."""
    sandbox: SandboxMode | None = None
    """Every run confined (``on``) or not (``off``) whatever its definition says; None: as it
    says, else :data:`SANDBOX_DEFAULT`."""
