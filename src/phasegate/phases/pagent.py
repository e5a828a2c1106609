"""pagent's pipeline file (``.claude/pagent-pipeline.json``), read as a phasegate pipeline.

pagent keeps its pipeline in one JSON file: ``stages[]`` with ``name``, ``prompt_file`` (or
``prompt``) and ``exit_when``, one object holding one condition kind and its options, plus
run state (``stage``, ``max_stages``, ``iterations``, ``prd_path``, ...). Each stage becomes
a phasegate :class:`~phasegate.phases.pipeline.Stage`:

* ``{"file_exists": F, "min_lines": N}`` → ``file_exists: F`` and, for N > 0,
  ``min_lines: {path: F, n: N}``;
* ``{"directory_exists": D, "min_files": N}`` → ``dir_files: {path: D, min: N}``;
* ``{"promise_in_output": T}`` → ``said: T``: the agent must say the promise in its own
  text during the stage, where pagent greps the whole transcript (so a promise written into
  a file and read back, or said in an earlier stage, would pass there and not here).

A stage may name the stages it waits for, as ``depends_on`` (the key pagent's first, Go
version gave each agent in its config, from which it ran "dependency levels" in parallel) or
``needs``: a list of stage names, which becomes the stage's ``needs`` (one of the two, not
both). Without either a stage waits for the one before it, as pagent runs them.

An ``exit_when`` written as a sentence, as ADR-003's ``.claude/pipeline.json`` writes them
(``"architecture.md exists and has >100 lines"``), is read into the checks it names by
:mod:`phasegate.phases.sentences`, exactly as in a phasegate file; a sentence in none of its
forms is refused. An unknown condition kind, an option another kind owns and a stage without
a condition are refused, naming the stage: pagent lets each of them pass. So is a top-level
key pagent never writes. ``prompt_file`` is read relative to the work directory and must lie
inside it; ``PRD_PATH`` in a prompt becomes the file's
``prd_path``, as pagent's hook does. ``max_stages`` > 0 keeps that many stages. The rest of
pagent's run state (``stage``, ``iterations``, timestamps) is pagent's own: a phasegate run
starts at the first stage and keeps its state in ``.phasegate/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from phasegate._files import ParseProblem, confined_path, read_mapping, read_text
from phasegate._files.models import OptionValueError
from phasegate.errors import PipelineFileError
from phasegate.phases.pipeline import (
    Pipeline,
    load_pipeline,
    pipeline_from_file_data,
    pipeline_from_mapping,
)

PipelineFormat = Literal["auto", "phasegate", "pagent"]
"""How a pipeline file is read: told apart (:func:`is_pagent`), or as one format."""

CONDITIONS: Mapping[str, tuple[str, ...]] = {
    "file_exists": ("min_lines",),
    "directory_exists": ("min_files",),
    "promise_in_output": (),
}
"""pagent's condition kinds, each with the options it may carry."""
PAGENT_FILE_NAME = "pagent-pipeline.json"
"""The name pagent gives its file (in ``.claude/``): such a file is read as pagent's."""
_STATE_KEYS = ("stage", "max_stages", "iterations")
# Keys only pagent's file has: a phasegate pipeline refuses them.
_TOP_KEYS = (
    "stages",
    *_STATE_KEYS,
    "prd_path",
    "prd_file",
    "workflow_type",
    "started_at",
    "completed_at",
    "name",
    "description",
)
# What pagent's setup writes and its hook adds, and the two keys read for the name.
_STAGE_KEYS = ("name", "prompt", "prompt_file", "exit_when", "depends_on", "needs")
_NEEDS_KEYS = ("depends_on", "needs")


def is_pagent(data: Mapping[str, Any], *, file: Path | None = None) -> bool:
    """Whether parsed pipeline data is pagent's: it has ``stages`` and what only pagent has,
    its run-state keys (``stage``, ``max_stages``, ``iterations``) or the file name
    :data:`PAGENT_FILE_NAME`. A stage's shape never decides: a phasegate stage whose
    ``exit_when`` is one object by mistake must be refused as such, not read as pagent's."""
    if not isinstance(data.get("stages"), list):
        return False
    return any(key in data for key in _STATE_KEYS) or (
        file is not None and file.name == PAGENT_FILE_NAME
    )


def load_pipeline_file(
    path: str | Path,
    *,
    workdir: str | Path,
    files_root: str | Path | None = None,
    file_format: PipelineFormat = "auto",
    prompt_files: list[Path] | None = None,
) -> Pipeline:
    """Read a phasegate or pagent pipeline file (``file_format``: ``auto`` tells them apart,
    see :func:`is_pagent`). A pagent file's prompt files are read from ``workdir``; a
    phasegate file's are relative to it (``files_root`` as for
    :func:`~phasegate.phases.pipeline.load_pipeline`). ``prompt_files``: a list the paths of
    the pagent prompt files read are added to (a log file must be none of them)."""
    file = Path(path)
    if file_format == "phasegate":
        return load_pipeline(file, files_root=files_root)
    data = read_mapping(file, PipelineFileError)
    if file_format == "pagent" or is_pagent(data, file=file):
        return pagent_pipeline(data, source=file, workdir=Path(workdir), prompt_files=prompt_files)
    return pipeline_from_file_data(file, data, files_root)


def pagent_pipeline(
    data: Mapping[str, Any],
    *,
    source: Path,
    workdir: Path,
    prompt_files: list[Path] | None = None,
) -> Pipeline:
    """The phasegate pipeline equivalent to pagent's parsed file ``data`` (see the module);
    the prompt files it reads are added to ``prompt_files`` when given.

    Raises :class:`~phasegate.errors.PipelineFileError` naming ``source`` and the field.
    """
    unknown = sorted(str(key) for key in data if key not in _TOP_KEYS)
    if unknown:
        raise PipelineFileError(
            source,
            unknown[0],
            f"unknown key(s) {', '.join(unknown)}; a pagent file has: {', '.join(_TOP_KEYS)}",
        )
    stages = data.get("stages")
    if not isinstance(stages, list) or not stages:
        raise PipelineFileError(source, "stages", "must be a non-empty list of stages")
    max_stages = data.get("max_stages", 0)
    if isinstance(max_stages, bool) or not isinstance(max_stages, int) or max_stages < 0:
        raise PipelineFileError(
            source, "max_stages", f"must be a whole number ≥ 0 (0: all stages), not {max_stages!r}"
        )
    prd_path = data.get("prd_path")
    kept = stages[:max_stages] if max_stages else stages
    read: list[Path] = [] if prompt_files is None else prompt_files
    converted = [
        _stage(source, workdir, index, raw, prd_path if isinstance(prd_path, str) else None, read)
        for index, raw in enumerate(kept)
    ]
    name = next(
        (data[k] for k in ("name", "workflow_type") if isinstance(data.get(k), str) and data[k]),
        source.stem,
    )
    mapping: dict[str, Any] = {"name": name, "stages": converted}
    if isinstance(data.get("description"), str):
        mapping["description"] = data["description"]
    return pipeline_from_mapping(mapping, source=source, files_root=workdir, base_dir=workdir)


def _stage(
    source: Path, workdir: Path, index: int, raw: object, prd_path: str | None, read: list[Path]
) -> dict[str, Any]:
    where = f"stages.{index}"
    if not isinstance(raw, dict):
        raise PipelineFileError(source, where, "a stage must be an object")
    label = f"stage {raw.get('name')!r}" if isinstance(raw.get("name"), str) else f"stage {index}"
    unknown = sorted(str(key) for key in raw if key not in _STAGE_KEYS)
    if unknown:
        raise PipelineFileError(
            source,
            where,
            f"{label}: unknown key(s) {', '.join(unknown)}; a pagent stage has: "
            f"{', '.join(_STAGE_KEYS)}",
        )
    stage: dict[str, Any] = {"name": raw.get("name")}
    if raw.get("prompt_file") is not None:
        stage["prompt"] = _prompt_file(source, workdir, f"{where}.prompt_file", raw, label, read)
    elif raw.get("prompt") is not None:
        stage["prompt"] = raw["prompt"]
    if prd_path is not None and isinstance(stage.get("prompt"), str):
        stage["prompt"] = stage["prompt"].replace("PRD_PATH", prd_path)
    stage["exit_when"] = exit_checks(source, f"{where}.exit_when", raw.get("exit_when"), label)
    given = [key for key in _NEEDS_KEYS if key in raw]
    if len(given) > 1:
        raise PipelineFileError(
            source, where, f"{label}: give depends_on or needs (the same thing), not both"
        )
    if given:
        needs = raw[given[0]]
        if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
            raise PipelineFileError(
                source, f"{where}.{given[0]}", f"{label}: must be a list of stage names"
            )
        stage["needs"] = needs
    return stage


def _prompt_file(
    source: Path, workdir: Path, where: str, raw: dict[str, Any], label: str, read: list[Path]
) -> str:
    name = raw["prompt_file"]
    if not isinstance(name, str) or not name.strip():
        raise PipelineFileError(source, where, f"{label}: must be a path relative to the work dir")
    file = workdir / name
    read.append(file)
    try:
        confined_path(file, workdir, what="prompt_file")
        return read_text(file)
    except OptionValueError as exc:
        raise PipelineFileError(source, where, f"{label}: {exc}") from None
    except (ValueError, ParseProblem) as exc:
        raise PipelineFileError(source, where, f"{label}: {exc}") from None
    except OSError as exc:
        raise PipelineFileError(
            source,
            where,
            f"{label}: cannot read {file}: {exc.strerror or exc}; prompt files are read "
            "relative to the work directory",
        ) from None


def exit_checks(
    source: Path, where: str, condition: object, label: str
) -> list[dict[str, Any]] | str:
    """phasegate's checks for one pagent ``exit_when`` object (see the module); a sentence
    is kept as it is, for the stage to read (:mod:`phasegate.phases.sentences`)."""
    if isinstance(condition, str):
        return condition
    if not isinstance(condition, dict) or not condition:
        raise PipelineFileError(
            source,
            where,
            f"{label} has no exit condition (pagent would let it pass at once); give one of: "
            f"{', '.join(CONDITIONS)}, or a sentence such as 'architecture.md exists and has "
            ">100 lines'",
        )
    kinds = sorted(key for key in condition if key in CONDITIONS)
    if len(kinds) != 1:
        what = (
            f"more than one condition kind ({', '.join(kinds)})"
            if kinds
            else f"unknown condition kind {sorted(map(str, condition))[0]!r}"
        )
        raise PipelineFileError(
            source,
            where,
            f"{label}: {what}; pagent would let it pass, phasegate refuses it. "
            f"Use exactly one of: {', '.join(CONDITIONS)}",
        )
    (kind,) = kinds
    extra = sorted(str(key) for key in condition if key != kind and key not in CONDITIONS[kind])
    if extra:
        allowed = ", ".join(CONDITIONS[kind]) or "none"
        raise PipelineFileError(
            source,
            where,
            f"{label}: {kind} does not take {', '.join(extra)} (its options: {allowed})",
        )
    value = condition[kind]
    if kind == "promise_in_output":
        return [{"said": value}]
    count_key = CONDITIONS[kind][0]
    count = condition.get(count_key, 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise PipelineFileError(
            source, f"{where}.{count_key}", f"{label}: must be a whole number ≥ 0, not {count!r}"
        )
    if kind == "directory_exists":
        return [{"dir_files": {"path": value, "min": count}}]
    checks: list[dict[str, Any]] = [{"file_exists": value}]
    if count > 0:
        checks.append({"min_lines": {"path": value, "n": count}})
    return checks
