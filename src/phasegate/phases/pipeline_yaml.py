"""A pipeline written back as a phasegate pipeline file (YAML), e.g. one read from pagent.

Prompts are written inline (a multi-line prompt as a literal block), checks in their file
form (:func:`~phasegate.phases.checks.check_as_file`), every setting only where it differs
from the default (inputs, toolset, sandbox, a stage's protect and allow_tools...): a stage's
``needs`` only where it is not the stage before it. Loading the text
again gives a pipeline that runs the same (equal, but for ``needs`` written as the default);
a stage that runs a phased ``task`` has it written inline.
"""

from __future__ import annotations

from typing import Any

import yaml

from phasegate.phases.checks import check_as_file
from phasegate.phases.pipeline import DEFAULT_MAX_REVISIONS, OnFail, Pipeline, Stage
from phasegate.phases.stage_graph import StageGraph


def pipeline_as_file(pipeline: Pipeline) -> dict[str, Any]:
    """``pipeline`` as the mapping a pipeline file holds."""
    data: dict[str, Any] = {"name": pipeline.name}
    if pipeline.description is not None:
        data["description"] = pipeline.description
    if pipeline.max_revisions != DEFAULT_MAX_REVISIONS:
        data["max_revisions"] = pipeline.max_revisions
    if pipeline.inputs:
        data["inputs"] = [
            i.model_dump(mode="json", by_alias=True, exclude_defaults=True) for i in pipeline.inputs
        ]
    if pipeline.toolset is not None:
        data["toolset"] = _FlowList(pipeline.toolset)
    if pipeline.sandbox is not None:
        data["sandbox"] = pipeline.sandbox.model_dump(mode="json", exclude_defaults=True) or "on"
    if pipeline.max_parallel is not None:
        data["max_parallel"] = pipeline.max_parallel
    if pipeline.on_conflict != "join":
        data["on_conflict"] = pipeline.on_conflict
    if pipeline.on_branch_failure != "stop":
        data["on_branch_failure"] = pipeline.on_branch_failure
    graph = pipeline.graph
    data["stages"] = [
        _stage(stage, _needs(graph, pipeline.stage_names, index))
        for index, stage in enumerate(pipeline.stages)
    ]
    return data


def _needs(graph: StageGraph, names: tuple[str, ...], index: int) -> list[str] | None:
    """The stage's needs, or None where they are the default (the stage before it)."""
    needs = graph.needs(names[index])
    return None if needs == names[index - 1 : index] else list(needs)


def pipeline_yaml(pipeline: Pipeline, *, header: str = "") -> str:
    """``pipeline`` as YAML text, after ``header`` lines written as comments."""
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    body = yaml.dump(
        pipeline_as_file(pipeline),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
    return comments + body


def _stage(stage: Stage, needs: list[str] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"name": stage.name}
    if needs is not None:
        data["needs"] = _FlowList(needs)
    if stage.prompt is not None:
        data["prompt"] = stage.prompt
    if stage.task is not None:
        data["task"] = stage.task.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if stage.exit_when:
        data["exit_when"] = [_inline(check_as_file(check)) for check in stage.exit_when]
    if stage.on_fail != OnFail():
        data["on_fail"] = stage.on_fail.model_dump(exclude_defaults=True)
    if stage.protect:
        data["protect"] = list(stage.protect)
    if stage.allow_tools is not None:
        data["allow_tools"] = _FlowList(stage.allow_tools)
    return data


def _inline(check: dict[str, Any]) -> dict[str, Any]:
    """A check whose settings are flat written on one line: ``min_lines: {path: a, n: 5}``."""
    return {
        kind: _Flow(value) if isinstance(value, dict) and _flat(value) else value
        for kind, value in check.items()
    }


def _flat(settings: dict[str, Any]) -> bool:
    return all(
        not isinstance(v, dict | list)
        or (isinstance(v, list) and not any(isinstance(item, dict | list) for item in v))
        for v in settings.values()
    )


class _Flow(dict[str, Any]):
    """A mapping written in flow style."""


class _FlowList(list[str]):
    """A list written in flow style: ``needs: [plan]``."""


class _Dumper(yaml.SafeDumper):
    """Safe YAML, with multi-line strings as literal blocks (prompts stay readable)."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself where a block cannot keep the text exact
    # (trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _flow(dumper: yaml.SafeDumper, value: _Flow) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)


def _flow_list(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(_Flow, _flow)
_Dumper.add_representer(_FlowList, _flow_list)
