"""A parallel pipeline's page shows its stages as a graph: a column per level, each stage's
branch, status and needs (escaped), and each branch's tokens and cost, which add up; a
sequential pipeline, an older report and a malformed one add nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from phasegate.recording.page import render_page
from tests.helpers.recording_fixtures import pipeline_run


def usage(tokens_in: int, tokens_out: int, cost: float | None) -> dict[str, Any]:
    """A report's usage object."""
    return {"input_tokens": tokens_in, "output_tokens": tokens_out,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "cost_usd": cost}  # fmt: skip


def stage(name: str, branch: str, needs: list[str], tokens: int, **fields: Any) -> dict[str, Any]:
    """A report's stage with its branch and needs, ``tokens`` in and a tenth of them out."""
    return {"index": 0, "name": name, "branch": branch, "needs": needs, "status": "accepted",
            "usage": usage(tokens, tokens // 10, tokens / 1e6), **fields}  # fmt: skip


DIAMOND = [
    stage("plan", "plan", [], 1000),
    stage("backend", "backend", ["plan"], 2000),
    stage("frontend", "frontend", ["plan"], 3000),
    stage("docs", "docs", ["plan"], 500, status="rejected"),
    stage("integrate", "backend", ["backend", "frontend", "docs"], 4000),
]


def page(tmp_path: Path, stages: Any, **fields: Any) -> str:
    """The page of the hand-made pipeline recording whose report lists ``stages``."""
    folder = pipeline_run(tmp_path / "run")
    report = json.loads((folder / "report.json").read_text())
    report |= {"stages": stages, "usage": usage(10_600, 1_070, 0.0106),
               "unattributed_usage": usage(100, 20, 0.0001), **fields}  # fmt: skip
    (folder / "report.json").write_text(json.dumps(report))
    return render_page(folder)


def test_a_diamond_shows_three_levels_side_by_side_with_branches_and_needs(
    tmp_path: Path,
) -> None:
    """plan; backend, frontend, docs (each forked from plan); integrate joining them."""
    html = page(tmp_path, DIAMOND)
    graph = html[html.index('<section id="graph">') :]
    graph = graph[: graph.index("</section>")]

    levels = graph.split('<div class="level" data-level=')[1:]
    assert [level[:3] for level in levels] == ['"1"', '"2"', '"3"']
    stages = [re.findall(r'data-stage="([^"]+)"', level) for level in levels]
    assert stages == [["plan"], ["backend", "frontend", "docs"], ["integrate"]]
    assert (
        '<div class="node" data-stage="integrate" data-branch="backend"><strong>integrate'
        '</strong> <span class="status accepted">accepted</span><br>joins frontend, docs into '
        'branch backend<br><span class="needs">← needs backend, frontend, docs</span></div>'
    ) in graph
    assert "starts branch frontend, forked from plan" in graph
    assert '<span class="status rejected">rejected</span>' in graph
    assert "<script" not in html


def test_each_branch_s_usage_adds_up_to_the_stages_and_with_no_stage_to_the_run(
    tmp_path: Path,
) -> None:
    """backend holds backend and integrate; the branch rows sum to all stages, and all
    stages plus what no stage owns is the run's usage (as the report's figures are)."""
    html = page(tmp_path, DIAMOND)
    rows = dict(re.findall(r"<tr[^>]*><td>([^<]+)</td><td>[^<]*</td><td>(\d+) / \d+</td>", html))

    assert rows["branch backend"] == "6000"
    assert (
        int(rows["branch plan"])
        + int(rows["branch backend"])
        + int(rows["branch frontend"])
        + int(rows["branch docs"])
        == int(rows["all stages"])
        == 10_500
    )
    assert int(rows["all stages"]) + int(rows["no stage"]) == int(rows["run"]) == 10_600
    assert '<tr data-branch="backend"><td>branch backend</td><td>backend, integrate</td>' in html


def test_stage_names_from_the_report_are_escaped(tmp_path: Path) -> None:
    """A report is read from disk: its names are text, never markup."""
    stages = [
        stage("<b>plan</b>", "<b>plan</b>", [], 10),
        stage("a", "a", ["<b>plan</b>"], 10),
        stage("c", "c", ["<b>plan</b>"], 10),
    ]
    html = page(tmp_path, stages)

    assert "<b>plan</b>" not in html
    assert 'data-stage="&lt;b&gt;plan&lt;/b&gt;"' in html
    assert "← needs &lt;b&gt;plan&lt;/b&gt;" in html


def test_a_sequential_an_older_or_a_malformed_report_adds_no_graph(tmp_path: Path) -> None:
    """One branch: the timeline says it all; no branch or needs: written before them; a
    cycle or a wrong shape: not a report phasegate wrote."""
    sequential = [stage("a", "a", [], 1), stage("b", "a", ["a"], 1)]
    older = [{k: v for k, v in s.items() if k not in ("branch", "needs")} for s in DIAMOND]
    cycle = [stage("a", "a", ["b"], 1), stage("b", "b", ["a"], 1)]
    repeated = [stage("a", "a", [], 1), stage("a", "a", [], 1), stage("b", "b", [], 1)]
    for number, stages in enumerate([sequential, older, cycle, repeated, "x", [1], None]):
        assert 'id="graph"' not in page(tmp_path / str(number), stages), stages


def test_a_join_s_first_part_says_what_was_merged_into_it_as_text(tmp_path: Path) -> None:
    """The report's branches say what each merge changed and left in conflict: shown once,
    on the join's first visit, every name escaped; a value of the wrong shape is left out,
    and a part no branch record joins into shows nothing."""
    branches = [
        {"branch": "implement", "first": "review", "merged": ["<b>left</b>", "right", "gone"],
         "merged_files": {"<b>left</b>": ["<i>a.py</i>"], "right": [], "gone": 3},
         "conflicts": ["<u>shared.py</u>", 7]},
        {"branch": "implement", "first": "implement", "merged": []},
    ]  # fmt: skip
    html = page(tmp_path, DIAMOND, branches=branches)

    assert html.count('<div class="merged">') == 1
    review = html[html.index('id="part-1"') : html.index('id="part-2"')]
    merged = review[review.index('<div class="merged">') :]
    merged = merged[: merged.index("</div>")]
    assert "<b>" not in merged and "<i>" not in merged and "<u>" not in merged
    assert (
        '<li data-branch="&lt;b&gt;left&lt;/b&gt;">branch &lt;b&gt;left&lt;/b&gt;: files: '
        "&lt;i&gt;a.py&lt;/i&gt;</li>"
    ) in merged
    assert '<li data-branch="right">branch right: no file changed</li>' in merged
    assert '<li data-branch="gone">branch gone: its files are not in the report</li>' in merged
    assert "Left in conflict for it to resolve: &lt;u&gt;shared.py&lt;/u&gt;</p>" in merged
    malformed: list[Any] = ["x", [1], [{"first": "review", "merged": "left"}]]
    for number, branches in enumerate(malformed):
        assert 'class="merged"' not in page(tmp_path / str(number), DIAMOND, branches=branches)
