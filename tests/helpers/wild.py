"""The transcripts from the wild (tests/fixtures/transcripts/wild): their task, the project
they ran in, and a git checkout of it to judge them in."""

from __future__ import annotations

import subprocess
from pathlib import Path

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "wild"
WILD_TASK = WILD / "task.yaml"
REQUIREMENT = "reqs/a.md"
BEFORE = "# A\n\nold text\n"
"""reqs/a.md as every recorded run found it."""
AFTER = "# A\n\nnew text\n"
"""reqs/a.md after the recorded edit."""
SUMMARY = (
    '{"files_changed": ["reqs/a.md"], "description": "Updated the requirement text in reqs/a.md."}'
)
MARKER = "PHASE 1 COMPLETE: Files have been edited"


def git(work: Path, *args: str) -> None:
    """Run git in ``work`` with a fixed identity, failing the test on error."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip


def requirement_checkout(work: Path) -> Path:
    """``work`` as a git repository holding reqs/a.md as the runs found it, committed."""
    (work / "reqs").mkdir(parents=True)
    (work / REQUIREMENT).write_text(BEFORE)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "start")
    return work
