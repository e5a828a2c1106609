"""A pipeline's stages as a graph (phasegate.phases.stage_graph): needs and their defaults,
order and levels, branches, what is ready, and the load errors naming the stages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.errors import PipelineFileError
from phasegate.phases.pipeline import Pipeline, load_pipeline, pipeline_from_mapping
from phasegate.phases.stage_graph import StageGraph


def stage(name: str, **fields: Any) -> dict[str, Any]:
    """A valid stage as data: a prompt and one file_exists check, overridden by ``fields``."""
    return {"name": name, "prompt": "Do it.", "exit_when": [{"file_exists": "a.md"}], **fields}


def pipeline(*stages: dict[str, Any], **fields: Any) -> Pipeline:
    """A pipeline called ``p`` holding ``stages``."""
    return pipeline_from_mapping({"name": "p", "stages": list(stages), **fields})


def graph(*stages: dict[str, Any]) -> StageGraph:
    """The graph of a pipeline holding ``stages``."""
    return StageGraph.of(pipeline(*stages))


def load_error(tmp_path: Path, *stages: dict[str, Any]) -> PipelineFileError:
    """Load a pipeline file holding ``stages`` expecting a PipelineFileError, and return it."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(yaml.safe_dump({"name": "p", "stages": list(stages)}, sort_keys=False))
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    return caught.value


def diamond() -> StageGraph:
    """plan -> (backend, frontend, docs) -> integrate."""
    return graph(
        stage("plan"),
        stage("backend", needs=["plan"]),
        stage("frontend", needs=["plan"]),
        stage("docs", needs=["plan"]),
        stage("integrate", needs=["backend", "frontend", "docs"]),
    )


# --- defaults and sequential files -----------------------------------------------------


def test_a_twelve_stage_file_without_needs_is_sequential_on_one_branch() -> None:
    """Without needs each stage waits for the one before it: one branch, the first stage's."""
    names = [f"s{i}" for i in range(12)]
    g = graph(*(stage(name) for name in names))

    assert g.sequential is True
    assert g.order() == tuple(names)
    assert g.levels() == tuple((name,) for name in names)
    assert g.needs("s0") == ()
    assert g.needs("s5") == ("s4",)
    assert g.dependents("s5") == ("s6",)
    assert {g.branch_of(name) for name in names} == {"s0"}
    assert g.branches == ("s0",)
    assert [g.forks_from(name) for name in names] == [None] * 12


def test_needs_written_as_the_defaults_keep_a_file_sequential() -> None:
    """needs: [] on the first stage and the previous stage on the others mean the default."""
    g = graph(stage("a", needs=[]), stage("b", needs=["a"]), stage("c", needs="b"))

    assert g.sequential is True
    assert g.branches == ("a",)


def test_a_pipeline_without_needs_keeps_its_digest_and_dump() -> None:
    """needs, max_parallel, on_conflict and on_branch_failure at their defaults are left out
    of dumps, so digests of pipelines saved before them match."""
    plain = pipeline(stage("a"), stage("b"))
    dumped = plain.model_dump(mode="json")

    assert "needs" not in dumped["stages"][0]
    assert not {"max_parallel", "on_conflict", "on_branch_failure"} & set(dumped)
    assert plain.digest() == pipeline(stage("a"), stage("b")).digest()
    assert plain.digest() != pipeline(stage("a"), stage("b", needs=[])).digest()


def test_the_pipeline_settings_for_parallel_runs_load_and_default() -> None:
    """max_parallel is null (no bound), a conflict joins, a failed branch stops the others."""
    default = pipeline(stage("a"))
    written = pipeline(stage("a"), max_parallel=2, on_conflict="fail", on_branch_failure="finish")

    assert (default.max_parallel, default.on_conflict, default.on_branch_failure) == (
        None,
        "join",
        "stop",
    )
    assert (written.max_parallel, written.on_conflict, written.on_branch_failure) == (
        2,
        "fail",
        "finish",
    )


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"max_parallel": 0}, "max_parallel"),
        ({"max_parallel": "3"}, "max_parallel"),
        ({"on_conflict": "merge"}, "on_conflict"),
        ({"on_branch_failure": "ignore"}, "on_branch_failure"),
    ],
    ids=["max-parallel-zero", "max-parallel-text", "on-conflict", "on-branch-failure"],
)
def test_bad_parallel_settings_are_refused_naming_the_field(
    tmp_path: Path, fields: dict[str, Any], field: str
) -> None:
    """Each setting is checked where it is written."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(yaml.safe_dump({"name": "p", "stages": [stage("a")], **fields}))

    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)

    assert caught.value.field == field


# --- shapes ----------------------------------------------------------------------------


def test_a_diamond_has_three_levels_and_a_join_on_the_first_branch() -> None:
    """plan, then backend/frontend/docs at once (each its own branch forked from plan), then
    integrate joining them on backend's branch (the first it needs in file order)."""
    g = diamond()

    assert g.sequential is False
    assert g.levels() == (("plan",), ("backend", "frontend", "docs"), ("integrate",))
    assert g.order() == ("plan", "backend", "frontend", "docs", "integrate")
    assert g.dependents("plan") == ("backend", "frontend", "docs")
    assert [g.branch_of(n) for n in g.names] == [
        "plan",
        "backend",
        "frontend",
        "docs",
        "backend",
    ]
    assert [g.forks_from(n) for n in g.names] == [None, "plan", "plan", "plan", None]
    assert g.is_join("integrate")
    assert g.joins("integrate") == ("frontend", "docs")
    assert g.joins("backend") == ()
    assert g.branches == ("plan", "backend", "frontend", "docs")
    assert g.stages_of("backend") == ("backend", "integrate")


def test_a_join_continues_the_first_stage_it_needs_in_file_order_not_in_its_list() -> None:
    """The main line of a join is file order: needs: [docs, backend] continues backend."""
    g = graph(
        stage("plan"),
        stage("backend", needs=["plan"]),
        stage("docs", needs=["plan"]),
        stage("integrate", needs=["docs", "backend"]),
    )

    assert g.needs("integrate") == ("backend", "docs")
    assert g.branch_of("integrate") == "backend"
    assert g.joins("integrate") == ("docs",)


def test_a_fan_out_forks_every_dependent_and_a_chain_continues_its_branch() -> None:
    """A stage with several dependents forks each; a sole dependent continues the branch."""
    g = graph(
        stage("plan"),
        stage("api", needs=["plan"]),
        stage("api-tests"),  # default: needs api, and is api's only dependent
        stage("web", needs=["plan"]),
    )

    assert g.levels() == (("plan",), ("api", "web"), ("api-tests",))
    assert g.branch_of("api-tests") == "api"
    assert g.forks_from("api-tests") is None
    assert g.forks_from("web") == "plan"
    assert g.stages_of("api") == ("api", "api-tests")
    assert g.dependents("web") == ()


def test_needs_empty_starts_a_fresh_branch_at_once() -> None:
    """needs: [] on a later stage: level 0, its own branch, no session to fork from."""
    g = graph(stage("a"), stage("b"), stage("lint", needs=[]))

    assert g.levels() == (("a", "lint"), ("b",))
    assert g.branch_of("lint") == "lint"
    assert g.forks_from("lint") is None
    assert g.ready(accepted=(), running=()) == ("a", "lint")


def test_a_stage_may_need_a_stage_written_after_it() -> None:
    """Forward references: the order follows the needs, file order among equals."""
    g = graph(
        stage("report", needs=["measure"]),
        stage("setup", needs=[]),
        stage("measure", needs=["setup"]),
    )

    assert g.order() == ("setup", "measure", "report")
    assert g.levels() == (("setup",), ("measure",), ("report",))
    assert g.branch_of("report") == "setup"
    assert g.sequential is False


def test_ready_lists_the_stages_whose_needs_are_all_accepted_and_not_started() -> None:
    """Accepted and running stages are left out; a join waits for every need."""
    g = diamond()

    assert g.ready(accepted=(), running=()) == ("plan",)
    assert g.ready(accepted=(), running=("plan",)) == ()
    assert g.ready(accepted=("plan",), running=("frontend",)) == ("backend", "docs")
    assert g.ready(accepted=("plan", "backend", "frontend"), running=("docs",)) == ()
    assert g.ready(accepted=("plan", "backend", "frontend", "docs"), running=()) == ("integrate",)


def test_back_to_within_a_branch_is_allowed() -> None:
    """A join may go back to the stage whose branch it continues; a chain to its start."""
    p = pipeline(
        stage("plan"),
        stage("backend", needs=["plan"]),
        stage("backend-tests", on_fail={"back_to": "backend"}),
        stage("docs", needs=["plan"]),
        stage("integrate", needs=["backend-tests", "docs"], on_fail={"back_to": "backend"}),
    )

    assert p.graph.branch_of("integrate") == p.graph.branch_of("backend") == "backend"


# --- load errors -----------------------------------------------------------------------


def test_an_unknown_name_in_needs_is_refused_listing_the_stages(tmp_path: Path) -> None:
    """The stage and the unknown name are named, with the stages there are."""
    error = load_error(tmp_path, stage("a"), stage("b", needs=["a", "archtect"]))

    assert error.field == "stages.1.needs"
    assert error.problem == "stage 'b' needs 'archtect', which is not a stage; stages: a, b"


def test_a_stage_needing_itself_is_refused(tmp_path: Path) -> None:
    """A stage cannot wait for itself."""
    error = load_error(tmp_path, stage("a"), stage("b", needs=["b"]))

    assert error.field == "stages.1.needs"
    assert "stage 'b' needs itself" in error.problem


def test_a_name_repeated_in_needs_is_refused(tmp_path: Path) -> None:
    """Each need is named once."""
    error = load_error(tmp_path, stage("a"), stage("b", needs=["a", "a"]))

    assert error.field == "stages.1.needs"
    assert "stage 'b' needs 'a' twice" in error.problem


def test_a_cycle_is_refused_naming_every_stage_of_it(tmp_path: Path) -> None:
    """a -> b -> c -> a: the cycle is spelt out, at the first stage that writes its needs."""
    error = load_error(
        tmp_path,
        stage("start"),
        stage("a", needs=["c"]),
        stage("b", needs=["a"]),
        stage("c", needs=["b"]),
    )

    assert error.field == "stages.1.needs"
    assert "stages 'a' -> 'c' -> 'b' -> 'a' need each other in a cycle" in error.problem


def test_a_cycle_through_a_default_need_is_refused_at_the_written_one(tmp_path: Path) -> None:
    """b needs c, and c (by default) needs b: the error points at b's needs."""
    error = load_error(tmp_path, stage("a"), stage("b", needs=["c"]), stage("c"))

    assert error.field == "stages.1.needs"
    assert "'b' -> 'c' -> 'b'" in error.problem


def test_back_to_a_stage_of_another_branch_names_both_stages_and_branches(
    tmp_path: Path,
) -> None:
    """integrate continues backend's branch: going back to docs crosses branches."""
    error = load_error(
        tmp_path,
        stage("plan"),
        stage("backend", needs=["plan"]),
        stage("docs", needs=["plan"]),
        stage("integrate", needs=["backend", "docs"], on_fail={"back_to": "docs"}),
    )

    assert error.field == "stages.3.on_fail.back_to"
    assert error.problem == (
        "stage 'integrate' (branch 'backend') goes back to stage 'docs', which runs on "
        "another branch ('docs'); on_fail.back_to must name an earlier stage of the same "
        "branch: backend, integrate"
    )


def test_back_to_the_fork_point_of_a_branch_is_refused(tmp_path: Path) -> None:
    """plan is on the main line; backend forked from it runs on its own branch."""
    error = load_error(
        tmp_path,
        stage("plan"),
        stage("backend", needs=["plan"], on_fail={"back_to": "plan"}),
        stage("docs", needs=["plan"]),
    )

    assert error.field == "stages.1.on_fail.back_to"
    assert "stage 'backend' (branch 'backend') goes back to stage 'plan'" in error.problem
    assert "another branch ('plan')" in error.problem


def test_back_to_a_later_stage_of_the_same_branch_is_refused(tmp_path: Path) -> None:
    """Earlier means earlier in the branch, whatever the file order."""
    error = load_error(
        tmp_path,
        stage("b", needs=["a"], on_fail={"back_to": "c"}),
        stage("a", needs=[]),
        stage("c", needs=["b"]),
    )

    assert error.field == "stages"
    assert "stage 'b': on_fail.back_to must name an earlier stage, not 'c'" in error.problem


# --- outline ---------------------------------------------------------------------------


def test_the_outline_of_a_sequential_pipeline_is_one_line() -> None:
    """No levels to show: the stages one after another."""
    assert graph(stage("a"), stage("b")).outline() == (
        "sequential: 2 stage(s) one after another in one session (a -> b)",
    )


def test_the_outline_shows_each_level_with_branches_forks_and_joins() -> None:
    """A level per line; each stage says how it starts; the bound is shown when given."""
    assert diamond().outline(max_parallel=2) == (
        "3 level(s), 4 branch(es), at most 2 at once; a stage starts once every stage it "
        "needs is accepted, so the stages of a level can run at once:",
        "  level 1: plan (main line)",
        "  level 2: backend (new branch, forked from plan), frontend (new branch, forked from "
        "plan), docs (new branch, forked from plan)",
        "  level 3: integrate (joins backend, frontend, docs on branch backend)",
    )


def test_the_outline_names_continued_branches_and_fresh_sessions() -> None:
    """A sole dependent continues its need's branch; needs: [] starts fresh."""
    lines = graph(
        stage("a"), stage("b", needs=["a"]), stage("c", needs=["a"]), stage("d", needs=[])
    ).outline()

    assert lines[1] == "  level 1: a (main line), d (new branch, fresh session)"
    assert lines[2] == "  level 2: b (new branch, forked from a), c (new branch, forked from a)"
    chain = graph(stage("a"), stage("b", needs=[]), stage("c", needs=["b"])).outline()
    assert chain[2] == "  level 2: c (continues branch b after b)"


def test_stages_built_by_other_callers_are_refused_for_repeats_and_unknown_back_to() -> None:
    """A Pipeline says so first; any other caller (a report read from disk) gets an error,
    never a wrong graph or an endless order."""

    class OnFail:
        def __init__(self, back_to: str | None) -> None:
            self.back_to = back_to

    class Plain:
        def __init__(self, name: str, needs: tuple[str, ...], back_to: str | None = None):
            self.name, self.needs, self.on_fail = name, needs, OnFail(back_to)

    with pytest.raises(ValueError, match="stage names must be unique; repeated: a"):
        StageGraph.of_stages([Plain("a", ()), Plain("a", ())])
    with pytest.raises(ValueError, match=r"on_fail\.back_to names 'z', which is not a stage"):
        StageGraph.of_stages([Plain("a", ()), Plain("b", ("a",), back_to="z")])
