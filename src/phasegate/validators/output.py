"""Rules for the output phase: the JSON is there, parses, fits the schema, says something
real, and its file claims match the disk."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema

from phasegate.evidence.transcript import AssistantText, Transcript
from phasegate.validators.issues import Issue, IssueCode, IssueGroup
from phasegate.validators.json_extract import JsonCandidate, find_json
from phasegate.validators.paths import relative_to_workdir
from phasegate.validators.windows import PhaseWindow

_PLACEHOLDER = re.compile(r"^\s*(?:TBD|TODO|FIXME|XXX|\.{3,}|…|<[^<>\n]*>)\s*$", re.IGNORECASE)
# "TODO: ..." or "TBD later", but not prose ("Todo list fixed") or paths ("TODO.md", "todo.py").
_PLACEHOLDER_PREFIX = re.compile(r"^\s*(?:(?:TBD|TODO|FIXME)\b(?![./\\-])|(?i:tbd|todo|fixme)\s*:)")


def json_candidates(transcript: Transcript, start: int, end: int) -> list[JsonCandidate]:
    """JSON candidates in the assistant text of entries ``[start, end)``, in order."""
    return [c for text in _assistant_texts(transcript, start, end) for c in find_json(text)]


def _assistant_texts(transcript: Transcript, start: int, end: int) -> list[str]:
    return [e.text for e in transcript.entries[start:end] if isinstance(e, AssistantText)]


def _split_head(transcript: Transcript, window: PhaseWindow) -> tuple[str, str]:
    """The text of the window's head entry before and after the previous marker line."""
    if window.head is None:
        return "", ""
    entry = transcript.entries[window.head[0]]
    if not isinstance(entry, AssistantText):
        return "", ""
    lines = entry.text.splitlines()
    cut = window.head[1] + 1
    return "\n".join(lines[:cut]), "\n".join(lines[cut:])


def check_json_present(
    window: PhaseWindow, transcript: Transcript, *, markers: bool
) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The phase's JSON (the last candidate in its window) or the issue explaining its absence.

    ``json_missing`` when there is none at all, ``json_before_marker`` when JSON only appears
    before the window (before the last work phase's marker), ``json_invalid`` when the last
    candidate does not parse.
    """
    before_marker, after_marker_text = _split_head(transcript, window)
    mine = find_json(after_marker_text) + json_candidates(transcript, window.start, window.end)
    if mine:
        last = mine[-1]
        if last.ok and isinstance(last.value, dict):
            return last.value, []
        return None, [
            Issue.of(
                IssueCode.JSON_INVALID,
                f"The JSON of phase {window.index} ({window.phase.name}) does not parse: "
                f"{last.error}.",
                phase=window.index,
                field="json",
                provided=last.source,
                requirement="Print one JSON object, valid JSON, in a ```json block.",
            )
        ]
    head_entry = window.head[0] if window.head is not None else window.start
    earlier = json_candidates(transcript, 0, head_entry) + find_json(before_marker)
    if markers and earlier:
        return None, [
            Issue.of(
                IssueCode.JSON_BEFORE_MARKER,
                f"JSON was printed before the work phases were marked complete; phase "
                f"{window.index} ({window.phase.name}) only accepts JSON after the last "
                "work phase's marker.",
                phase=window.index,
                field="json",
                requirement="Complete the work phases and print their markers first; "
                "then print the JSON.",
            )
        ]
    return None, [
        Issue.of(
            IssueCode.JSON_MISSING,
            f"Phase {window.index} ({window.phase.name}) needs a JSON object and none was printed.",
            phase=window.index,
            field="json",
            requirement="Print the JSON object described in the output phase, in a ```json block.",
        )
    ]


def check_schema(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    """``schema_violation``: one issue per way ``value`` breaks ``schema``."""
    validator = jsonschema.validators.validator_for(schema)(schema)
    issues: list[Issue] = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path))):
        where = _json_path(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            for name in error.validator_value if isinstance(error.validator_value, list) else []:
                if name not in error.instance:
                    issues.append(
                        _schema_issue(
                            index, f"{where}.{name}", None, "is required", error, "missing"
                        )
                    )
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = (
                set(error.schema.get("properties", {})) if isinstance(error.schema, dict) else set()
            )
            for name in sorted(set(error.instance) - known):
                issues.append(
                    _schema_issue(
                        index,
                        f"{where}.{name}",
                        None,
                        "is not a field of the schema",
                        error,
                        "unknown",
                    )
                )
        else:
            provided = json.dumps(error.instance, ensure_ascii=False)
            issues.append(_schema_issue(index, where, provided, error.message, error, "invalid"))
    return issues


def check_placeholders(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    """``placeholder_value``: ``TBD``, ``TODO``, ``...``, ``<...>`` or an empty required string."""
    issues: list[Issue] = []
    for where, item, required in _walk(value, schema, schema, "$", required=False):
        if not isinstance(item, str):
            continue
        if (
            _PLACEHOLDER.match(item)
            or _PLACEHOLDER_PREFIX.match(item)
            or (required and not item.strip())
        ):
            issues.append(
                Issue.of(
                    IssueCode.PLACEHOLDER_VALUE,
                    f"{where} holds a placeholder ({item!r}), not a real value.",
                    phase=index,
                    field=where,
                    provided=item,
                    requirement="Give the concrete value; if you do not know it, find it out.",
                )
            )
    return issues


def check_claims(
    index: int, field: str, value: dict[str, Any], changed: Sequence[str], workdir: str
) -> list[Issue]:
    """``claimed_not_changed`` / ``changed_not_claimed``: the JSON's file list against the disk."""
    claimed_raw = value.get(field)
    if not isinstance(claimed_raw, list) or not all(isinstance(p, str) for p in claimed_raw):
        return []  # the schema rule reports a wrong type; nothing to reconcile
    claimed = set(claimed_files(field, value, workdir))
    actual = set(changed)
    issues = [
        Issue.of(
            IssueCode.CLAIMED_NOT_CHANGED,
            f"{path} is listed in {field} but did not change on disk.",
            phase=index,
            field=f"$.{field}",
            provided=path,
            requirement=f"List in {field} only files you really changed.",
        )
        for path in sorted(claimed - actual)
    ]
    issues += [
        Issue.of(
            IssueCode.CHANGED_NOT_CLAIMED,
            f"{path} changed on disk but is not listed in {field}.",
            phase=index,
            field=f"$.{field}",
            requirement=f"List every changed file in {field}, including {path}.",
        )
        for path in sorted(actual - claimed)
    ]
    return issues


def claimed_files(field: str | None, value: dict[str, Any] | None, workdir: str) -> list[str]:
    """The normalized paths the JSON claims changed (empty when there is no claim)."""
    raw = value.get(field) if field and value else None
    if not isinstance(raw, list):
        return []
    return sorted({relative_to_workdir(p, workdir) or p for p in raw if isinstance(p, str)})


def _schema_issue(
    index: int,
    where: str,
    provided: str | None,
    problem: str,
    error: jsonschema.ValidationError,
    group: IssueGroup,
) -> Issue:
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    requirement = description or f"{error.validator}: {json.dumps(error.validator_value)}"
    return Issue.of(
        IssueCode.SCHEMA_VIOLATION,
        f"{where} {problem}.",
        phase=index,
        field=where,
        provided=provided,
        requirement=str(requirement),
        group=group,
    )


def _json_path(parts: Sequence[object]) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _walk(
    value: object, schema: object, root: dict[str, Any], where: str, *, required: bool
) -> Iterator[tuple[str, object, bool]]:
    """Every value in ``value`` with its JSON path and whether its schema requires it."""
    node = _resolve(schema, root)
    yield where, value, required
    if isinstance(value, dict):
        properties = node.get("properties", {}) if isinstance(node, dict) else {}
        needed = set(node.get("required", [])) if isinstance(node, dict) else set()
        for key, item in value.items():
            yield from _walk(
                item, properties.get(key), root, f"{where}.{key}", required=key in needed
            )
    elif isinstance(value, list):
        items = node.get("items") if isinstance(node, dict) else None
        for position, item in enumerate(value):
            yield from _walk(item, items, root, f"{where}[{position}]", required=False)


def _resolve(schema: object, root: dict[str, Any]) -> object:
    """Follow a local ``$ref`` (``#/$defs/Name``), as pydantic-generated schemas use."""
    for _ in range(20):  # bounded: a cyclic $ref must not hang the gate
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        reference: str = schema["$ref"]
        if not reference.startswith("#/"):
            return schema
        node: object = root
        for part in reference[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        schema = node
    return schema
