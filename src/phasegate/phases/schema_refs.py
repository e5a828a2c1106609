"""``$ref`` in JSON Schemas: followed when a task loads, from local files only, and gathered
into one self-contained schema.

A schema may point at parts of itself (``#/$defs/Name``) and at other schema files
(``common.json#/$defs/Id``), found relative to the file the schema is in (an inline schema:
the task or pipeline file). Every reference is followed at load time, so a broken one is a
load error naming it; files are read only from the files root (:mod:`phasegate._files.confined`)
and never from the network, whatever the URI says.

The files read are embedded in the schema (under ``$defs``, or ``definitions`` before draft
2019-09, each with an ``$id``) and the references to them rewritten to those ids, so the
loaded schema validates on its own: in the gate, in the prompt the agent reads, and in any
runtime that is handed it. A last walk over the result, with no files at all, proves it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urldefrag, urlsplit
from urllib.request import url2pathname

import jsonschema
import referencing.jsonschema as dialects
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource, Specification
from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable

from phasegate._files import MAX_NODES, OptionValueError, ParseProblem, confined_path
from phasegate.phases.schema_walk import SchemaGraph, walk_schema

MAX_SCHEMA_FILES = 50
"""The most schema files one schema may pull in through ``$ref``."""

_LEGACY = (dialects.DRAFT3, dialects.DRAFT4, dialects.DRAFT6, dialects.DRAFT7)

SchemaReader = Callable[[Path], object]
"""Reads one schema file: its parsed, checked contents, or a ValueError (OSError) saying why."""


def self_contained(
    schema: dict[str, Any], *, origin: Path, root: Path | None, read: SchemaReader
) -> dict[str, Any]:
    """``schema`` with every ``$ref`` followed and the files it names embedded.

    ``origin`` is the file the schema is in (its references are relative to it), ``root``
    the folder referenced files must stay in (None: anywhere), ``read`` parses a schema
    file. Raises ValueError (OptionValueError for a file outside ``root``) naming the
    reference that cannot be followed, and for a schema that would make validation loop.
    """
    spec = _specification(schema)
    origin_uri = origin.resolve().as_uri()
    own = copy.deepcopy(schema)  # rewritten below; the caller's dict stays as it was
    fetched: dict[str, Any] = {}
    values = [_count_values(schema)]  # the files embedded, together, within one file's limit

    def retrieve(uri: str) -> Resource[Any]:
        if uri not in fetched:
            fetched[uri] = _fetch(uri, root, read, spent=len(fetched))
            values[0] += _count_values(fetched[uri])
            if values[0] > MAX_NODES:
                raise ValueError(
                    f"the schema and the files it refers to hold more than {MAX_NODES} values "
                    "together; shorten them"
                )
        return Resource.from_contents(fetched[uri], default_specification=spec)

    registry: Registry[Any] = Registry(retrieve=retrieve).combine(METASCHEMAS)  # type: ignore[call-arg]
    graph = walk_schema(own, spec, registry, base=origin_uri, lookup=_lookup)
    names = _names(origin_uri, fetched, root)
    # References into other files (from inside them too: a file may be embedded inside an
    # allOf), or into this one by its file name, would not resolve once the schema stands
    # alone: they are pointed at the embedded copies' ids.
    by_name = origin_uri if not _root_id(own, spec) else None
    moved = [
        site
        for site in graph.refs
        if site.target_uri in fetched or (site.target_uri == by_name and site.ref[:1] != "#")
    ]
    if not fetched and not moved:
        _refuse_loops(graph)
        return own
    for site in moved:
        wrapped = site.target_uri in fetched and _needs_wrapper(fetched[site.target_uri], spec)
        site.rewrite(names[site.target_uri], prefix="/allOf/0" if wrapped else "")
    bundle = _embed(own, spec, fetched, names, origin_uri)
    try:
        _check_alone(bundle, spec)
    except ValueError as exc:
        raise ValueError(
            f"the references cannot be gathered into one schema ({exc}); refer to other "
            "files by paths relative to the schema, and give them no $id of their own"
        ) from None
    return bundle


def check_stands_alone(schema: dict[str, Any]) -> None:
    """A ValueError unless every reference of ``schema`` resolves with no file to read and
    no reference loops in place: what a loaded schema guarantees."""
    _check_alone(schema, _specification(schema))


def _specification(schema: dict[str, Any]) -> Specification[Any]:
    meta = jsonschema.validators.validator_for(schema).META_SCHEMA
    dialect = meta.get("$id") or meta.get("id") or ""
    return dialects.specification_with(dialect, default=dialects.DRAFT202012)


def _count_values(value: object) -> int:
    """How many values ``value`` holds, nested ones included (shared ones each time)."""
    count, stack = 0, [value]
    while stack and count <= MAX_NODES:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return count


def _fetch(uri: str, root: Path | None, read: SchemaReader, *, spent: int) -> Any:
    """The parsed schema file at ``uri``, if it is a local file inside ``root``."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        raise _NotLocal(uri)
    if spent >= MAX_SCHEMA_FILES:
        raise ValueError(f"more than {MAX_SCHEMA_FILES} schema files are referenced")
    path = confined_path(Path(url2pathname(parts.path)), root, what="the schema file")
    data = read(path)
    if not isinstance(data, dict | bool):
        raise ValueError(f"{path} holds a {type(data).__name__}, not a JSON Schema")
    return data


class _NotLocal(ValueError):
    """A reference to anything but a local file: never fetched."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri


def _lookup(resolver: Any, ref: str) -> Any:
    """``resolver.lookup(ref)``, its failures as a ValueError naming ``ref``."""
    try:
        return resolver.lookup(ref)
    except PointerToNowhere as exc:
        raise ValueError(f"$ref {ref!r} points to nothing: {exc.ref} is not in it") from None
    except NoSuchAnchor as exc:
        raise ValueError(
            f"$ref {ref!r} names an anchor that does not exist: {exc.anchor}"
        ) from None
    except Unresolvable as exc:
        problem = _retrieval_problem(exc)
        if isinstance(problem, _NotLocal):
            where = "" if problem.uri == ref else f" (it resolves to {problem.uri})"
            raise ValueError(
                f"$ref {ref!r} is not a local file{where}; phasegate never fetches schemas "
                "over the network: save that schema beside this one and refer to it by a "
                "relative path"
            ) from None
        if isinstance(problem, OptionValueError):
            raise OptionValueError(f"$ref {ref!r}: {problem}", option=problem.option) from None
        if problem is not None:
            raise ValueError(f"$ref {ref!r} cannot be followed: {problem}") from None
        raise ValueError(f"$ref {ref!r} cannot be resolved") from None
    except (ValueError, TypeError, LookupError):
        # A pointer step into a string or past a list's end, or a URI that is no URI.
        raise ValueError(f"$ref {ref!r} points to nothing") from None


def _retrieval_problem(exc: BaseException) -> BaseException | None:
    """Our own reason a file could not be read, at the bottom of referencing's chain."""
    seen = exc.__cause__
    while seen is not None:
        if isinstance(seen, ValueError | OSError | ParseProblem):
            return seen
        seen = seen.__cause__
    return None


def _root_id(schema: dict[str, Any], spec: Specification[Any]) -> str:
    return spec.id_of(schema) or ""


def _names(origin_uri: str, fetched: dict[str, Any], root: Path | None) -> dict[str, str]:
    """The id each embedded document gets: its path in the files root, as a file URI (the
    machine's own folders stay out of prompts and pipeline digests)."""
    base = root.resolve() if root is not None else None
    names = {}
    for uri in (origin_uri, *fetched):
        path = Path(url2pathname(urlsplit(uri).path))
        if base is not None and path.is_relative_to(base):
            names[uri] = "file:///" + quote(path.relative_to(base).as_posix())
        else:
            names[uri] = uri
    return names


def _needs_wrapper(document: Any, spec: Specification[Any]) -> bool:
    """Before 2019-09 an ``$id`` beside ``$ref`` is ignored, and a boolean holds no ``$id``:
    such a document is embedded as the one item of an ``allOf``."""
    return not isinstance(document, dict) or (spec in _LEGACY and "$ref" in document)


def _embed(
    own: dict[str, Any],
    spec: Specification[Any],
    fetched: dict[str, Any],
    names: dict[str, str],
    origin_uri: str,
) -> dict[str, Any]:
    id_key = "id" if spec in (dialects.DRAFT3, dialects.DRAFT4) else "$id"
    defs_key = "definitions" if spec in _LEGACY else "$defs"
    if _root_id(own, spec) == "":
        own = {id_key: names[origin_uri], **own}
    defs = dict(own.get(defs_key) or {})
    for uri, document in fetched.items():
        key = unquote(urlsplit(names[uri]).path.lstrip("/"))
        if key in defs:
            raise ValueError(f"{defs_key} already holds {key!r}; rename that definition")
        if _needs_wrapper(document, spec):
            defs[key] = {id_key: names[uri], "allOf": [document]}
        else:
            defs[key] = {id_key: names[uri], **{k: v for k, v in document.items() if k != id_key}}
    return {**own, defs_key: defs}


def _check_alone(schema: dict[str, Any], spec: Specification[Any]) -> None:
    """Walk ``schema`` as jsonschema will, with no files to read: every reference resolves,
    and none loops in place."""
    base = urldefrag(_root_id(schema, spec)).url
    registry: Registry[Any] = Registry().combine(METASCHEMAS)
    _refuse_loops(walk_schema(schema, spec, registry, base=base, lookup=_lookup))


def _refuse_loops(graph: SchemaGraph) -> None:
    loop = graph.loop()
    if loop is not None:
        what = f"$ref {loop[0].ref!r}" if loop else "the schema"
        raise ValueError(
            f"{what} leads back to where it started without looking inside the value, so "
            "checking any value would never end; make each loop pass through properties or "
            "items"
        )
