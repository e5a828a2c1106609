"""Judging a ``rubric`` check: what the grader is given, what it must answer, and what that
answer makes (docs/grader.md).

A rubric's criteria are sentences only a reader can judge. The gate hands them to a
:class:`Grader` with :class:`GraderEvidence`, the evidence phasegate holds (the instructions,
the changes with their text, the agent's own words, the other checks' outcomes), and gets one
:class:`CriterionVerdict` per criterion back: ``met``, ``not_met`` or ``cannot_tell``, each
with a reason. Only ``met`` counts: "cannot tell" fails closed, and says so.

Pure: the grader runs elsewhere (:mod:`phasegate.agents.grading` runs a separate agent
session); this module checks its answer (:func:`read_verdicts`: every criterion answered
once, by the schema :func:`verdict_schema`) and turns it into the check's
:class:`~phasegate.validators.stage_checks.CheckOutcome` and its issues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from phasegate.evidence.transcript import Usage
from phasegate.phases.checks import Rubric
from phasegate.validators.issues import Issue, IssueCode

Verdict = Literal["met", "not_met", "cannot_tell"]
"""A grader's word on one criterion."""
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

VERDICT_WORDS: dict[Verdict, str] = {
    "met": "met",
    "not_met": "not met",
    "cannot_tell": "cannot tell",
}
"""How each verdict reads in feedback, reports and pages."""

REASON_CHARS = 2000
"""The longest reason a verdict may give: what feedback, events and pages carry."""


@dataclass(frozen=True, slots=True)
class CriterionVerdict:
    """The grader's verdict on one criterion, with its reason."""

    id: str
    criterion: str
    verdict: Verdict
    reason: str

    @property
    def met(self) -> bool:
        """Whether it counts as met: only a ``met`` verdict does."""
        return self.verdict == "met"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``id``, ``criterion``, ``verdict``, ``reason``."""
        return {
            "id": self.id,
            "criterion": self.criterion,
            "verdict": self.verdict,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """A file the work added, modified or deleted, with its text now when it has one the
    grader may read (None: deleted, binary, or past the bound)."""

    path: str
    status: Literal["added", "modified", "deleted"]
    text: str | None = None
    cut: bool = False
    """Whether ``text`` is only the start of the file."""


@dataclass(frozen=True, slots=True)
class OtherOutcome:
    """Another check of the same list, as it came out."""

    description: str
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GraderEvidence:
    """What the grader is given: the evidence phasegate holds about the work under judgment.

    ``instructions``: the task's and the phase's (or the stage's) own words; ``changes``:
    what changed since the phase (stage) began; ``claims``: the agent's own text in it;
    ``outcomes``: the other checks of the list; ``disk``: a digest of the work directory as
    judged, so equal evidence is recognised without it being shown.
    """

    instructions: str
    changes: tuple[ChangedFile, ...] = ()
    claims: tuple[str, ...] = ()
    outcomes: tuple[OtherOutcome, ...] = ()
    disk: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Graded:
    """What a grader gave back for one rubric: a verdict per criterion, or the ``problem``
    that kept it from giving them; ``usage`` is what its sessions cost (the agent's tokens
    never include it); ``sessions`` how many it ran (0: an answer kept for equal
    evidence)."""

    verdicts: tuple[CriterionVerdict, ...] = ()
    problem: str | None = None
    usage: Usage = field(default_factory=Usage)
    sessions: int = 0


def graded_data(graded: Graded) -> dict[str, Any]:
    """``graded``'s verdicts or problem as JSON-ready data (its usage and sessions are this
    process's, and left out): what a kept answer needs to be given again."""
    return {
        "verdicts": [verdict.as_dict() for verdict in graded.verdicts],
        "problem": graded.problem,
    }


def graded_from_data(data: object) -> Graded | None:
    """The answer :func:`graded_data` wrote, at no cost (None when ``data`` is not one)."""
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        return None
    problem = data.get("problem")
    verdicts: list[CriterionVerdict] = []
    for item in data["verdicts"]:
        if not isinstance(item, dict):
            return None
        name, criterion = item.get("id"), item.get("criterion")
        said, reason = item.get("verdict"), item.get("reason")
        if not (isinstance(name, str) and isinstance(criterion, str) and isinstance(reason, str)):
            return None
        if said not in VERDICTS:
            return None
        verdicts.append(CriterionVerdict(name, criterion, said, reason))
    if not verdicts and not isinstance(problem, str):
        return None
    return Graded(verdicts=tuple(verdicts), problem=problem if isinstance(problem, str) else None)


class Grader(Protocol):
    """Judges a rubric's criteria from the evidence (:mod:`phasegate.agents.grading` runs a
    separate agent session for it)."""

    def grade(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        """A verdict per criterion of ``rubric`` on ``evidence``, or why there is none."""
        ...


class VerdictProblem(ValueError):
    """A grader's answer that is not a verdict for each criterion: what is wrong with it."""


def verdict_schema(rubric: Rubric) -> dict[str, Any]:
    """The JSON Schema a grader's answer must satisfy: ``verdicts``, one item per criterion
    (its ``id``, ``verdict`` and ``reason``)."""
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": len(rubric.criteria),
                "maxItems": len(rubric.criteria),
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "enum": list(rubric.ids)},
                        "verdict": {"type": "string", "enum": list(VERDICTS)},
                        "reason": {"type": "string", "minLength": 1, "maxLength": REASON_CHARS},
                    },
                    "required": ["id", "verdict", "reason"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def read_verdicts(answer: object, rubric: Rubric) -> tuple[CriterionVerdict, ...]:
    """The verdicts in a grader's ``answer`` (the object its schema asks for), in the
    rubric's order; a :class:`VerdictProblem` saying what is wrong when it is not one
    verdict with a reason for each criterion."""
    if not isinstance(answer, dict) or not isinstance(answer.get("verdicts"), list):
        raise VerdictProblem('the answer is not an object with a "verdicts" list')
    wanted = dict(zip(rubric.ids, rubric.criteria, strict=True))
    found: dict[str, CriterionVerdict] = {}
    for place, item in enumerate(answer["verdicts"]):
        if not isinstance(item, dict):
            raise VerdictProblem(f"verdicts[{place}] is not an object")
        name, verdict, reason = item.get("id"), item.get("verdict"), item.get("reason")
        if not isinstance(name, str) or name not in wanted:
            raise VerdictProblem(
                f"verdicts[{place}] names no criterion of the rubric ({', '.join(wanted)})"
            )
        if name in found:
            raise VerdictProblem(f"criterion {name} is judged twice")
        if verdict not in VERDICTS:
            raise VerdictProblem(
                f"verdicts[{place}] ({name}): the verdict must be one of {', '.join(VERDICTS)}"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise VerdictProblem(f"verdicts[{place}] ({name}) gives no reason")
        found[name] = CriterionVerdict(
            id=name,
            criterion=wanted[name].text,
            verdict=verdict,
            reason=_clipped(reason.strip()),
        )
    missing = [name for name in wanted if name not in found]
    if missing:
        raise VerdictProblem(f"no verdict for {', '.join(missing)}")
    return tuple(found[name] for name in wanted)


def describe_rubric(rubric: Rubric) -> str:
    """What a rubric requires, as :func:`~phasegate.validators.stage_checks.describe` words
    a check: ``a grader finds met: design.md names every endpoint``."""
    criteria = "; ".join(
        f"({name}) {c.text}" if len(rubric.criteria) > 1 else c.text
        for name, c in zip(rubric.ids, rubric.criteria, strict=True)
    )
    return f"a grader finds met: {criteria}"


def rubric_verdict(graded: Graded) -> tuple[bool, str, str]:
    """(ok, detail, remedy) of a rubric from what its grader gave back: it holds when every
    criterion is met; a missing answer fails it."""
    if graded.problem is not None:
        return (
            False,
            f"the grader gave no verdict: {graded.problem}",
            "the grader must answer; the check fails until it does",
        )
    lines = [f"{v.id} {VERDICT_WORDS[v.verdict]}: {v.reason}" for v in graded.verdicts]
    unmet = [v for v in graded.verdicts if not v.met]
    remedy = ""
    if unmet:
        remedy = "make " + ", ".join(v.id for v in unmet) + " hold, as the reasons say"
    return not unmet, "\n".join(lines), remedy


def not_graded(others_failed: int) -> tuple[bool, str, str]:
    """(ok, detail, remedy) of a rubric left ungraded because other checks of its list
    failed: the grader reads only work whose mechanical checks hold."""
    return (
        False,
        f"not graded yet: the grader reads the work once the other checks hold "
        f"({others_failed} failed)",
        "make the other checks hold first",
    )


NO_GRADER = (
    False,
    "no grader was given to judge it",
    "run it where a grader can judge it (an agent that can start one)",
)
"""(ok, detail, remedy) of a rubric judged where no grader can run: never taken as met."""


def criterion_issues(
    verdicts: tuple[CriterionVerdict, ...], *, owner: str, phase: int
) -> tuple[Issue, ...]:
    """A ``criterion_not_met`` issue per criterion not met, carrying the grader's reason
    (``cannot_tell`` says the grader could not tell, which is not met)."""
    issues: list[Issue] = []
    for verdict in verdicts:
        if verdict.met:
            continue
        said = (
            "the grader could not tell whether it holds (not met until it can)"
            if verdict.verdict == "cannot_tell"
            else "the grader finds it not met"
        )
        issues.append(
            Issue.of(
                IssueCode.CRITERION_NOT_MET,
                f"{owner} criterion {verdict.id}: {said}: {verdict.reason}",
                phase=phase,
                field=f"{owner}.{verdict.id}",
                requirement=verdict.criterion,
            )
        )
    return tuple(issues)


def _clipped(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"
