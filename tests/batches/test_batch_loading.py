"""Loading batch files: units expanded in order, ids stable, shards a partition, bad files named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from phasegate.batches.loading import load_batch
from phasegate.batches.sources import CopySource, GitSource
from phasegate.errors import BatchFileError, TaskFileError, UsageError
from phasegate.phases.pipeline import Pipeline
from tests.helpers.batches import WriteBatch

ITEM = {"task": "example/task.yaml", "workdir": "example/project"}


def test_an_item_expands_into_one_unit_per_mode_and_repeat_in_file_order(
    write_batch: WriteBatch,
) -> None:
    path = write_batch([{**ITEM, "modes": ["gate", "unstructured"], "repeats": 2}])
    units = load_batch(path).units
    assert [(u.item, u.mode, u.repeat) for u in units] == [
        ("example", "gate", 1),
        ("example", "gate", 2),
        ("example", "unstructured", 1),
        ("example", "unstructured", 2),
    ]
    assert len({u.id for u in units}) == 4
    assert units[0].id.startswith("example.gate.r1.")


def test_defaults_apply_to_every_item_that_does_not_set_its_own(write_batch: WriteBatch) -> None:
    path = write_batch(
        [ITEM, {**ITEM, "name": "other", "repeats": 1, "timeout": 5}],
        defaults={"repeats": 3, "timeout": 60, "max_cost": 0.5, "model": "m"},
    )
    units = load_batch(path).units
    assert [u.item for u in units] == ["example"] * 3 + ["other"]
    assert {(u.timeout, u.max_cost, u.model) for u in units[:3]} == {(60, 0.5, "m")}
    assert (units[3].timeout, units[3].max_cost) == (5, 0.5)


def test_a_unit_id_does_not_depend_on_where_the_batch_lives(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    first = load_batch(write_batch([ITEM])).units
    moved = shutil.copytree(tmp_path, tmp_path.parent / f"{tmp_path.name}-moved")
    again = load_batch(moved / "batch.yaml").units
    assert [u.id for u in again] == [u.id for u in first]
    assert again[0].definition != first[0].definition


def test_a_unit_id_changes_with_the_task_but_not_with_limits(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    before = load_batch(write_batch([ITEM])).units[0].id
    assert load_batch(write_batch([{**ITEM, "timeout": 9, "max_cost": 1}])).units[0].id == before
    task = tmp_path / "example" / "task.yaml"
    task.write_text(task.read_text().replace("name:", "name: changed-", 1))
    assert load_batch(write_batch([ITEM])).units[0].id != before


def test_shards_split_the_units_so_each_is_in_exactly_one(write_batch: WriteBatch) -> None:
    path = write_batch([{**ITEM, "modes": ["gate", "single-query", "unstructured"], "repeats": 5}])
    batch = load_batch(path)
    shards = [batch.shard(index, 4) for index in range(1, 5)]
    ids = [unit.id for shard in shards for unit in shard]
    assert sorted(ids) == sorted(unit.id for unit in batch.units)
    assert len(ids) == len(set(ids)) == 15


def test_a_glob_makes_one_item_per_task_file_named_after_it(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    write_batch([ITEM])  # lays out the example
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("alpha", "beta"):
        shutil.copy(tmp_path / "example" / "task.yaml", tasks / f"{name}.yaml")
    path = write_batch([{"task": "tasks/*.yaml", "workdir": "example/project"}])
    assert [u.item for u in load_batch(path).units] == ["alpha", "beta"]


def test_a_task_file_named_like_a_windows_device_gives_its_item_a_name_windows_can_hold(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    write_batch([ITEM])  # lays out the example
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("con", "aux2"):
        shutil.copy(tmp_path / "example" / "task.yaml", tasks / f"{name}.yaml")
    path = write_batch([{"task": "tasks/*.yaml", "workdir": "example/project"}])

    units = load_batch(path).units

    assert [u.item for u in units] == ["aux2", "con-item"]
    assert all(not u.id.lower().startswith("con.") for u in units)


def test_paths_are_resolved_against_the_batch_file(write_batch: WriteBatch, tmp_path: Path) -> None:
    unit = load_batch(write_batch([{**ITEM, "model_script": "example/model.yaml"}])).units[0]
    assert unit.workdir == CopySource(copy=str(tmp_path / "example" / "project"))
    assert unit.model_script == str(tmp_path / "example" / "model.yaml")
    assert unit.definition == str(tmp_path / "example" / "task.yaml")


def test_a_cli_model_script_serves_items_that_name_none(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    script = tmp_path / "example" / "model.yaml"
    unit = load_batch(write_batch([ITEM]), model_script=script).units[0]
    assert unit.model_script == str(script)


def test_a_git_source_keeps_a_url_and_resolves_a_local_repository(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    url = {"git": "https://example.com/r.git", "ref": "v1"}
    local = {"git": "example/project", "ref": "main"}
    units = load_batch(
        write_batch([{**ITEM, "workdir": url}, {**ITEM, "name": "b", "workdir": local}])
    ).units
    assert units[0].workdir == GitSource(git="https://example.com/r.git", ref="v1")
    assert units[1].workdir == GitSource(git=str(tmp_path / "example" / "project"), ref="main")


@pytest.mark.parametrize(
    ("items", "field", "problem"),
    [
        ([{**ITEM, "workdir": "nowhere"}], "items.0.workdir", "is not a directory"),
        ([{"task": "example/task.yaml"}], "items.0.workdir", "is required"),
        ([{**ITEM, "task": "missing.yaml"}], "items.0.task", "is not a file"),
        ([{**ITEM, "task": "none/*.yaml"}], "items.0.task", "matches no file"),
        ([{**ITEM, "model_script": "nope.yaml"}], "items.0.model_script", "is not a file"),
        ([ITEM, ITEM], "items.1", "a second item is named 'example'"),
        ([{**ITEM, "modes": ["fast"]}], "items.0.modes.0", "gate"),
        ([{**ITEM, "repeats": 0}], "items.0.repeats", "greater than or equal to 1"),
        ([{**ITEM, "repeats": True}], "items.0.repeats", "whole number, not true (true or"),
        ([{**ITEM, "max_attempts": False}], "items.0.max_attempts", "whole number, not false"),
        ([{**ITEM, "repeats": "3"}], "items.0.repeats", "whole number, not the text '3'"),
        ([{**ITEM, "timeout": True}], "items.0.timeout", "must be a number, not true"),
        ([{**ITEM, "max_cost": False}], "items.0.max_cost", "must be a number, not false"),
        ([{**ITEM, "pipeline": "p.yaml"}], "items.0", "exactly one of task: or pipeline:"),
        ([{**ITEM, "isolation": "session"}], "items.0", "isolation: is for pipelines"),
        ([{**ITEM, "name": "a.b"}], "items.0.name", "should match pattern"),
        ([{**ITEM, "name": "Nul"}], "items.0.name", "a name Windows keeps for a device"),
        ([{**ITEM, "name": "com1"}], "items.0.name", "choose another, such as com1-item"),
        ([{**ITEM, "colour": "red"}], "items.0.colour", "is not a known key"),
        ([{**ITEM, "workdir": {"git": "--upload-pack=x"}}], "items.0.workdir", "cannot start"),
        ([], "items", "must not be empty"),
    ],
)
def test_a_bad_batch_file_names_the_file_and_the_field(
    write_batch: WriteBatch, items: list[dict[str, object]], field: str, problem: str
) -> None:
    path = write_batch(items)
    with pytest.raises(BatchFileError) as raised:
        load_batch(path)
    assert raised.value.path == path
    assert raised.value.field == field
    assert problem in raised.value.problem
    assert raised.value.exit_code == 2


def test_a_task_that_does_not_load_is_named_by_its_own_file(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    path = write_batch([ITEM])
    (tmp_path / "example" / "task.yaml").write_text("name: x\nphases: []\n")
    with pytest.raises(TaskFileError) as raised:
        load_batch(path)
    assert raised.value.path == tmp_path / "example" / "task.yaml"


def test_a_task_with_required_inputs_is_refused_at_load_naming_them(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    """Nothing in a batch gives input values: refused before any unit starts."""
    batch = write_batch([ITEM])
    task = tmp_path / "example" / "task.yaml"
    task.write_text(
        "name: t\nphases:\n  - name: a\n    instructions: For {{ team }}, keep {{ tone }}.\n"
        "inputs:\n  - {id: team, question: 'Which team?', header: Team}\n"
        "  - {id: tone, question: 'Which tone?', header: Tone, default: calm}\n"
    )
    with pytest.raises(BatchFileError, match=r"required inputs without a default \(team\)"):
        load_batch(batch)


def test_a_required_input_whose_condition_the_defaults_fail_is_not_refused(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    """`reviewer` applies only to a strict tone; the default tone is calm, so it is never
    required, and the batch loads; with a strict default it is named."""
    batch = write_batch([ITEM])
    task = tmp_path / "example" / "task.yaml"
    text = (
        "name: t\nphases:\n  - name: a\n    instructions: Keep {{ tone }} {{ reviewer }}.\n"
        "inputs:\n  - {id: tone, question: 'Which tone?', header: Tone, default: calm}\n"
        "  - {id: reviewer, question: 'Who reviews?', header: Reviewer,"
        " ask_when: {tone: strict}}\n"
    )
    task.write_text(text)
    assert load_batch(batch)
    task.write_text(text.replace("default: calm", "default: strict"))
    with pytest.raises(BatchFileError, match=r"required inputs without a default \(reviewer\)"):
        load_batch(batch)


def test_max_parallel_bounds_every_pipeline_of_a_batch_and_leaves_unit_ids_alone(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    """The caller's bound replaces each pipeline's; tasks and unit ids are untouched."""
    (tmp_path / "p.yaml").write_text(
        "name: p\nmax_parallel: 4\nstages:\n"
        "  - {name: a, prompt: Do it., exit_when: [{file_exists: a.md}]}\n"
    )
    path = write_batch([ITEM, {"pipeline": "p.yaml", "workdir": "example/project"}])
    plain = load_batch(path)
    bounded = load_batch(path, max_parallel=2)

    pipeline = bounded.definitions["p"]
    assert isinstance(pipeline, Pipeline) and pipeline.max_parallel == 2
    assert bounded.definitions["example"] == plain.definitions["example"]
    assert [u.id for u in bounded.units] == [u.id for u in plain.units]


def test_a_max_parallel_below_one_is_refused(write_batch: WriteBatch) -> None:
    """Zero stages at once would run nothing."""
    with pytest.raises(UsageError, match="max_parallel must be at least 1, not 0"):
        load_batch(write_batch([ITEM]), max_parallel=0)
