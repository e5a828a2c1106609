"""examples/pipelines/parallel.yaml (plan -> backend, frontend, docs -> integrate) loads as
docs/pipelines.md shows it, with the graph it describes."""

from __future__ import annotations

import re
from pathlib import Path

from phasegate import load_pipeline

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pipelines" / "parallel.yaml"


def test_the_docs_show_the_example_file_as_it_is() -> None:
    """The page's YAML block is the file without its leading comment lines: they cannot drift."""
    page = (ROOT / "docs" / "pipelines.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```yaml\n(.*?)^```", page, re.S | re.M)
                if "parallel-feature" in b]  # fmt: skip
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    body = "".join(line for line in lines if not line.startswith("#"))

    assert block == body


def test_the_example_has_three_levels_and_a_join_on_backend_s_branch() -> None:
    """plan; backend, frontend and docs forked from it; integrate joining them, bounded to 3."""
    pipeline = load_pipeline(EXAMPLE)
    graph = pipeline.graph

    assert pipeline.max_parallel == 3
    assert (pipeline.on_conflict, pipeline.on_branch_failure) == ("join", "stop")
    assert graph.levels() == (("plan",), ("backend", "frontend", "docs"), ("integrate",))
    assert [graph.forks_from(n) for n in ("backend", "frontend", "docs")] == ["plan"] * 3
    assert graph.branch_of("integrate") == "backend"
    assert graph.joins("integrate") == ("frontend", "docs")
