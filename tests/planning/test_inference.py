"""Inference rules and the built-in detector: values with their source, read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate.phases.loading import task_from_mapping
from phasegate.planning.reference import plan_task


def inferred(workdir: Path, rules: list[Any], **item: Any) -> tuple[Any, str] | None:
    """The value and source one input with ``rules`` gets in ``workdir``."""
    spec = {"id": "x", "question": "X?", "header": "X", "infer": rules, **item}
    task = task_from_mapping(
        {"name": "t", "phases": [{"name": "w", "instructions": "{{ x }}"}], "inputs": [spec]}
    )
    entry = plan_task(task, workdir, environ={}).inferred.get("x")
    return (entry.value, entry.source) if entry is not None else None


@pytest.mark.parametrize(
    ("name", "text", "key", "expected"),
    [
        ("package.json", '{"name": "web", "scripts": {"test": "jest"}}', "scripts.test", "jest"),
        ("pyproject.toml", '[project]\nname = "svc"\n', "project.name", "svc"),
        ("config.yaml", "deploy:\n  regions: [eu, us]\n", "deploy.regions.1", "us"),
    ],
)
def test_a_value_is_read_at_a_dotted_key_of_json_toml_and_yaml(
    tmp_path: Path, name: str, text: str, key: str, expected: str
) -> None:
    """The file's suffix chooses the parser; digits index lists."""
    (tmp_path / name).write_text(text)
    found = inferred(tmp_path, [{"file_value": {"path": name, "key": key}}])
    assert found == (expected, f"file_value: {name} {key}")


def test_an_unparseable_file_or_a_missing_key_gives_no_value(tmp_path: Path) -> None:
    """Broken JSON, a key that is not there: the next rule is tried."""
    (tmp_path / "a.json").write_text("{broken")
    rules = [
        {"file_value": {"path": "a.json", "key": "name"}},
        {"file_value": {"path": "missing.toml", "key": "name"}},
        {"file_exists": "*.json", "value": "fallback"},
    ]
    assert inferred(tmp_path, rules) == ("fallback", "file_exists: a.json")


def test_git_branch_and_remote_url_are_read_from_gits_files(tmp_path: Path) -> None:
    """HEAD and config, without running git."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (tmp_path / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@example.com:o/r.git\n'
    )
    assert inferred(tmp_path, [{"git": "branch"}]) == ("feature/x", "git: branch")
    assert inferred(tmp_path, [{"git": "remote_url"}]) == (
        "git@example.com:o/r.git",
        "git: remote_url",
    )


def test_a_choice_takes_only_a_value_that_is_one_of_its_labels(tmp_path: Path) -> None:
    """Detected "Go" is not an option of [Python, Rust]: no value; "python" matches Python."""
    (tmp_path / "go.mod").write_text("module x\n")
    options = [{"label": "Python"}, {"label": "Rust"}]
    assert inferred(tmp_path, [{"detect": "language"}], type="choice", options=options) is None
    (tmp_path / "setup.py").write_text("")
    found = inferred(tmp_path, [{"detect": "languages"}], type="choice", options=options)
    assert found == ("Python", "detect languages: go.mod, setup.py")


@pytest.mark.parametrize(
    ("files", "languages", "tools"),
    [
        (["pyproject.toml", "uv.lock"], "Python", "uv"),
        (["package.json", "tsconfig.json", "pnpm-lock.yaml"], "TypeScript, JavaScript", "pnpm"),
        (["go.mod", "Makefile"], "Go", "Go modules, Make"),
        (["Cargo.toml", "Dockerfile"], "Rust", "Cargo, Docker"),
    ],
)
def test_the_detector_finds_languages_and_tools_from_marker_files(
    tmp_path: Path, files: list[str], languages: str, tools: str
) -> None:
    """In a fixed order, so the same project always gives the same lists."""
    for name in files:
        (tmp_path / name).write_text("")
    assert inferred(tmp_path, [{"detect": "languages"}])[0] == languages  # type: ignore[index]
    assert inferred(tmp_path, [{"detect": "tools"}])[0] == tools  # type: ignore[index]


def test_a_glob_never_reaches_outside_the_work_directory(tmp_path: Path) -> None:
    """A symlink to a folder outside is not followed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yml").write_text("")
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to(outside)
    assert inferred(work, [{"file_exists": "link/*.yml"}]) is None
    assert inferred(work, [{"file_value": {"path": "link/secret.yml", "key": "a"}}]) is None


def test_a_fifo_planted_as_git_config_does_not_hang_planning(tmp_path: Path) -> None:
    """An earlier agent can run mkfifo: reading git's remote must refuse it, not wait."""
    import os
    import subprocess
    import sys

    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    os.mkfifo(project / ".git" / "config")
    code = (
        "import sys\n"
        "from phasegate.phases.loading import task_from_mapping\n"
        "from phasegate.planning.reference import plan_task\n"
        "task = task_from_mapping({'name': 't', 'phases': [{'name': 'a', 'instructions': "
        "'Push to {{ remote }}.'}], 'inputs': [{'id': 'remote', 'question': 'Where?', "
        "'header': 'Remote', 'infer': [{'git': {'fact': 'remote_url'}}]}]})\n"
        "print(plan_task(task, sys.argv[1]).missing_info)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.stdout.strip() == "('remote',)", done.stderr
