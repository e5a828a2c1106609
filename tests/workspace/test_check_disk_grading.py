"""A rubric on the check disk: graded only once its list's other checks hold, with the
evidence the disk holds; never met without a grader."""

from __future__ import annotations

from pathlib import Path

from phasegate.evidence.transcript import Usage
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.checks import Criterion, FileExists, MinLines, Rubric
from phasegate.validators.grading import CriterionVerdict, Graded, GraderEvidence
from phasegate.workspace.checks import CheckDisk
from phasegate.workspace.observer import WorkspaceObserver

RUBRIC = Rubric(criteria=(Criterion(text="design.md names every endpoint"),))


class RecordingGrader:
    """A grader that finds every criterion met and keeps what it was given."""

    def __init__(self) -> None:
        self.given: list[GraderEvidence] = []

    def grade(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        self.given.append(evidence)
        return Graded(
            verdicts=tuple(
                CriterionVerdict(name, c.text, "met", "design.md says GET /users")
                for name, c in zip(rubric.ids, rubric.criteria, strict=True)
            ),
            usage=Usage(input_tokens=100, output_tokens=20, cost_usd=0.001),
            sessions=1,
        )


def disk_with_grader(work: Path) -> tuple[CheckDisk, RecordingGrader]:
    """A check disk on ``work`` whose rubrics go to a recording grader."""
    disk = CheckDisk(WorkspaceObserver(work))
    grader = RecordingGrader()
    disk.grader = grader
    return disk, grader


def test_a_rubric_is_graded_last_with_the_changed_files_the_claims_and_the_other_outcomes(
    work: Path,
) -> None:
    """Whatever its place in the list, it is graded after the mechanical checks, which it is
    shown; outcomes come back in the list's order."""
    (work / "design.md").write_text("# API\nGET /users\n")
    disk, grader = disk_with_grader(work)
    diff = WorkspaceDiff(added=("design.md",))
    (graded, _), (exists, _) = disk.run(
        [RUBRIC, FileExists(path="design.md")],
        snapshot=disk.snapshot(),
        diff=diff,
        tools={},
        texts=("I wrote design.md.",),
        brief="Phase 1 (design): write design.md",
    )
    assert exists.ok
    assert graded.ok
    assert graded.kind == "rubric"
    assert graded.detail == "c1 met: design.md says GET /users"
    assert [v.verdict for v in graded.criteria] == ["met"]
    assert graded.grader_usage == Usage(input_tokens=100, output_tokens=20, cost_usd=0.001)
    (given,) = grader.given
    assert given.instructions == "Phase 1 (design): write design.md"
    assert [(c.path, c.status, c.text) for c in given.changes] == [
        ("design.md", "added", "# API\nGET /users\n")
    ]
    assert given.claims == ("I wrote design.md.",)
    assert [(o.description, o.ok) for o in given.outcomes] == [("design.md exists", True)]
    assert given.disk


def test_a_rubric_is_not_graded_while_another_check_of_its_list_fails(work: Path) -> None:
    """The grader costs nothing until the mechanical checks hold; the rubric fails closed."""
    disk, grader = disk_with_grader(work)
    (_, _), (graded, _) = disk.run(
        [MinLines(path="design.md", n=3), RUBRIC],
        snapshot=disk.snapshot(),
        diff=WorkspaceDiff(),
        tools={},
        texts=(),
    )
    assert grader.given == []
    assert not graded.ok
    assert graded.detail == (
        "not graded yet: the grader reads the work once the other checks hold (1 failed)"
    )
    assert graded.grader_usage is None


def test_outcomes_kept_from_an_earlier_run_count_as_the_list_s_other_checks(work: Path) -> None:
    """A failed check not run again still keeps the rubric from being graded."""
    disk, grader = disk_with_grader(work)
    (failed, _), _ = disk.run(
        [FileExists(path="missing.md"), RUBRIC],
        snapshot=disk.snapshot(),
        diff=WorkspaceDiff(),
        tools={},
        texts=(),
    )
    ((graded, _),) = disk.run(
        [RUBRIC],
        snapshot=disk.snapshot(),
        diff=WorkspaceDiff(),
        tools={},
        texts=(),
        others=[failed],
    )
    assert not graded.ok
    assert grader.given == []


def test_without_a_grader_a_rubric_is_never_met(work: Path) -> None:
    """Nobody read it: it fails, saying so."""
    disk = CheckDisk(WorkspaceObserver(work))
    ((graded, _),) = disk.run(
        [RUBRIC], snapshot=disk.snapshot(), diff=WorkspaceDiff(), tools={}, texts=()
    )
    assert not graded.ok
    assert graded.detail == "no grader was given to judge it"


def test_a_binary_or_unreadable_changed_file_is_listed_without_its_text(work: Path) -> None:
    """Only text a reader can quote goes in; a file outside the work directory never does."""
    (work / "logo.png").write_bytes(b"\x89PNG\x00\x00")
    outside = work.parent / "secret.txt"
    outside.write_text("the secret")
    (work / "link.txt").symlink_to(outside)
    disk, grader = disk_with_grader(work)
    disk.run(
        [RUBRIC],
        snapshot=disk.snapshot(),
        diff=WorkspaceDiff(added=("link.txt", "logo.png")),
        tools={},
        texts=(),
    )
    (given,) = grader.given
    assert [(c.path, c.text) for c in given.changes] == [("link.txt", None), ("logo.png", None)]
