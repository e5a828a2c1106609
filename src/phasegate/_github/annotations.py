"""Annotations: each judged issue an ``error``, each finding a ``warning``.

An issue about a file points at it, relative to the workspace (the only paths GitHub can
show); a file outside the workspace, or an issue about no file, gives an annotation without
one. GitHub shows at most 10 annotations of each kind per step, so no more are printed; the
job summary counts the rest.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from phasegate._github.view import Problem, ReportView
from phasegate._github.workflow_commands import Annotation

PER_LEVEL = 10
"""Annotations of one kind GitHub shows per step."""


def annotations_of(
    view: ReportView, *, workdir: Path, workspace: Path
) -> tuple[list[Annotation], dict[str, int]]:
    """The annotations to print, and how many of each kind were left out."""
    every = [_annotation(problem, workdir, workspace) for problem in view.problems]
    if view.verdict not in ("accepted", "rejected") and view.error:
        every.insert(0, Annotation("error", "phasegate error", view.error))
    shown: list[Annotation] = []
    left_out: Counter[str] = Counter()
    for annotation in every:
        if sum(1 for a in shown if a.level == annotation.level) < PER_LEVEL:
            shown.append(annotation)
        else:
            left_out[annotation.level] += 1
    return shown, {"error": left_out["error"], "warning": left_out["warning"]}


def _annotation(problem: Problem, workdir: Path, workspace: Path) -> Annotation:
    message = f"{problem.where}: {problem.message}"
    if problem.requirement:
        message += f" Requirement: {problem.requirement}"
    return Annotation(
        "warning" if problem.finding else "error",
        f"phasegate {problem.code}",
        message,
        file=_workspace_path(problem.path, workdir, workspace),
    )


def _workspace_path(path: str | None, workdir: Path, workspace: Path) -> str | None:
    """``path`` (relative to ``workdir``) relative to ``workspace``, or None when outside it."""
    if not path or os.path.isabs(path):
        return None
    joined = os.path.normpath(os.path.join(os.path.abspath(workdir), path))
    relative = os.path.relpath(joined, os.path.abspath(workspace))
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return None
    return relative.replace(os.sep, "/")
