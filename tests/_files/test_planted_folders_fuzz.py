"""Fuzzing the folders phasegate writes in: a batch's results folder and a work directory's
state folder, each path in them planted with anything (a folder, a file of any bytes, a link
out, a FIFO). Whatever is planted, the store and the state functions raise only phasegate's
errors, never block, and leave everything outside unchanged."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._files.idempotency import IdempotencyStore
from phasegate.errors import PhasegateError
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.batches.outcome import UnitOutcome
from phasegate.batches.results import ResultStore
from phasegate.batches.units import Unit
from phasegate.pipelines.state import (
    PipelineState,
    StageRecord,
    load_baseline,
    load_state,
    refuse_to_overwrite,
    save_baseline,
    save_state,
)
from tests.helpers.alarm import within

pytestmark = pytest.mark.fuzz

UNIT_ID = "item.gate.r1.0123456789ab"
RESULTS = ["units", "units/.incoming", f"units/.incoming/{UNIT_ID}.x", f"units/{UNIT_ID}",
           f"units/{UNIT_ID}/unit.json", ".lock", "batch.json"]  # fmt: skip
STATE = [".phasegate", ".phasegate/pipeline-state.json", ".phasegate/pipeline-baseline.json",
         ".phasegate/executions", ".phasegate/executions/x.json"]  # fmt: skip

planted = st.one_of(
    st.just(("missing", b"")),
    st.just(("folder", b"")),
    st.tuples(st.just("file"), st.binary(max_size=200)),
    st.sampled_from(
        [("file", b'{"outcome": {"verdict": "accepted"}}'), ("link-folder", b""),
         ("link-file", b""), ("link-nowhere", b""), ("fifo", b"")]
    ),
)  # fmt: skip


def plant(folder: Path, outside: Path, layout: dict[str, tuple[str, bytes]]) -> None:
    """Put each planted kind at its path, parents first; a path below a non-folder is skipped."""
    for relative in sorted(layout, key=lambda r: r.count("/")):
        path = folder / relative
        if not path.parent.is_dir() or path.parent.is_symlink():
            continue
        kind, data = layout[relative]
        if kind == "folder":
            path.mkdir()
        elif kind == "file":
            path.write_bytes(data)
        elif kind == "link-folder":
            path.symlink_to(outside, target_is_directory=True)
        elif kind == "link-file":
            path.symlink_to(outside / "keep.json")
        elif kind == "link-nowhere":
            path.symlink_to(outside / "made-through-a-link")
        elif kind == "fifo":
            os.mkfifo(path)


def tree(folder: Path) -> dict[str, bytes | None]:
    return {
        str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
    }


def fuzz(paths: list[str], exercise: Callable[[Path], None]) -> Callable[..., None]:
    @given(layout=st.fixed_dictionaries(dict.fromkeys(paths, planted)))
    def run(layout: dict[str, tuple[str, bytes]]) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            outside, folder = Path(scratch) / "outside", Path(scratch) / "folder"
            (outside / "units").mkdir(parents=True)
            (outside / "keep.json").write_text('{"outcome": {"verdict": "accepted"}}')
            folder.mkdir()
            plant(folder, outside, layout)
            before = tree(outside)
            with within(10), contextlib.suppress(PhasegateError):
                exercise(folder)
            assert tree(outside) == before

    return run


def _results(out: Path) -> None:
    unit = Unit.model_validate(
        {"id": UNIT_ID, "item": "item", "kind": "task", "name": "t", "definition": "/t.yaml",
         "digest": "d", "workdir": {"copy": "/w"}, "mode": "gate", "repeat": 1,
         "max_attempts": 1, "timeout": 1.0}
    )  # fmt: skip
    outcome = UnitOutcome(
        unit=unit, verdict="rejected", cost_usd=None, input_tokens=0, output_tokens=0,
        duration_ms=1, error=None, model_requests=None, worker="w", started_at="a",
        finished_at="b", files={"report.json": b"{}"},
    )  # fmt: skip
    store = ResultStore(out)
    with store.locked():
        store.write_manifest(name="b", file=out / "b.yaml", shard=None, total=1, units=[unit])
        store.verdicts()
        store.write(outcome)


def _state(work: Path) -> None:
    state = PipelineState(pipeline="p", digest="d", run_id="r", isolation="session",
                          stages=[StageRecord(index=1, name="a")])  # fmt: skip
    for attempt in (
        lambda: refuse_to_overwrite(work),
        lambda: load_state(work),
        lambda: load_baseline(work),
        lambda: save_state(work, state),
        lambda: save_baseline(work, WorkspaceSnapshot({"a": "h"})),
        lambda: IdempotencyStore(work / ".phasegate" / "executions", inside=work).find("k", "d"),
    ):
        with contextlib.suppress(PhasegateError):
            attempt()
    store = IdempotencyStore(work / ".phasegate" / "executions", inside=work)
    with store.holding("k"):
        store.remember("k", "d", {"exit": 0})


test_anything_planted_in_a_results_folder_changes_nothing_outside = fuzz(RESULTS, _results)
test_anything_planted_in_a_state_folder_changes_nothing_outside = fuzz(STATE, _state)
