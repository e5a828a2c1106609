"""pagent's pipeline file read as a phasegate pipeline (phasegate.phases.pagent)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.errors import PhasegateError, PipelineFileError
from phasegate.phases.checks import Criterion, DirFiles, FileExists, MinLines, Rubric, Said
from phasegate.phases.pagent import is_pagent, load_pipeline_file, pagent_pipeline
from phasegate.phases.pipeline import pipeline_from_mapping
from phasegate.phases.pipeline_yaml import pipeline_yaml


def pagent_file(work: Path, **changes: Any) -> Path:
    """pagent's state file in ``work/.claude``, its four prompts written, ``changes`` applied."""
    prompts = work / ".claude" / "prompts"
    prompts.mkdir(parents=True, exist_ok=True)
    for name in ("architect", "qa", "implementer", "verifier"):
        (prompts / f"{name}.txt").write_text(f"You are the {name}. Read PRD_PATH.\n")
    data: dict[str, Any] = {
        "stage": "architect",
        "max_stages": 0,
        "workflow_type": "prd-to-code",
        "prd_path": "/abs/prd.md",
        "iterations": {},
        "stages": [
            {"name": "architect", "prompt_file": ".claude/prompts/architect.txt",
             "exit_when": {"file_exists": "architecture.md", "min_lines": 5}},
            {"name": "qa", "prompt_file": ".claude/prompts/qa.txt",
             "exit_when": {"file_exists": "test-plan.md"}},
            {"name": "implementer", "prompt_file": ".claude/prompts/implementer.txt",
             "exit_when": {"directory_exists": "src", "min_files": 3}},
            {"name": "verifier", "prompt_file": ".claude/prompts/verifier.txt",
             "exit_when": {"promise_in_output": "DONE"}},
        ],
    }  # fmt: skip
    data.update(changes)
    path = work / ".claude" / "pagent-pipeline.json"
    path.write_text(json.dumps(data))
    return path


def test_each_pagent_condition_becomes_the_phasegate_checks_it_means(work: Path) -> None:
    """file_exists(+min_lines), directory_exists+min_files, promise_in_output → said."""
    pipeline = load_pipeline_file(pagent_file(work), workdir=work)
    assert pipeline.name == "prd-to-code"
    assert [stage.exit_when for stage in pipeline.stages] == [
        (FileExists(path="architecture.md"), MinLines(path="architecture.md", n=5)),
        (FileExists(path="test-plan.md"),),
        (DirFiles(path="src", min=3),),
        (Said(text="DONE"),),
    ]


def test_prompt_files_are_read_from_the_work_directory_with_prd_path_filled_in(
    work: Path,
) -> None:
    """As pagent's hook does (sed PRD_PATH → prd_path)."""
    pipeline = load_pipeline_file(pagent_file(work), workdir=work)
    assert pipeline.stages[0].prompt == "You are the architect. Read /abs/prd.md.\n"


def test_a_prompt_file_mentioning_a_template_variable_loads_unchanged(work: Path) -> None:
    """pagent prompts run as they are: {{ title }} is no phasegate input, and stays text."""
    path = pagent_file(work)
    architect = work / ".claude" / "prompts" / "architect.txt"
    architect.write_text("Use the mustache template {{ title }} for headings.\n")
    pipeline = load_pipeline_file(path, workdir=work)
    assert pipeline.stages[0].prompt == "Use the mustache template {{ title }} for headings.\n"


def test_max_stages_keeps_that_many_stages(work: Path) -> None:
    """pagent stops before the stage at index max_stages."""
    pipeline = load_pipeline_file(pagent_file(work, max_stages=2), workdir=work)
    assert pipeline.stage_names == ("architect", "qa")


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        ({"kind_we_do_not_know": 1}, "unknown condition kind 'kind_we_do_not_know'"),
        ({}, "has no exit condition"),
        ({"file_exists": "a", "promise_in_output": "X"}, "more than one condition kind"),
        ({"file_exists": "a", "min_files": 3}, "file_exists does not take min_files"),
        ({"directory_exists": "src", "min_files": -1}, "must be a whole number ≥ 0"),
    ],
    ids=["unknown-kind", "empty", "two-kinds", "foreign-option", "negative-count"],
)
def test_a_condition_pagent_would_let_pass_is_refused_naming_the_stage(
    work: Path, condition: dict[str, Any], problem: str
) -> None:
    """Exit code 2, the file, the stage's field and its name in the message."""
    stages = json.loads(pagent_file(work).read_text())["stages"]
    stages[1]["exit_when"] = condition
    path = pagent_file(work, stages=stages)
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline_file(path, workdir=work)
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert message.startswith(f"{path}: stages.1.exit_when")
    assert "stage 'qa'" in message and problem in message


@pytest.mark.parametrize("prompt_file", ["../outside.txt", "/etc/hostname", "link.txt"])
def test_a_prompt_file_outside_the_work_directory_is_refused(work: Path, prompt_file: str) -> None:
    """A path or a symbolic link leading out of the work directory reads nothing."""
    (work.parent / "outside.txt").write_text("secret\n")
    (work / "link.txt").symlink_to(work.parent / "outside.txt")
    stages = json.loads(pagent_file(work).read_text())["stages"]
    stages[0]["prompt_file"] = prompt_file
    path = pagent_file(work, stages=stages)
    with pytest.raises(PipelineFileError, match=r"stages\.0\.prompt_file: stage 'architect'"):
        load_pipeline_file(path, workdir=work)


def test_a_missing_prompt_file_is_an_error_not_a_prompt_saying_so(work: Path) -> None:
    """pagent would send "Prompt not found" as the prompt."""
    (work / ".claude" / "prompts").mkdir(parents=True)
    path = pagent_file(work)
    (work / ".claude" / "prompts" / "qa.txt").unlink()
    with pytest.raises(PipelineFileError, match=r"cannot read .*qa\.txt"):
        load_pipeline_file(path, workdir=work)


def test_pagent_is_told_by_its_run_state_or_its_file_name(work: Path) -> None:
    """What only pagent has decides: its run-state keys, or the name pagent-pipeline.json."""
    phasegate = {
        "name": "p",
        "stages": [{"name": "a", "prompt": "x", "exit_when": [{"said": "X"}]}],
    }
    assert not is_pagent(phasegate)
    assert is_pagent(json.loads(pagent_file(work).read_text()))
    bare = {"stages": [{"name": "a", "exit_when": {"file_exists": "a"}}]}
    assert not is_pagent(bare)
    assert is_pagent(bare, file=work / ".claude" / "pagent-pipeline.json")
    assert is_pagent({**bare, "iterations": {}})
    yaml_file = work / "p.yaml"
    yaml_file.write_text(yaml.safe_dump(phasegate))
    assert load_pipeline_file(yaml_file, workdir=work).name == "p"


def test_a_phasegate_stage_with_one_mis_shaped_exit_when_is_refused_as_phasegate(
    work: Path,
) -> None:
    """`exit_when: {file_exists: a.md}` is a slip in a phasegate file, not pagent's format:
    refused as phasegate refuses it, and max_revisions is never dropped silently."""
    file = work / "p3.yaml"
    file.write_text(
        "name: p3\nmax_revisions: 1\nstages:\n"
        "  - {name: one, prompt: go, exit_when: {file_exists: a.md}}\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline_file(file, workdir=work)
    assert caught.value.field is not None
    assert caught.value.field.startswith("stages.0.exit_when")
    assert "pagent" not in str(caught.value)


def test_a_pagent_file_with_an_unknown_top_level_key_is_refused_listing_the_known_ones(
    work: Path,
) -> None:
    """A key pagent never writes (here phasegate's max_revisions) is not dropped silently."""
    path = pagent_file(work, max_revisions=3)
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline_file(path, workdir=work)
    assert caught.value.exit_code == 2
    assert caught.value.field == "max_revisions"
    assert "unknown key(s) max_revisions" in caught.value.problem
    assert "stage, max_stages, iterations, prd_path" in caught.value.problem


def test_the_converted_yaml_loads_as_the_same_pipeline(work: Path) -> None:
    """Prompts inline, checks in file form: loading it again gives an equal pipeline."""
    pipeline = load_pipeline_file(pagent_file(work), workdir=work)
    text = pipeline_yaml(pipeline, header="converted from pagent")
    assert text.startswith("# converted from pagent\nname: prd-to-code\n")
    assert "  - said: DONE\n" in text
    assert "  - min_lines: {path: architecture.md, n: 5}\n" in text
    again = pipeline_from_mapping(yaml.safe_load(text))
    assert again == pipeline
    assert again.digest() == pipeline.digest()


pagent_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 5), hostile_text,
              st.sampled_from(["file_exists", "directory_exists", "promise_in_output",
                               "min_lines", "min_files", "a.md", "../x", ".claude/p.txt"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(
                                ["name", "prompt", "prompt_file", "exit_when", "file_exists",
                                 "min_lines", "directory_exists", "min_files",
                                 "promise_in_output", "x"]), inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@pytest.mark.fuzz
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stages=st.lists(pagent_values, max_size=4),
    max_stages=st.one_of(st.integers(-1, 5), hostile_text),
)
def test_any_pagent_data_loads_or_fails_with_a_phasegate_error(
    tmp_path: Path, stages: list[Any], max_stages: Any
) -> None:
    """Only PhasegateError subclasses escape, within the memory bound."""
    (tmp_path / ".claude").mkdir(exist_ok=True)
    (tmp_path / ".claude" / "p.txt").write_text("Do it.\n")
    data = {"stages": stages, "max_stages": max_stages}
    with bounded_memory(), contextlib.suppress(PhasegateError):
        pagent_pipeline(data, source=tmp_path / "pagent.json", workdir=tmp_path)


def test_a_stage_protect_survives_the_conversion_to_yaml() -> None:
    pipeline = pipeline_from_mapping({"name": "p", "stages": [
        {"name": "s", "prompt": "Go.", "exit_when": [{"file_exists": "a"}],
         "protect": ["tests/**"]},
    ]})  # fmt: skip
    again = pipeline_from_mapping(yaml.safe_load(pipeline_yaml(pipeline)))
    assert again.stages[0].protect == ("tests/**",)
    assert again.digest() == pipeline.digest()


def test_a_pagent_stage_s_depends_on_or_needs_become_its_needs(work: Path) -> None:
    """pagent v1's key (depends_on) or phasegate's (needs): qa and implementer both wait for
    architect, verifier for both; a stage without either waits for the one before it."""
    stages = json.loads(pagent_file(work).read_text())["stages"]
    stages[1]["depends_on"] = ["architect"]
    stages[2]["needs"] = ["architect"]
    stages[3]["depends_on"] = ["qa", "implementer"]
    pipeline = load_pipeline_file(pagent_file(work, stages=stages), workdir=work)

    assert [stage.needs for stage in pipeline.stages] == [
        None,
        ("architect",),
        ("architect",),
        ("qa", "implementer"),
    ]
    assert pipeline.graph.levels() == (("architect",), ("qa", "implementer"), ("verifier",))


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"depends_on": ["architect"], "needs": ["architect"]}, "stages.1", "not both"),
        ({"depends_on": "architect"}, "stages.1.depends_on", "must be a list of stage names"),
        ({"needs": [1]}, "stages.1.needs", "must be a list of stage names"),
        ({"depends_on": ["architekt"]}, "stages.1.needs", "needs 'architekt', which is not"),
        ({"depends_on": ["verifier"]}, "stages.1.needs", "need each other in a cycle"),
    ],
    ids=["both", "not-a-list", "not-names", "unknown", "cycle"],
)
def test_bad_pagent_dependencies_are_refused_naming_the_stage(
    work: Path, change: dict[str, Any], field: str, problem: str
) -> None:
    """Exit code 2, the file, the field and the stage."""
    stages = json.loads(pagent_file(work).read_text())["stages"]
    stages[1].update(change)
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline_file(pagent_file(work, stages=stages), workdir=work)
    assert caught.value.exit_code == 2
    assert caught.value.field == field
    assert "'qa'" in caught.value.problem and problem in caught.value.problem


def test_the_converted_yaml_writes_needs_only_where_it_is_not_the_stage_before(
    work: Path,
) -> None:
    """qa needs architect (the stage before): left out; implementer and verifier written."""
    stages = json.loads(pagent_file(work).read_text())["stages"]
    stages[1]["depends_on"] = ["architect"]
    stages[2]["depends_on"] = ["architect"]
    stages[3]["depends_on"] = ["implementer", "qa"]
    pipeline = load_pipeline_file(pagent_file(work, stages=stages), workdir=work)

    text = pipeline_yaml(pipeline)
    written = yaml.safe_load(text)["stages"]

    assert [stage.get("needs") for stage in written] == [
        None,
        None,
        ["architect"],
        ["qa", "implementer"],
    ]
    assert "  needs: [architect]\n" in text
    again = pipeline_from_mapping(yaml.safe_load(text))
    assert again.graph.levels() == pipeline.graph.levels()
    assert [again.graph.needs(n) for n in again.stage_names] == [
        pipeline.graph.needs(n) for n in pipeline.stage_names
    ]


def test_the_parallel_settings_survive_the_conversion_to_yaml_and_defaults_are_left_out() -> None:
    """max_parallel, on_conflict and on_branch_failure are written only when set."""
    stages = [
        {"name": "a", "prompt": "Go.", "exit_when": [{"file_exists": "a"}]},
        {"name": "b", "prompt": "Go.", "exit_when": [{"file_exists": "b"}], "needs": []},
    ]
    plain = pipeline_from_mapping({"name": "p", "stages": stages})
    bounded = pipeline_from_mapping(
        {"name": "p", "stages": stages, "max_parallel": 2, "on_conflict": "fail",
         "on_branch_failure": "finish"}
    )  # fmt: skip

    assert not {"max_parallel", "on_conflict", "on_branch_failure"} & set(
        yaml.safe_load(pipeline_yaml(plain))
    )
    again = pipeline_from_mapping(yaml.safe_load(pipeline_yaml(bounded)))
    assert again == bounded
    assert again.digest() == bounded.digest()


def test_inputs_toolset_sandbox_and_allow_tools_survive_the_conversion_to_yaml() -> None:
    """A phasegate pipeline read and written back by ``pipeline convert`` runs the same."""
    pipeline = pipeline_from_mapping({
        "name": "p",
        "inputs": [{"id": "area", "question": "Which area?", "header": "Area", "default": "api",
                    "ask_when": {"mode": "fix"}},
                   {"id": "mode", "question": "Which mode?", "header": "Mode"}],
        "toolset": ["Read", "Write", "Bash"],
        "sandbox": {"mode": "optional", "network": ["pypi.org"]},
        "stages": [
            {"name": "s", "prompt": "Work on {{ area }} ({{ mode }}).",
             "exit_when": [{"file_exists": "a"}], "allow_tools": ["Read", "Write"]},
            {"name": "t", "prompt": "Go.", "exit_when": [{"file_exists": "b"}]},
        ],
    })  # fmt: skip
    text = pipeline_yaml(pipeline)
    again = pipeline_from_mapping(yaml.safe_load(text))
    assert again == pipeline
    assert again.digest() == pipeline.digest()
    assert "allow_tools" not in yaml.safe_load(text)["stages"][1]
    sandboxed = pipeline_from_mapping({"name": "p", "sandbox": True, "stages": [
        {"name": "s", "prompt": "Go.", "exit_when": [{"file_exists": "a"}]},
    ]})  # fmt: skip
    assert pipeline_from_mapping(yaml.safe_load(pipeline_yaml(sandboxed))) == sandboxed


SEED_004 = (
    Path(__file__).resolve().parents[1] / "fixtures" / "seed004" / ".claude" / "pipeline.json"
)


def test_seed_004s_pipeline_json_loads_as_the_pipeline_its_sentences_mean(work: Path) -> None:
    """Its ``stage`` key makes it pagent's; its sentences become the checks a structured file
    would give, down to the digest a run's state is matched by."""
    pipeline = load_pipeline_file(SEED_004, workdir=work)
    structured = pipeline_from_mapping(
        {
            "name": "pipeline",
            "stages": [
                {"name": "architect", "prompt": "Read prd.md and create architecture.md",
                 "exit_when": [{"file_exists": "architecture.md"},
                               {"min_lines": {"path": "architecture.md", "n": 101}}]},
                {"name": "qa", "prompt": "Read architecture.md and create test-plan.md",
                 "exit_when": [{"file_exists": "test-plan.md"}]},
                {"name": "implementer",
                 "prompt": "Implement code/ based on architecture.md and test-plan.md",
                 "exit_when": [{"file_exists": "src/main.go"}, {"command": ["make", "test"]}]},
            ],
        }
    )  # fmt: skip
    assert [stage.exit_when for stage in pipeline.stages] == [
        stage.exit_when for stage in structured.stages
    ]
    assert pipeline.digest() == structured.digest()
    assert [reading.sentence for stage in pipeline.stages for reading in stage.sentences] == [
        "architecture.md exists and has >100 lines",
        "test-plan.md exists",
        "src/main.go exists and make test passes",
    ]


def test_a_pagent_sentence_in_none_of_the_forms_is_a_criterion_a_grader_judges(
    work: Path,
) -> None:
    """As in a phasegate file: the stage's ``exit_when`` is a one-criterion rubric."""
    data = json.loads(SEED_004.read_text())
    data["stages"][2]["exit_when"] = "the code is idiomatic Go"
    file = work / "pipeline.json"
    file.write_text(json.dumps(data))
    pipeline = load_pipeline_file(file, workdir=work)
    assert pipeline.stages[2].exit_when == (
        Rubric(criteria=(Criterion(text="the code is idiomatic Go"),)),
    )


def test_a_pagent_sentence_naming_a_path_outside_is_refused_naming_the_stage_field(
    work: Path,
) -> None:
    """As in a phasegate file: the field, the sentence, what is wrong."""
    data = json.loads(SEED_004.read_text())
    data["stages"][2]["exit_when"] = "../main.go exists"
    file = work / "pipeline.json"
    file.write_text(json.dumps(data))
    with pytest.raises(PipelineFileError) as raised:
        load_pipeline_file(file, workdir=work)
    assert raised.value.field == "stages.2.exit_when"
    assert "leaves the work directory" in str(raised.value)
