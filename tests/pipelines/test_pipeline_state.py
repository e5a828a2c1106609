"""The pipeline state file (phasegate.pipelines.state): whole on disk, clear when unusable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import PipelineStateError, RunError, UsageError
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import STATE_DIR
from phasegate.phases.pipeline import pipeline_from_mapping
from phasegate.pipelines.state import (
    BASELINE_FILE,
    STATE_FILE,
    STATE_VERSION,
    CheckResult,
    PipelineState,
    Revision,
    StageRecord,
    load_baseline,
    load_state,
    save_baseline,
    save_state,
    stage_records,
    state_path,
)
from tests.helpers.read_only import read_only


def make_state(**fields: Any) -> PipelineState:
    """A running two-stage state (architect accepted, implement running), ``fields`` applied."""
    values: dict[str, Any] = {
        "pipeline": "prd-to-code",
        "digest": "0123456789abcdef",
        "run_id": "run-1",
        "isolation": "session",
        "stage": 1,
        "stages": [
            StageRecord(
                index=1,
                name="architect",
                status="accepted",
                attempts=2,
                visits=1,
                checks=[
                    CheckResult(
                        kind="min_lines",
                        description="architecture.md has at least 20 lines",
                        ok=True,
                        detail="architecture.md has 31 lines",
                    )
                ],
                tools={"Write": 2},
                files_changed=["architecture.md"],
            ),
            StageRecord(index=2, name="implement", status="running", visits=1),
        ],
        "session_id": "sess-1",
        "sessions": 1,
    }
    return PipelineState(**{**values, **fields})


def write_state(workdir: Path, data: Any) -> Path:
    """Write ``data`` (text as is, anything else as JSON) where the state file lives."""
    path = state_path(workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def saved_data(workdir: Path, **fields: Any) -> dict[str, Any]:
    """The JSON data of a valid saved state, with top-level ``fields`` replaced."""
    save_state(workdir, make_state())
    data: dict[str, Any] = json.loads(state_path(workdir).read_text(encoding="utf-8"))
    return {**data, **fields}


def load_error(workdir: Path) -> PipelineStateError:
    """Load the state of ``workdir`` expecting a PipelineStateError, and return it."""
    with pytest.raises(PipelineStateError) as caught:
        load_state(workdir)
    return caught.value


@pytest.fixture
def read_only_state_dir(tmp_path: Path) -> Iterator[Path]:
    """A work directory whose ``.phasegate`` directory cannot be written, even by root."""
    directory = tmp_path / STATE_DIR
    directory.mkdir()
    with read_only(directory):
        yield tmp_path


# --- saving and loading ----------------------------------------------------------------


def test_the_state_file_lives_in_the_phasegate_directory(tmp_path: Path) -> None:
    """``.phasegate/pipeline-state.json`` in the work directory."""
    assert state_path(tmp_path) == tmp_path / ".phasegate" / "pipeline-state.json"


def test_a_saved_state_loads_back_equal(tmp_path: Path) -> None:
    """Every field survives the round trip, nested records and revisions included."""
    state = make_state(
        revisions=[Revision(from_stage="implement", to_stage="architect", failures=["x"])],
        resumes=1,
        error=None,
    )

    save_state(tmp_path, state)

    assert load_state(tmp_path) == state
    assert load_state(tmp_path).current.name == "implement"


def test_saving_creates_the_phasegate_directory(tmp_path: Path) -> None:
    """A fresh work directory gets its .phasegate directory on the first save."""
    workdir = tmp_path / "fresh"
    workdir.mkdir()

    save_state(workdir, make_state())

    assert (workdir / STATE_DIR / STATE_FILE).is_file()


def test_saving_stamps_updated_at(tmp_path: Path) -> None:
    """save_state sets updated_at to a current UTC time, on the object and in the file."""
    state = make_state(updated_at="2000-01-01T00:00:00.000+00:00")
    before = datetime.now(UTC)
    before = before.replace(microsecond=before.microsecond // 1000 * 1000)  # ms precision

    save_state(tmp_path, state)

    stamped = datetime.fromisoformat(state.updated_at)
    assert stamped.utcoffset() == timedelta(0)
    assert before <= stamped <= datetime.now(UTC)
    assert load_state(tmp_path).updated_at == state.updated_at


def test_many_saves_leave_no_temporary_files(tmp_path: Path) -> None:
    """After 50 saves (and a baseline) .phasegate holds exactly the two files."""
    state = make_state()
    for attempt in range(50):
        state.current.attempts = attempt
        save_state(tmp_path, state)
    save_baseline(tmp_path, WorkspaceSnapshot({"a.py": "h1"}))

    assert sorted(p.name for p in (tmp_path / STATE_DIR).iterdir()) == sorted(
        [STATE_FILE, BASELINE_FILE]
    )
    assert load_state(tmp_path).current.attempts == 49


def test_a_reader_never_sees_a_partial_state_while_it_is_rewritten(tmp_path: Path) -> None:
    """300 saves of a growing state: every concurrent read parses, and never goes backwards."""
    state = make_state()
    save_state(tmp_path, state)
    path = state_path(tmp_path)
    done = threading.Event()
    seen: list[int] = []
    failures: list[str] = []

    def read_in_a_loop() -> None:
        while True:
            finished = done.is_set()
            text = path.read_text(encoding="utf-8")
            try:
                seen.append(len(json.loads(text)["revisions"]))
            except (json.JSONDecodeError, KeyError) as exc:
                failures.append(f"{exc!r} in {len(text)} characters")
            if finished:
                return

    reader = threading.Thread(target=read_in_a_loop)
    reader.start()
    try:
        for number in range(1, 301):
            state.revisions.append(
                Revision(from_stage="implement", to_stage="architect", failures=["x" * number])
            )
            save_state(tmp_path, state)
    finally:
        done.set()
        reader.join()

    assert failures == []
    assert seen
    assert seen == sorted(seen)
    assert seen[-1] == 300


# --- unusable state files --------------------------------------------------------------


def test_a_missing_state_file_says_there_is_nothing_to_resume(tmp_path: Path) -> None:
    """No state file: a PipelineStateError (a usage error) that says how to start a run."""
    error = load_error(tmp_path)

    assert isinstance(error, UsageError)
    assert error.exit_code == 2
    assert error.path == state_path(tmp_path)
    assert error.field is None
    assert "nothing to resume" in error.problem
    assert "start a new run" in error.problem


def test_invalid_json_names_the_line_and_column_and_how_to_start_over(tmp_path: Path) -> None:
    """A truncated file says where the JSON breaks and offers to start over."""
    write_state(tmp_path, '{\n  "pipeline": "prd-to-code",\n  "stages": [\n')

    error = load_error(tmp_path)

    assert error.field is None
    assert "not valid JSON" in error.problem
    assert "at line 4, column 1" in error.problem
    assert "start the pipeline over" in error.problem and error.option == "restart"
    assert str(error).startswith(f"{state_path(tmp_path)}: not valid JSON")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"digest": None}, "digest"),
        ({"isolation": "thread"}, "isolation"),
        ({"surprise": 1}, "surprise"),
    ],
    ids=["null-digest", "bad-isolation", "unknown-key"],
)
def test_valid_json_of_the_wrong_shape_names_the_field(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    """A wrong value or an unknown key is an error at that field, offering --restart."""
    write_state(tmp_path, saved_data(tmp_path, **change))

    error = load_error(tmp_path)

    assert error.field == field
    assert "start the pipeline over" in error.problem and error.option == "restart"


def test_a_wrong_nested_value_names_its_dotted_path(tmp_path: Path) -> None:
    """A stage record's bad status is reported at stages.1.status."""
    data = saved_data(tmp_path)
    data["stages"][1]["status"] = "stuck"
    write_state(tmp_path, data)

    assert load_error(tmp_path).field == "stages.1.status"


def test_a_missing_required_field_is_named(tmp_path: Path) -> None:
    """A state without run_id is an error at run_id."""
    data = saved_data(tmp_path)
    del data["run_id"]
    write_state(tmp_path, data)

    error = load_error(tmp_path)

    assert error.field == "run_id"
    assert error.problem.startswith("Field required;")


def test_a_state_file_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    """A JSON list is valid JSON but not a state."""
    write_state(tmp_path, [1, 2])

    error = load_error(tmp_path)

    assert error.field is None
    assert "start the pipeline over" in error.problem and error.option == "restart"


def test_a_state_from_a_future_version_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """state_version 2 is named, with this version's number and both ways out."""
    write_state(tmp_path, saved_data(tmp_path, state_version=STATE_VERSION + 1))

    error = load_error(tmp_path)

    assert error.field == "state_version"
    assert f"({STATE_VERSION + 1!r}, this one reads {STATE_VERSION})" in error.problem
    assert "start the pipeline over" in error.problem and error.option == "restart"


@pytest.mark.parametrize("stage", [2, 7, -1])
def test_a_current_stage_out_of_range_is_refused(tmp_path: Path, stage: int) -> None:
    """``stage`` must index one of the recorded stages."""
    write_state(tmp_path, saved_data(tmp_path, stage=stage))

    error = load_error(tmp_path)

    assert error.field == "stage"
    assert error.problem.startswith(f"{stage} is not a stage of this run;")


def test_a_state_with_no_stages_is_refused(tmp_path: Path) -> None:
    """An empty stages list has no current stage."""
    write_state(tmp_path, saved_data(tmp_path, stage=0, stages=[]))

    assert load_error(tmp_path).field == "stage"


# --- the baseline ----------------------------------------------------------------------


def test_a_baseline_round_trips(tmp_path: Path) -> None:
    """The snapshot a stage started from loads back with the same paths and hashes."""
    snapshot = WorkspaceSnapshot({"src/app.py": "h1", "notes.md": "h2"})

    save_baseline(tmp_path, snapshot)

    assert load_baseline(tmp_path) == snapshot
    assert (tmp_path / STATE_DIR / BASELINE_FILE).is_file()


def test_an_empty_baseline_round_trips(tmp_path: Path) -> None:
    """An empty work directory's snapshot is a valid baseline."""
    save_baseline(tmp_path, WorkspaceSnapshot({}))

    assert load_baseline(tmp_path).files == {}


def test_a_missing_baseline_is_refused(tmp_path: Path) -> None:
    """No baseline file: a PipelineStateError naming the stage baseline."""
    with pytest.raises(PipelineStateError, match="no stage baseline here"):
        load_baseline(tmp_path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a.py": "h1",', "not valid JSON"),
        ('{"a.py": 1}', "expected a mapping of path to hash"),
        ('["a.py"]', "expected a mapping of path to hash"),
    ],
    ids=["truncated", "number-hash", "list"],
)
def test_a_corrupt_baseline_is_refused_with_how_to_start_over(
    tmp_path: Path, text: str, problem: str
) -> None:
    """A baseline that is not a mapping of path to hash says so and offers to start over."""
    path = tmp_path / STATE_DIR / BASELINE_FILE
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")

    with pytest.raises(PipelineStateError) as caught:
        load_baseline(tmp_path)

    assert caught.value.path == path
    assert problem in caught.value.problem
    assert caught.value.option == "restart"


# --- an unwritable work directory ------------------------------------------------------


def test_saving_into_a_read_only_directory_is_a_run_error(read_only_state_dir: Path) -> None:
    """The write fails as a RunError naming the file, and leaves no temporary file behind."""
    with pytest.raises(RunError) as caught:
        save_state(read_only_state_dir, make_state())

    assert str(state_path(read_only_state_dir)) in str(caught.value)
    assert "writable" in str(caught.value)
    assert list((read_only_state_dir / STATE_DIR).iterdir()) == []


def test_saving_a_baseline_into_a_read_only_directory_is_a_run_error(
    read_only_state_dir: Path,
) -> None:
    """save_baseline fails the same way."""
    with pytest.raises(RunError, match="check the work directory is writable"):
        save_baseline(read_only_state_dir, WorkspaceSnapshot({"a.py": "h1"}))


def test_saving_where_the_state_directory_is_a_file_is_a_run_error(tmp_path: Path) -> None:
    """A file called .phasegate cannot hold the state: RunError, even as root."""
    (tmp_path / STATE_DIR).write_text("not a directory", encoding="utf-8")

    with pytest.raises(RunError, match="cannot write"):
        save_state(tmp_path, make_state())


def test_a_new_run_s_records_carry_each_stage_s_branch_and_needs() -> None:
    """From the stage graph: plan on the main line, api and web forked from it, join on
    api's branch; the saved state keeps them."""
    pipeline = pipeline_from_mapping({"name": "p", "stages": [
        {"name": n, "prompt": "Go.", "exit_when": [{"file_exists": "x"}], **extra}
        for n, extra in [("plan", {}), ("api", {"needs": ["plan"]}), ("web", {"needs": ["plan"]}),
                         ("join", {"needs": ["web", "api"]})]
    ]})  # fmt: skip

    records = stage_records(pipeline)

    assert [(r.index, r.name, r.branch, r.needs, r.status) for r in records] == [
        (1, "plan", "plan", [], "pending"),
        (2, "api", "api", ["plan"], "pending"),
        (3, "web", "web", ["plan"], "pending"),
        (4, "join", "api", ["api", "web"], "pending"),
    ]


def test_a_state_written_before_branches_loads_with_no_branch_or_needs(tmp_path: Path) -> None:
    """A run started by an older phasegate resumes: its records say null."""
    save_state(tmp_path, make_state())
    path = state_path(tmp_path)
    data = json.loads(path.read_text())
    for record in data["stages"]:
        del record["branch"], record["needs"]
    path.write_text(json.dumps(data))

    assert [(r.branch, r.needs) for r in load_state(tmp_path).stages] == [(None, None)] * 2
