"""A run as the service holds it while it serves: its record, and who follows it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from phasegate._server.event_files import Doorbell
from phasegate._server.records import RunRecord
from phasegate.modes import RunStatus

if TYPE_CHECKING:
    from phasegate._server.processes import RunProcess


@dataclass
class LiveRun:
    """One run: its record as last written, its doorbell, and its process while it runs."""

    record: RunRecord
    bell: Doorbell = field(default_factory=Doorbell)
    process: RunProcess | None = None
    task: asyncio.Task[None] | None = None
    ending: RunStatus | None = None
    """``cancelled`` or ``interrupted`` once the run is being stopped for that reason."""
    resuming: bool = False
    """Queued again after an interruption: a pipeline continues from its state."""
    unsaved: list[str] = field(default_factory=list)
    """Log lines the service could not append to the run's log (a full disk): its streams
    serve them after the log's own lines, so they still end with ``done``."""
