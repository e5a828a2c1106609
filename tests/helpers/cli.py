"""Running the ``phasegate`` command as a user does: a subprocess, everything captured."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PHASEGATE = [sys.executable, "-m", "phasegate"]


def phasegate(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a subprocess and capture everything (``env``: its whole environment)."""
    return subprocess.run(
        [*PHASEGATE, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


@dataclass(frozen=True, slots=True)
class MainResult:
    """How :func:`run_main` ended: the exit code and what was printed."""

    code: int
    stdout: str
    stderr: str


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> MainResult:
    """Run the console entry point in this process, so a test can make a write fail with a
    monkeypatch; its exit code and output, however it ended."""
    from phasegate._cli.app import main

    argv = sys.argv
    sys.argv = ["phasegate", *map(str, args)]
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:  # pragma: no cover - main always exits
        code = 0
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return MainResult(code, captured.out, captured.err)
