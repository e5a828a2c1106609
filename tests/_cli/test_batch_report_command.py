"""``phasegate batch report``: batch output directories in, one report out, in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.batch_dirs import GOOD, LAZY, make_unit, run_into, write_manifest
from tests.helpers.cli import phasegate
from tests.helpers.recording_fixtures import gate_run

HOSTILE = "<script>alert(1)</script>|x"


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two shard directories of one batch: gate and single-query, two repeats each, one
    unit planned and never finished. The task's name is hostile markup."""
    root = tmp_path_factory.mktemp("batch")
    units = [make_unit("fix", mode, r, task=HOSTILE) for mode in ("gate", "single-query")
             for r in (1, 2)]  # fmt: skip
    unfinished = make_unit("fix", "unstructured", 1, task=HOSTILE)
    first, second = root / "shard-1", root / "shard-2"
    write_manifest(first, units[:2], shard="1/2", total_units=5)
    write_manifest(second, [*units[2:], unfinished], shard="2/2", total_units=5)
    for unit in units:
        run_into(first if unit in units[:2] else second, unit, LAZY if unit.repeat == 1 else GOOD)
    return first, second


@pytest.mark.cli
def test_json_merges_the_shards_whatever_their_order(shards: tuple[Path, Path]) -> None:
    """Exit 0; the same JSON for A B and B A; the unfinished unit is listed as missing."""
    first, second = shards

    done = phasegate("batch", "report", first, second, "--format", "json")
    again = phasegate("batch", "report", second, first, "--format", "json")

    assert done.returncode == 0, done.stderr
    assert done.stdout == again.stdout
    summary = json.loads(done.stdout)
    assert summary["summary_version"] == 11
    assert summary["batch"]["missing"] == [make_unit("fix", "unstructured", 1, task=HOSTILE).id]
    assert [d["shard"] for d in summary["batch"]["directories"]] == ["1/2", "2/2"]
    (row,) = summary["mode_comparison"]
    assert row["accepted"] == {"gate": 2, "single-query": 1}
    assert row["gate_minus_single_query"] == 0.5


@pytest.mark.cli
def test_html_is_written_to_a_file_with_every_untrusted_name_escaped(
    shards: tuple[Path, Path], tmp_path: Path
) -> None:
    """The batch section and the new columns are in the page; the task name stays text."""
    target = tmp_path / "report.html"

    done = phasegate("batch", "report", *shards, "-f", "html", "--output", target)

    assert done.returncode == 0, done.stderr
    page = target.read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;|x" in page
    assert '<section class="batch"><h2>Batch</h2>' in page
    assert "<td>units missing</td><td>1: fix.unstructured.r1." in page
    assert "<td>95 % interval</td><td>34–100 %</td>" in page


@pytest.mark.cli
def test_markdown_and_table_show_the_batch_and_the_intervals(shards: tuple[Path, Path]) -> None:
    """Markdown: the batch tables first, the difference's interval in the comparison."""
    markdown = phasegate("batch", "report", *shards, "--format", "markdown")
    table = phasegate("batch", "report", *shards)

    assert markdown.returncode == table.returncode == 0, markdown.stderr + table.stderr
    assert "### Batch directories" in markdown.stdout
    assert "| units planned | 5 |" in markdown.stdout
    assert "| +50 pts | −27 to +91 |" in markdown.stdout
    assert "Batch" in table.stdout and "\x1b[" not in table.stdout


@pytest.mark.cli
def test_a_directory_that_is_no_batch_output_exits_2_naming_it(tmp_path: Path) -> None:
    """No traceback: the path and what to name instead."""
    done = phasegate("batch", "report", tmp_path, "--format", "json")

    assert done.returncode == 2
    assert f"{tmp_path} is not a batch output directory" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.cli
def test_the_report_may_not_overwrite_a_result(shards: tuple[Path, Path]) -> None:
    """--output inside units/ or onto batch.json would destroy what it reports on."""
    first, _ = shards
    for target in (first / "batch.json", first / "units" / "report.json"):
        done = phasegate("batch", "report", first, "--output", target)
        assert done.returncode == 2
        assert "is part of the results in" in done.stderr
    assert json.loads((first / "batch.json").read_text())["shard"] == "1/2"


@pytest.mark.cli
def test_warnings_go_to_stderr_and_the_report_is_still_written(
    shards: tuple[Path, Path],
) -> None:
    """The same directory named twice is read once, with a warning."""
    first, _ = shards

    done = phasegate("batch", "report", first, first, "--format", "json")

    assert done.returncode == 0, done.stderr
    assert "phasegate: warning: " in done.stderr and "named twice" in done.stderr
    assert json.loads(done.stdout)["runs"] == 2


@pytest.mark.cli
def test_units_that_recorded_their_run_link_to_their_page_in_html_markdown_and_json(
    tmp_path: Path,
) -> None:
    """A unit with ``units/<id>/recording/`` gets its page written and linked (relative to
    the report's folder); a unit without one is not listed."""
    out = tmp_path / "out"
    recorded, plain = make_unit("fix", "gate", 1), make_unit("fix", "gate", 2)
    write_manifest(out, [recorded, plain])
    for unit in (recorded, plain):
        run_into(out, unit, GOOD)
    folder = gate_run(out / "units" / recorded.id / "recording", task="<b>fix</b>")
    reports = tmp_path / "reports"
    reports.mkdir()

    html = phasegate("batch", "report", out, "-f", "html", "-o", reports / "r.html")
    markdown = phasegate("batch", "report", out, "-f", "markdown", "-o", reports / "r.md")
    as_json = phasegate("batch", "report", out, "--format", "json")

    assert html.returncode == markdown.returncode == as_json.returncode == 0, html.stderr
    assert (folder / "index.html").is_file()
    href = f"../out/units/{recorded.id}/recording/index.html"
    assert f'<a href="{href}">{recorded.id}</a>' in (reports / "r.html").read_text()
    assert f"[{recorded.id}]({href})" in (reports / "r.md").read_text()
    (run,) = json.loads(as_json.stdout)["recordings"]
    assert run["page"] == str(folder / "index.html") and run["run_id"] == recorded.id
    assert plain.id not in json.dumps(json.loads(as_json.stdout)["recordings"])


@pytest.mark.cli
def test_a_damaged_recording_of_a_unit_is_a_warning_and_the_report_goes_on(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    unit = make_unit("fix", "gate", 1)
    write_manifest(out, [unit])
    run_into(out, unit, GOOD)
    folder = gate_run(out / "units" / unit.id / "recording")
    (folder / "checks.jsonl").write_text("{")

    done = phasegate("batch", "report", out, "--format", "json")

    assert done.returncode == 0, done.stderr
    assert "checks.jsonl: line 1: invalid JSON" in done.stderr
    assert "recordings" not in json.loads(done.stdout)
