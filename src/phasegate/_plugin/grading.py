"""The grader of a ``rubric`` check in the plugin: the user's own Claude Code, run headless.

The plugin's runtime has no claude-agent-sdk, so the grader's sessions are ``claude -p``
processes (:class:`~phasegate.agents.claude.headless.HeadlessClaude`) judged by the same
:class:`~phasegate.agents.grading.AgentGrader` ``phasegate run`` uses. Which CLI:
``PHASEGATE_CLAUDE_CLI`` when set (a path, or a command on ``PATH``), else ``claude`` on the
hook's ``PATH`` (:func:`~phasegate.agents.claude.headless.find_cli`). Claude Code gives its
hooks no path to its own executable, so this is a rule the user can see and change. With no
CLI, every rubric fails closed, saying so.

Each session runs in the hook's environment without the variables of the session the hook
belongs to, isolated from the user's settings, plugins and hooks (so this plugin's hooks do
not run inside its own grader), and ends where the stop's checks must end
(:class:`~phasegate._plugin.checks.Bound`, counted from the hook's start).

Each stop is a process of its own, so the answers are kept in the project's
``.phasegate/plugin/grader-answers.json`` by evidence digest (:class:`_KeptAnswers`): the same
evidence at a later stop, in this session or another, is never graded twice.

Imported only when the gated work has a rubric: the hooks of any other work never load it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from phasegate._files.parsing import read_text
from phasegate._plugin.state import PLUGIN_DIR, STATE_DIR
from phasegate.agents.claude.headless import HeadlessClaude, find_cli, session_env
from phasegate.phases.checks import Rubric
from phasegate.phases.grader import GraderSettings
from phasegate.validators.grading import Graded, GraderEvidence, graded_data, graded_from_data
from phasegate.workspace.checks import CheckDisk

ANSWERS_FILE = "grader-answers.json"
"""The file in the project's ``.phasegate/plugin/`` that keeps graders' answers."""
KEPT_ANSWERS = 200
"""The most answers kept (the newest): each is one evidence digest's verdicts."""


class _KeptAnswers(dict[str, Graded]):
    """Graders' answers by evidence digest, read from ``file`` and written back whenever one
    is added (an unreadable file is an empty store: the answer is asked again)."""

    def __init__(self, project: Path) -> None:
        super().__init__()
        self.project = project
        self.file = project / STATE_DIR / PLUGIN_DIR / ANSWERS_FILE
        try:
            # Bounded, regular files only, no link followed: a FIFO planted under the name
            # must not hang the stop (ParseProblem is a ValueError).
            data = json.loads(read_text(self.file, follow_links=False))
        except (OSError, ValueError):
            data = {}
        for key, answer in data.items() if isinstance(data, dict) else ():
            graded = graded_from_data(answer)
            if graded is not None:
                super().__setitem__(key, graded)

    def __setitem__(self, key: str, value: Graded) -> None:
        super().__setitem__(key, value)
        from phasegate._files.atomic import write_atomic
        from phasegate._files.confined import inside_folder

        kept = dict(list(self.items())[-KEPT_ANSWERS:])
        inside_folder(self.project, f"{STATE_DIR}/{PLUGIN_DIR}")
        data = {key: graded_data(graded) for key, graded in kept.items()}
        write_atomic(self.file, json.dumps(data).encode(), inside=self.project)


class _NoCli:
    """The grader where no Claude Code CLI can be found: each rubric fails with why."""

    def __init__(self, problem: str) -> None:
        self.problem = problem

    def grade(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        return Graded(problem=f"it could not start: {self.problem}")


def use_grader(disk: CheckDisk, settings: GraderSettings | None, *, deadline: float) -> None:
    """Make ``disk`` judge its ``rubric`` checks with headless Claude Code sessions of the
    grader ``settings`` say (the defaults for what they leave out), each ended by
    ``deadline`` (a :func:`time.time`: the hook's start plus its checks' bound)."""
    found = find_cli(os.environ)
    if isinstance(found, str):
        disk.grader = _NoCli(found)
        return
    settings = settings or GraderSettings()
    agent = HeadlessClaude(
        found,
        model=settings.resolved_model,
        max_turns=settings.resolved_turns,
        max_budget_usd=settings.resolved_cost,
        env=session_env(os.environ),
        deadline=deadline,
    )
    disk.use_grader(agent, answers=_KeptAnswers(disk.observer.workdir))
