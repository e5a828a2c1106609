"""Fuzzing the task and pipeline loaders: whatever the file holds, only phasegate's own
errors escape (TaskFileError, PipelineFileError), and memory stays under the bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.errors import PhasegateError
from phasegate.phases.loading import load_task
from phasegate.phases.pipeline import load_pipeline
from phasegate.prompts.phased import phased_prompt

pytestmark = [
    pytest.mark.fuzz,
    pytest.mark.usefixtures("bundled_prompts"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # jsonschema on odd $schema
]
FIXTURE_SCOPE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

REFS = [
    "#",
    "#/",
    "#/$defs/x",
    "#/properties",
    "#/type/0",
    "#x",
    "b.json",
    "b.json#/$defs/x",
    "sub/c.yaml",
    "../outside.json",
    "/etc/passwd",
    "file:///etc/passwd",
    "http://127.0.0.1:1/s",
    "https://json-schema.org/draft/2020-12/schema",
    "urn:x",
    "%",
    "http://[::1",
    "",
]
KEYS = [
    "name",
    "description",
    "phases",
    "instructions",
    "marker",
    "require_tools",
    "require_changes",
    "output_schema",
    "claims_files",
    "structured_output",
    "completion",
    "on_reject",
    "stages",
    "prompt",
    "prompt_file",
    "task",
    "exit_when",
    "on_fail",
    "retry",
    "back_to",
    "max_revisions",
    "json_valid",
    "file_exists",
    "min_lines",
    "command",
    "path",
    "schema",
    "n",
    "argv",
    "type",
    "properties",
    "required",
    "items",
    "$ref",
    "$defs",
    "$id",
    "$schema",
    "allOf",
    "not",
    "definitions",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(REFS)
    | st.sampled_from(["object", "string", "array", "marker", "tool", "either", "a.md"])
)
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=30,
)


@st.composite
def alias_bombs(draw: st.DrawFn) -> str:
    """YAML whose aliases fan out ``fanout`` ways, ``levels`` deep, under a task-like key."""
    levels = draw(st.integers(min_value=1, max_value=14))
    fanout = draw(st.integers(min_value=1, max_value=12))
    key = draw(st.sampled_from(["phases", "stages", "output_schema", "schema", "x"]))
    lines = [f"a0: &a0 {json.dumps(draw(scalars))}"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * fanout) + "]" for n in range(1, levels)]
    return "\n".join(lines) + f"\n{key}: *a{levels - 1}\nname: bomb\n"


def files(directory: Path) -> None:
    """Files the fuzzed data may name: schemas that refer on, one that loops, one broken."""
    (directory / "sub").mkdir(exist_ok=True)
    (directory / "b.json").write_text('{"$defs": {"x": {"$ref": "sub/c.yaml"}}, "type": "object"}')
    (directory / "sub" / "c.yaml").write_text("$ref: '../b.json#/$defs/x'\n")
    (directory / "broken.json").write_text("{")
    (directory / "a.md").write_text("Do it.\n")


def task_document(draw_value: Any) -> str:
    """A task-shaped document holding the drawn value somewhere a schema can be."""
    phase = {"name": "out", "instructions": "x", "output_schema": draw_value}
    return json.dumps({"name": "t", "phases": [{"name": "w", "instructions": "x"}, phase]})


def only_phasegate_errors(path: Path, *, pipeline: bool) -> None:
    """Load ``path``; a loaded task must also give a prompt."""
    with bounded_memory():
        try:
            loaded = load_pipeline(path) if pipeline else load_task(path)
        except PhasegateError:
            return
        if not pipeline:
            phased_prompt(loaded)  # type: ignore[arg-type]


@FIXTURE_SCOPE
@given(text=hostile_text, suffix=st.sampled_from([".yaml", ".json"]), pipeline=st.booleans())
def test_any_text_as_a_task_or_pipeline_file_raises_only_phasegate_errors(
    tmp_path: Path, text: str, suffix: str, pipeline: bool
) -> None:
    """Broken syntax, control characters, lone surrogates, empty files."""
    path = tmp_path / f"file{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    only_phasegate_errors(path, pipeline=pipeline)


@FIXTURE_SCOPE
@given(value=values, as_yaml=st.booleans(), pipeline=st.booleans())
def test_any_data_shape_raises_only_phasegate_errors(
    tmp_path: Path, value: Any, as_yaml: bool, pipeline: bool
) -> None:
    """Task- and pipeline-like mappings of any shape, with schemas and $refs in them."""
    files(tmp_path)
    path = tmp_path / ("file.yaml" if as_yaml else "file.json")
    text = yaml.safe_dump(value) if as_yaml else json.dumps(value)
    path.write_text(text, encoding="utf-8")
    only_phasegate_errors(path, pipeline=pipeline)


@FIXTURE_SCOPE
@given(schema=values)
def test_any_output_schema_raises_only_task_file_errors(tmp_path: Path, schema: Any) -> None:
    """Whatever stands in output_schema (refs to files, loops, URLs), the loader answers."""
    files(tmp_path)
    path = tmp_path / "task.json"
    path.write_text(task_document(schema), encoding="utf-8")
    only_phasegate_errors(path, pipeline=False)


@FIXTURE_SCOPE
@given(
    value=values,
    depth=st.integers(min_value=0, max_value=3000),
    opener=st.sampled_from(["[", "{a: ", '{"a": ', "- "]),
    pipeline=st.booleans(),
)
def test_deep_nesting_raises_only_phasegate_errors(
    tmp_path: Path, value: Any, depth: int, opener: str, pipeline: bool
) -> None:
    """Nesting to 3,000 levels, in JSON and YAML flow and block styles."""
    inner = json.dumps(value)
    if opener == "- ":
        text = "".join("  " * level + "- \n" for level in range(depth)) + "  " * depth + inner
        name = "file.yaml"
    else:
        closer = "]" if opener == "[" else "}"
        text = opener * depth + inner + closer * depth
        name = "file.json" if opener.startswith('{"') or opener == "[" else "file.yaml"
    path = tmp_path / name
    path.write_text(f'{{"phases": {text}}}' if name.endswith("json") else f"phases: {text}\n")
    only_phasegate_errors(path, pipeline=pipeline)


@FIXTURE_SCOPE
@given(text=alias_bombs(), pipeline=st.booleans())
def test_alias_bombs_raise_only_phasegate_errors_in_bounded_memory(
    tmp_path: Path, text: str, pipeline: bool
) -> None:
    """Up to 12**13 values behind a few lines: refused before they expand."""
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    only_phasegate_errors(path, pipeline=pipeline)


PATHS = [
    "a.md",
    "b.json",
    "sub/c.yaml",
    "broken.json",
    "../outside.md",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/dev/zero",
    "",
    ".",
    "sub",
    "a.md\x00",
    "file.yaml",
    "~/x",
]


@FIXTURE_SCOPE
@given(
    prompt_file=st.sampled_from(PATHS) | st.text(max_size=10),
    schema=values | st.sampled_from(PATHS),
    task=st.sampled_from(PATHS) | values,
)
def test_any_files_a_pipeline_names_raise_only_pipeline_file_errors(
    tmp_path: Path, prompt_file: str, schema: Any, task: Any
) -> None:
    """Prompt files, json_valid schemas and stage tasks pointing anywhere, at anything."""
    files(tmp_path)
    check = {"json_valid": {"path": "o.json", "schema": schema}}
    stages = [
        {"name": "a", "prompt_file": prompt_file, "exit_when": [check]},
        {"name": "b", "task": task},
    ]
    path = tmp_path / "file.json"
    path.write_text(json.dumps({"name": "p", "stages": stages}), encoding="utf-8")
    only_phasegate_errors(path, pipeline=True)
