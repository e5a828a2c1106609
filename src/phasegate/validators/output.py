"""Rules for the output phase's answer: it fits the schema (and is not wrapped in an extra
layer), says something real, was not refused by the runtime, and its file claims match the
disk. Finding the answer is :mod:`phasegate.validators.summary`'s job.

The schema was checked and made self-contained when the task loaded, and the gate checks it
again before a run (:func:`phasegate.phases.schemas.schema_problem`), so applying it reads no
file and no network. An answer nested too deeply to check is an issue of the answer; any
other failure of the schema library is reported as an issue too, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from phasegate.phases.placeholder_values import is_placeholder_value
from phasegate.phases.schemas import schema_validator
from phasegate.validators.issues import Issue, IssueCode, IssueGroup
from phasegate.validators.paths import relative_to_workdir

if TYPE_CHECKING:  # jsonschema loads with the first schema checked
    import jsonschema


def check_schema(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    """``schema_violation``: one issue per way ``value`` breaks ``schema``."""
    try:
        return _schema_issues(index, value, schema)
    except RecursionError:
        return [_unchecked(index, value, "it nests too deeply to be checked")]
    except Exception as exc:
        return [_unchecked(index, value, f"the schema could not be applied ({exc})")]


def _schema_issues(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    validator = schema_validator(schema)
    issues: list[Issue] = []
    missing: set[str] = set()  # jsonschema reports "required" once per absent field
    for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path))):
        where = _json_path(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            for name in error.validator_value if isinstance(error.validator_value, list) else []:
                if name not in error.instance and f"{where}.{name}" not in missing:
                    missing.add(f"{where}.{name}")
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


def _unchecked(index: int, value: dict[str, Any], problem: str) -> Issue:
    """``schema_violation``: the answer could not be checked against the schema at all."""
    return Issue.of(
        IssueCode.SCHEMA_VIOLATION,
        f"The answer could not be checked against the output schema: {problem}.",
        phase=index,
        field="$",
        provided=_shown(value),
        requirement="Give a plain JSON object with the schema's fields, nested no deeper "
        "than the schema asks.",
    )


def _shown(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return "(too deeply nested to show)"


def check_wrapped(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    """``schema_violation``: the answer sits inside one extra layer (``{"output": {...}}``).

    A model answering through a tool often wraps the object in a key the schema does not have;
    when the inner object would satisfy the schema, say exactly that instead of listing every
    missing field.
    """
    if len(value) != 1:
        return []
    ((key, inner),) = value.items()
    properties = schema.get("properties")
    if not isinstance(inner, dict) or (isinstance(properties, dict) and key in properties):
        return []
    if check_schema(index, inner, schema) or not check_schema(index, value, schema):
        return []  # the inner object is no answer either, or the answer is fine as it is
    return [
        Issue.of(
            IssueCode.SCHEMA_VIOLATION,
            f'The answer is wrapped in an extra {{"{key}": ...}} layer; the schema\'s fields '
            "belong at the top level.",
            phase=index,
            field=f"$.{key}",
            provided=_shown(value),
            requirement=f'Remove the "{key}" wrapper: give the inner object itself.',
        )
    ]


def check_runtime_rejection(index: int, reason: str | None, found: list[Issue]) -> list[Issue]:
    """``schema_violation``: the runtime refused this structured output, and no other rule says
    why; an answer the runtime refused is never accepted."""
    if reason is None or found:
        return []
    return [
        Issue.of(
            IssueCode.SCHEMA_VIOLATION,
            f"The agent runtime refused this structured output: {reason}",
            phase=index,
            field="json",
            provided=reason,
            requirement="Give an object that satisfies the output schema exactly.",
        )
    ]


def check_placeholders(index: int, value: dict[str, Any], schema: dict[str, Any]) -> list[Issue]:
    """``placeholder_value``: ``TBD``, ``TODO``, ``...``, ``<...>`` or an empty required string."""
    issues: list[Issue] = []
    for where, item, required in _walk(value, schema, schema, "$", required=False):
        if not isinstance(item, str):
            continue
        if is_placeholder_value(item) or (required and not item.strip()):
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
    index: int,
    field: str,
    value: dict[str, Any],
    changed: Sequence[str],
    workdir: str,
    *,
    leave_out: Collection[str] = (),
    spelling: Callable[[str], str] | None = None,
) -> list[Issue]:
    """``claimed_not_changed`` / ``changed_not_claimed``: the JSON's file list against the
    disk. Claims of paths in ``leave_out`` (protected paths that changed, judged apart) are
    not compared; ``spelling`` turns a claimed path into the disk's spelling of it
    (:func:`~phasegate.validators.reconcile.disk_spelling`)."""
    claimed_raw = value.get(field)
    if not isinstance(claimed_raw, list) or not all(isinstance(p, str) for p in claimed_raw):
        return []  # the schema rule reports a wrong type; nothing to reconcile
    claimed = set(claimed_files(field, value, workdir, spelling=spelling)) - set(leave_out)
    actual = set(changed)
    issues = [
        Issue.of(
            IssueCode.CLAIMED_NOT_CHANGED,
            f"{path} is listed in {field} but did not change on disk.",
            phase=index,
            field=f"$.{field}",
            provided=path,
            requirement=f"List in {field} only files you really changed.",
            path=_file_in(workdir, path),
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
            path=path,
        )
        for path in sorted(actual - claimed)
    ]
    return issues


def _file_in(workdir: str, claimed: str) -> str | None:
    """A claimed path as a file of the work directory; None when it names one outside it, or
    the directory itself (the claim is kept as given in ``provided``)."""
    relative = relative_to_workdir(claimed, workdir)
    return None if relative in (None, ".") else relative


def claimed_files(
    field: str | None,
    value: dict[str, Any] | None,
    workdir: str,
    *,
    spelling: Callable[[str], str] | None = None,
) -> list[str]:
    """The normalized paths the JSON claims changed (empty when there is no claim), each as
    ``spelling`` spells it when given."""
    raw = value.get(field) if field and value else None
    if not isinstance(raw, list):
        return []
    normal = {relative_to_workdir(p, workdir) or p for p in raw if isinstance(p, str)}
    return sorted({spelling(p) for p in normal} if spelling is not None else normal)


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
    """Every value in ``value`` with its JSON path and whether its schema requires it.

    Iterative, in document order: an answer nested deeper than Python's recursion limit is
    walked like any other.
    """
    stack: list[tuple[object, object, str, bool]] = [(value, schema, where, required)]
    while stack:
        item, item_schema, path, needed = stack.pop()
        node = _resolve(item_schema, root)
        yield path, item, needed
        children: list[tuple[object, object, str, bool]] = []
        if isinstance(item, dict):
            properties = node.get("properties", {}) if isinstance(node, dict) else {}
            properties = properties if isinstance(properties, dict) else {}
            required_names = node.get("required", []) if isinstance(node, dict) else []
            names = set(required_names) if isinstance(required_names, list) else set()
            children = [
                (inner, properties.get(key), f"{path}.{key}", key in names)
                for key, inner in item.items()
            ]
        elif isinstance(item, list):
            items = node.get("items") if isinstance(node, dict) else None
            children = [
                (inner, items, f"{path}[{position}]", False) for position, inner in enumerate(item)
            ]
        stack.extend(reversed(children))


def _resolve(schema: object, root: dict[str, Any]) -> object:
    """Follow a ``$ref`` within the schema (``#/$defs/Name``, as pydantic-generated schemas
    use) or to a file embedded in it when the task loaded (``file:///common.json#/...``)."""
    for _ in range(20):  # bounded: a cyclic $ref must not hang the gate
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        document, _, fragment = schema["$ref"].partition("#")
        node = _embedded(root, document) if document else root
        if node is None or (fragment and not fragment.startswith("/")):
            return schema
        for part in fragment[1:].split("/") if fragment else []:
            key = part.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, dict) else None
        schema = node
    return schema


def _embedded(root: dict[str, Any], uri: str) -> object:
    """The document embedded in ``root`` under the id ``uri`` (None when there is none)."""
    for key in ("$defs", "definitions"):
        documents = root.get(key)
        for document in documents.values() if isinstance(documents, dict) else ():
            if isinstance(document, dict) and uri in (document.get("$id"), document.get("id")):
                return document
    return None
