"""A grader's answer is a verdict per criterion or it is refused saying why; only ``met``
counts, and what is not met is an issue carrying the grader's reason."""

from __future__ import annotations

import re

import pytest

from phasegate.evidence.transcript import Usage
from phasegate.phases.checks import Criterion, Rubric
from phasegate.validators.grading import (
    CriterionVerdict,
    Graded,
    VerdictProblem,
    criterion_issues,
    describe_rubric,
    read_verdicts,
    rubric_verdict,
    verdict_schema,
)
from phasegate.validators.issues import IssueCode

RUBRIC = Rubric(
    criteria=(
        Criterion(text="design.md names every endpoint prd.md lists"),
        Criterion(id="tone", text="the README is friendly"),
    )
)


def verdict(name: str, said: str, reason: str = "design.md says: GET /users") -> dict[str, str]:
    """One item of a grader's answer."""
    return {"id": name, "verdict": said, "reason": reason}


def test_an_answer_with_a_verdict_per_criterion_is_read_in_the_rubric_s_order() -> None:
    """The answer may list them in any order; the criterion's own words come with each."""
    answer = {"verdicts": [verdict("tone", "not_met"), verdict("c1", "met")]}
    read = read_verdicts(answer, RUBRIC)
    assert [v.id for v in read] == ["c1", "tone"]
    assert read[0].criterion == "design.md names every endpoint prd.md lists"
    assert [v.met for v in read] == [True, False]


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (None, 'not an object with a "verdicts" list'),
        ({"verdicts": "met"}, 'not an object with a "verdicts" list'),
        ({"verdicts": [verdict("c1", "met")]}, "no verdict for tone"),
        ({"verdicts": [verdict("c1", "met"), verdict("c1", "met")]}, "c1 is judged twice"),
        ({"verdicts": [verdict("c9", "met")]}, "names no criterion of the rubric (c1, tone)"),
        ({"verdicts": [verdict("c1", "probably"), verdict("tone", "met")]}, "must be one of"),
        ({"verdicts": [verdict("c1", "met", "  "), verdict("tone", "met")]}, "gives no reason"),
        ({"verdicts": ["met", "met"]}, "verdicts[0] is not an object"),
    ],
)
def test_an_answer_that_is_not_a_verdict_per_criterion_is_refused_saying_why(
    answer: object, says: str
) -> None:
    """What is wrong is what the grader is told when it is asked again."""
    with pytest.raises(VerdictProblem, match=re.escape(says)):
        read_verdicts(answer, RUBRIC)


def test_the_schema_asks_for_exactly_one_verdict_per_criterion_by_id() -> None:
    """The runtime's structured output holds the grader to it before phasegate reads it."""
    schema = verdict_schema(RUBRIC)
    verdicts = schema["properties"]["verdicts"]
    assert verdicts["minItems"] == verdicts["maxItems"] == 2
    assert verdicts["items"]["properties"]["id"]["enum"] == ["c1", "tone"]
    assert verdicts["items"]["properties"]["verdict"]["enum"] == ["met", "not_met", "cannot_tell"]


def test_cannot_tell_is_not_met_and_the_issue_says_the_grader_could_not_tell() -> None:
    """Fails closed: the issue carries the reason and the criterion as the requirement."""
    graded = (
        CriterionVerdict("c1", "design.md names every endpoint", "met", "it lists GET /users"),
        CriterionVerdict("tone", "the README is friendly", "cannot_tell", "README.md is empty"),
    )
    ok, detail, remedy = rubric_verdict(Graded(verdicts=graded))
    assert not ok
    assert detail == "c1 met: it lists GET /users\ntone cannot tell: README.md is empty"
    assert remedy == "make tone hold, as the reasons say"
    (issue,) = criterion_issues(graded, owner="checks[1]", phase=2)
    assert issue.code is IssueCode.CRITERION_NOT_MET
    assert issue.phase == 2
    assert issue.field == "checks[1].tone"
    assert issue.requirement == "the README is friendly"
    assert "could not tell whether it holds (not met until it can): README.md is empty" in (
        issue.message
    )


def test_a_grader_that_gave_no_verdict_fails_the_rubric_with_its_problem() -> None:
    """Never taken as met."""
    ok, detail, _ = rubric_verdict(
        Graded(problem="no verdict for tone (asked 2 times)", usage=Usage())
    )
    assert not ok
    assert detail == "the grader gave no verdict: no verdict for tone (asked 2 times)"


def test_a_rubric_is_described_by_its_criteria() -> None:
    """One criterion reads as its sentence; several are named by id."""
    assert describe_rubric(Rubric(criteria=(Criterion(text="it is sound"),))) == (
        "a grader finds met: it is sound"
    )
    assert describe_rubric(RUBRIC) == (
        "a grader finds met: (c1) design.md names every endpoint prd.md lists; "
        "(tone) the README is friendly"
    )
