"""Making a path unwritable for a test, even when the tests run as root."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a file, or a directory nothing can be added to) cannot be written while the
    block runs.

    Permission bits do that for an ordinary user; root ignores them, so as root the path is
    made immutable (``chattr +i``). The test is skipped when neither works here (no chattr,
    or a file system without the flag).
    """
    if os.geteuid() != 0:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root, which ignores permissions, and chattr is not installed")
    done = subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"running as root, and chattr +i failed here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], capture_output=True, check=True)
