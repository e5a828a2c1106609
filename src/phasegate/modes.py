"""The names every layer shares, in one place: run modes, pipeline isolations, verdicts, log
formats and report groupings (reports, the runners, the CLI and log readers all name them).
The defaults more than one layer states live here too. Nothing here imports anything heavy:
the command line builds its choices and defaults from these."""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["gate", "single-query", "unstructured"]
"""``gate``: judge at every stop and feed back; ``single-query``: one prompt, judged once;
``unstructured``: the same task without phase scaffolding, judged once (the A/B baseline)."""

MODES: tuple[Mode, ...] = get_args(Mode)
"""Every mode, in the order reports list them."""

Isolation = Literal["session", "process"]
"""How a pipeline runs its stages: ``session``, all in one agent session; ``process``, a new
session per stage (for comparison)."""

ISOLATIONS: tuple[Isolation, ...] = get_args(Isolation)
"""Every isolation, the default first."""

DefinitionKind = Literal["task", "pipeline"]
"""What a definition is: a phased task, or a pipeline of stages (``Task.kind``,
``Pipeline.kind``); runs, plans and batch units carry it."""

STEP_NOUN: dict[DefinitionKind, str] = {"task": "phase", "pipeline": "stage"}
"""What a definition's steps are called in messages: a task's phases, a pipeline's stages."""

Verdict = Literal["accepted", "rejected", "error"]
"""How a task run ended: every phase accepted; a phase rejected; the run could not finish."""

PhaseStatus = Literal["accepted", "rejected", "not_reached"]
"""How a phase ended."""

LogFormat = Literal["json", "console"]
"""How an event log writes a line: ``json``, one object a line (what dashboards read), or
``console``, a line for people."""

GroupBy = Literal["task", "mode", "phase"]
"""How a metrics report groups runs: per task, per task and mode, or per phase as well."""

DEFAULT_MAX_ATTEMPTS = 3
"""Gate checks per run unless the caller sets another budget: a first try, two feedbacks."""
