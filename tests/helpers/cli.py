"""Running the ``phasegate`` command as a user does: a subprocess, everything captured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PHASEGATE = [sys.executable, "-m", "phasegate"]


def phasegate(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a subprocess and capture everything."""
    return subprocess.run(
        [*PHASEGATE, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
