"""Processes that hold phasegate's temporary folders and die without removing them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_HOLDER = """
import sys
from pathlib import Path
from phasegate._files.scratch import make_scratch

for prefix in sys.argv[1:]:
    folder = make_scratch(prefix)
    (folder / "work").mkdir()
    (folder / "work" / "app.py").write_text("copy of the project\\n")
    print(folder, flush=True)
print("ready", flush=True)
sys.stdin.read()
"""


Holder = subprocess.Popen[str]
"""A process holding temporary folders."""


def start_holder(temp_root: Path, prefixes: Sequence[str]) -> tuple[Holder, list[Path]]:
    """A child process that made one temporary folder per prefix in ``temp_root`` (a copy
    of a project in each) and waits; its folders, once it says it is ready."""
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, *prefixes],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(temp_root)},
    )
    assert child.stdout is not None
    folders: list[Path] = []
    for line in child.stdout:  # a condition, not a time: the child says when it is ready
        if line == "ready\n":
            return child, folders
        folders.append(Path(line.rstrip("\n")))
    raise AssertionError(f"the holder ended with {child.wait(timeout=30)} before it was ready")


def kill_hard(child: Holder, *, reap: bool = True) -> None:
    """End ``child`` with SIGKILL, as the OOM killer would: no cleanup runs. Without
    ``reap`` it stays a zombie until :func:`reap_holder` waits for it."""
    os.kill(child.pid, signal.SIGKILL)
    if reap:
        reap_holder(child)


def reap_holder(child: Holder) -> None:
    """Wait for ``child`` to end and close its pipes."""
    child.communicate(timeout=30)
