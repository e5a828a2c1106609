"""``phasegate pipeline check`` shows the stage graph; ``pipeline convert`` writes a pagent
file's dependencies as ``needs:``; a graph error is exit 2 naming the stages."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.helpers.cli import phasegate


def stage(name: str, **fields: object) -> dict[str, object]:
    """A valid stage: a prompt and one file_exists check, with ``fields``."""
    return {"name": name, "prompt": f"Write {name}.md.", "exit_when": [{"file_exists": "x"}],
            **fields}  # fmt: skip


def test_check_prints_the_levels_branches_and_joins_of_a_parallel_pipeline(
    tmp_path: Path,
) -> None:
    """The prompts on stdout as before; the graph on stderr, before the verdict line."""
    file = tmp_path / "p.yaml"
    file.write_text(yaml.safe_dump({"name": "p", "max_parallel": 2, "stages": [
        stage("plan"), stage("api", needs=["plan"]), stage("web", needs=["plan"]),
        stage("join", needs=["api", "web"]),
    ]}))  # fmt: skip

    done = phasegate("pipeline", "check", file)

    assert done.returncode == 0, done.stderr
    assert "Write api.md." in done.stdout and "level" not in done.stdout
    assert done.stderr.splitlines() == [
        "3 level(s), 3 branch(es), at most 2 at once; a stage starts once every stage it "
        "needs is accepted, so the stages of a level can run at once:",
        "  level 1: plan (main line)",
        "  level 2: api (new branch, forked from plan), web (new branch, forked from plan)",
        "  level 3: join (joins api, web on branch api)",
        f"{file}: valid pipeline 'p' with 4 stage(s)",
    ]


def test_a_cycle_is_exit_two_naming_the_file_the_field_and_the_stages(tmp_path: Path) -> None:
    """No traceback: the cycle spelt out."""
    file = tmp_path / "p.yaml"
    file.write_text(yaml.safe_dump({"name": "p", "stages": [
        stage("a", needs=["b"]), stage("b"),
    ]}))  # fmt: skip

    done = phasegate("pipeline", "check", file)

    assert done.returncode == 2
    assert f"{file}: stages.0.needs: stages 'a' -> 'b' -> 'a' need each other" in done.stderr
    assert "Traceback" not in done.stderr


def test_convert_writes_a_pagent_file_s_depends_on_as_needs(tmp_path: Path) -> None:
    """pagent v1's depends_on becomes needs:, written only where it is not the default."""
    (tmp_path / ".claude").mkdir()
    file = tmp_path / ".claude" / "pagent-pipeline.json"
    file.write_text(json.dumps({"stage": "architect", "stages": [
        {"name": "architect", "prompt": "A.", "exit_when": {"file_exists": "a.md"}},
        {"name": "qa", "prompt": "Q.", "exit_when": {"file_exists": "q.md"},
         "depends_on": ["architect"]},
        {"name": "security", "prompt": "S.", "exit_when": {"file_exists": "s.md"},
         "depends_on": ["architect"]},
        {"name": "implementer", "prompt": "I.", "exit_when": {"file_exists": "i.md"},
         "depends_on": ["qa", "security"]},
    ]}))  # fmt: skip

    done = phasegate("pipeline", "convert", file)

    assert done.returncode == 0, done.stderr
    written = yaml.safe_load(done.stdout)["stages"]
    assert [s.get("needs") for s in written] == [None, None, ["architect"], ["qa", "security"]]
    converted = tmp_path / "converted.yaml"
    converted.write_text(done.stdout)
    checked = phasegate("pipeline", "check", converted)
    assert checked.returncode == 0, checked.stderr
    assert "  level 3: implementer (joins qa, security on branch qa)" in checked.stderr
