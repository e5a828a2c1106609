"""Output schemas in task and pipeline files: loaded, their ``$ref`` s followed and embedded,
walked the way a validator walks them, and applied.

**Loading.** A schema is inline, or a file relative to the file that names it. Files named
inside a task or pipeline file (schemas, prompt files, task files) are found relative to it:
the loader passes its directory as ``base_dir`` in the validation context, the file itself
as ``source``, and the folder such files must stay in as ``files_root`` (absent for data
built in Python, which may name any file).

**References.** A schema may point at parts of itself (``#/$defs/Name``) and at other schema
files (``common.json#/$defs/Id``), found relative to the file the schema is in. Every
reference is followed at load time, so a broken one is a load error naming it; files are
read only from the files root (:mod:`phasegate._files.confined`) and never from the network,
whatever the URI says. The files read are embedded in the schema (under ``$defs``, or
``definitions`` before draft 2019-09, each with an ``$id``) and the references to them
rewritten to those ids, so the loaded schema validates on its own: in the gate, in the
prompt the agent reads, and in any runtime that is handed it. A last walk over the result,
with no files at all, proves it.

**Walking.** :func:`walk_schema` visits each subschema once, follows each ``$ref``
(``$dynamicRef``, ``$recursiveRef``) through a :mod:`referencing` registry, and records where
each reference is and what it resolved to (so it can be rewritten), and which subschemas
apply to the *same* value as another (a reference, ``allOf``, ``not``, ``if``...). A loop made
only of those never reaches a smaller part of the value, so a validator following it never
ends: :meth:`SchemaGraph.loop` finds one before any value is checked.

One concept in one module (about 590 lines): loading, embedding and walking are the three
steps every schema goes through at load, and change together with the dialects supported.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

from pydantic import ValidationInfo

from phasegate._files import (
    MAX_NODES,
    OptionValueError,
    ParseProblem,
    confined_path,
    parse_data,
    read_text,
)

if TYPE_CHECKING:  # jsonschema and referencing load at the first schema checked (~0.1 s)
    from jsonschema.protocols import Validator
    from referencing import Registry, Resource, Specification

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
"""The keywords whose value is a reference."""

# Keywords whose subschemas apply to the value itself, not to a part of it.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf", "extends")
_IN_PLACE_MAP = ("dependentSchemas", "dependencies")


@dataclass(slots=True)
class RefSite:
    """One reference in a schema: the mapping holding it and what it resolved to."""

    holder: dict[str, Any]
    keyword: str
    ref: str
    target_uri: str
    """The absolute URI of the document the reference lands in (no fragment)."""
    fragment: str

    def rewrite(self, uri: str, *, prefix: str = "") -> None:
        """Point the reference at ``uri``, keeping its fragment (a JSON pointer in it gets
        ``prefix`` in front)."""
        fragment = prefix + self.fragment if self.fragment.startswith("/") else self.fragment
        self.holder[self.keyword] = uri + (f"#{fragment}" if fragment else "")


@dataclass(slots=True)
class SchemaGraph:
    """The references of a schema, and which subschema applies another to the same value."""

    refs: list[RefSite] = field(default_factory=list)
    same_value: dict[int, list[tuple[int, RefSite | None]]] = field(default_factory=dict)

    def loop(self) -> list[RefSite] | None:
        """The references on a loop of same-value steps (empty for a loop of nested
        mappings alone), or None when there is no such loop."""
        finished: set[int] = set()
        for start in self.same_value:
            if start in finished:
                continue
            # Depth-first, iteratively: nodes on the current path, the edge taken out of each.
            nodes: list[int] = [start]
            taken: list[RefSite | None] = []
            positions: list[int] = [0]
            on_path = {start}
            while nodes:
                node, position = nodes[-1], positions[-1]
                edges = self.same_value.get(node, [])
                if position == len(edges):
                    finished.add(node)
                    on_path.discard(node)
                    nodes.pop()
                    positions.pop()
                    if taken:
                        taken.pop()
                    continue
                positions[-1] += 1
                target, site = edges[position]
                if target in on_path:
                    loop = [*taken[nodes.index(target) :], site]
                    return [each for each in loop if each is not None]
                if target not in finished:
                    nodes.append(target)
                    positions.append(0)
                    taken.append(site)
                    on_path.add(target)
        return None


Lookup = Callable[[Any, str], Any]
"""``(resolver, ref) -> Resolved``, raising ValueError for a reference that fails."""


def walk_schema(
    schema: dict[str, Any],
    spec: Specification[Any],
    registry: Registry[Any],
    *,
    base: str,
    lookup: Lookup,
) -> SchemaGraph:
    """Visit every subschema of ``schema`` reachable from it (references followed).

    ``base`` is the URI the schema's own references are relative to when it has no ``$id``.
    Iterative: a deep schema cannot exhaust Python's recursion.
    """
    root = spec.create_resource(schema)
    root_uri = urljoin(base, root.id() or "")
    resolver = registry.with_resource(root_uri, root).resolver(base_uri=root_uri)
    graph = SchemaGraph()
    seen: set[int] = set()
    work: list[tuple[Resource[Any], Any]] = [(root, resolver)]
    while work:
        resource, resolver = work.pop()
        contents = resource.contents
        if not isinstance(contents, dict) or id(contents) in seen:
            continue
        seen.add(id(contents))
        edges = graph.same_value.setdefault(id(contents), [])
        for keyword in REF_KEYWORDS:
            ref = contents.get(keyword)
            if not isinstance(ref, str):
                continue
            resolved = lookup(resolver, ref)
            if not isinstance(resolved.contents, dict | bool):
                kind = type(resolved.contents).__name__
                raise ValueError(f"$ref {ref!r} points to a {kind}, not to a schema")
            here = getattr(resolver, "_base_uri", "")  # referencing keeps it private
            target, fragment = urldefrag(urljoin(here, ref))
            site = RefSite(contents, keyword, ref, target, fragment)
            graph.refs.append(site)
            edges.append((id(resolved.contents), site))
            if isinstance(resolved.contents, dict):
                found = _referencing().Resource.from_contents(
                    resolved.contents, default_specification=spec
                )
                work.append((found, resolved.resolver))
        edges.extend((id(child), None) for child in _same_value_children(contents))
        work += [(sub, resolver.in_subresource(sub)) for sub in _subresources(resource)]
    return graph


def _subresources(resource: Resource[Any]) -> list[Resource[Any]]:
    """The subschemas of ``resource``; none for a value a reference pointed into that only
    looks like a schema (``#/properties`` is a mapping of schemas, not a schema)."""
    try:
        return list(resource.subresources())
    except (AttributeError, TypeError, KeyError):
        return []


def _same_value_children(contents: dict[str, Any]) -> list[object]:
    children: list[object] = [contents[k] for k in _IN_PLACE_ONE if k in contents]
    for keyword in _IN_PLACE_LIST:
        value = contents.get(keyword)
        children += value if isinstance(value, list) else [value] if value is not None else []
    for keyword in _IN_PLACE_MAP:
        value = contents.get(keyword)
        if isinstance(value, dict):
            children += [v for v in value.values() if isinstance(v, dict)]
    return [child for child in children if isinstance(child, dict)]


MAX_SCHEMA_FILES = 50
"""The most schema files one schema may pull in through ``$ref``."""


def _legacy(spec: Specification[Any]) -> bool:
    """Whether ``spec`` is a dialect before 2019-09 (``$ref`` overrides its siblings)."""
    dialects = _dialects()
    return spec in (dialects.DRAFT3, dialects.DRAFT4, dialects.DRAFT6, dialects.DRAFT7)


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
        found: Resource[Any] = _referencing().Resource.from_contents(
            fetched[uri], default_specification=spec
        )
        return found

    registry: Registry[Any] = _referencing().Registry(retrieve=retrieve).combine(_metaschemas())
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
    import jsonschema

    dialects = _dialects()
    meta = jsonschema.validators.validator_for(schema).META_SCHEMA
    dialect = meta.get("$id") or meta.get("id") or ""
    spec: Specification[Any] = dialects.specification_with(dialect, default=dialects.DRAFT202012)
    return spec


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
    path = confined_path(Path(_file_path(parts.path)), root, what="the schema file")
    data = read(path)
    if not isinstance(data, dict | bool):
        raise ValueError(f"{path} holds a {type(data).__name__}, not a JSON Schema")
    return data


def _file_path(url_path: str) -> str:
    """The local path of a ``file:`` URI's path part, as ``urllib.request.url2pathname``
    reads it, without importing ``urllib.request`` (it loads ``http.client``, ``email`` and
    ``ssl``: a plugin hook that loads a task would pay for them at every stop)."""
    if os.name == "nt":
        from nturl2path import url2pathname

        return url2pathname(url_path)
    return unquote(url_path)


class _NotLocal(ValueError):
    """A reference to anything but a local file: never fetched."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri


def _lookup(resolver: Any, ref: str) -> Any:
    """``resolver.lookup(ref)``, its failures as a ValueError naming ``ref``."""
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable

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
        path = Path(_file_path(urlsplit(uri).path))
        if base is not None and path.is_relative_to(base):
            names[uri] = "file:///" + quote(path.relative_to(base).as_posix())
        else:
            names[uri] = uri
    return names


def _needs_wrapper(document: Any, spec: Specification[Any]) -> bool:
    """Before 2019-09 an ``$id`` beside ``$ref`` is ignored, and a boolean holds no ``$id``:
    such a document is embedded as the one item of an ``allOf``."""
    return not isinstance(document, dict) or (_legacy(spec) and "$ref" in document)


def _embed(
    own: dict[str, Any],
    spec: Specification[Any],
    fetched: dict[str, Any],
    names: dict[str, str],
    origin_uri: str,
) -> dict[str, Any]:
    dialects = _dialects()
    id_key = "id" if spec in (dialects.DRAFT3, dialects.DRAFT4) else "$id"
    defs_key = "definitions" if _legacy(spec) else "$defs"
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
    registry: Registry[Any] = _referencing().Registry().combine(_metaschemas())
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


_INLINE = "<inline>"


def base_dir(info: ValidationInfo) -> Path:
    """The directory of the file being loaded (the working directory for data from code)."""
    return Path((info.context or {}).get("base_dir", Path.cwd()))


def files_root(info: ValidationInfo) -> Path | None:
    """The folder files named in the data must stay in (None: data from code, anywhere)."""
    root = (info.context or {}).get("files_root")
    return Path(root) if root is not None else None


def named_file(value: str | Path, info: ValidationInfo, *, what: str) -> Path:
    """The file ``value`` names, relative to the file being loaded and inside its files
    root; an OptionValueError (option ``files_root``) when it lies outside."""
    return confined_path(base_dir(info) / value, files_root(info), what=what)


def load_schema(value: object, info: ValidationInfo) -> dict[str, Any] | None:
    """A schema field's value (a mapping, or a path to a schema file) as a checked,
    self-contained JSON Schema; a ValueError saying what is wrong."""
    if value is None:
        return None
    if isinstance(value, str | Path):
        origin = named_file(value, info, what="schema file")
        data = read_schema_file(origin)
    elif isinstance(value, dict):
        source = (info.context or {}).get("source")
        origin, data = (Path(source) if source else base_dir(info) / _INLINE), value
    else:
        raise ValueError("expected a JSON Schema object or a path to a schema file")
    schema = checked_schema(data)
    if not isinstance(schema, dict):
        raise ValueError(f"expected a JSON Schema object, found a {type(schema).__name__}")
    return self_contained(schema, origin=origin, root=files_root(info), read=_read_checked)


def checked_schema(value: object) -> object:
    """``value`` if it is JSON data and a valid JSON Schema; a ValueError saying where not."""
    problem = _not_json(value)
    if problem:
        raise ValueError(f"not a valid JSON Schema: {problem}")
    if isinstance(value, dict):
        if not isinstance(value.get("$schema", ""), str):
            raise ValueError("not a valid JSON Schema: $schema must be a string, a dialect's URI")
        import jsonschema

        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        except RecursionError:
            raise ValueError("not a valid JSON Schema: it nests too deeply") from None
    return value


def read_schema_file(path: Path) -> object:
    """Parse a schema file (JSON, or YAML by suffix); a ValueError naming the file."""
    try:
        text = read_text(path)
    except OSError as exc:
        raise ValueError(f"cannot read schema file {path}: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise ValueError(f"schema file {path} {exc}") from None
    yaml_syntax = path.suffix.lower() in {".yaml", ".yml"}
    try:
        return parse_data(text, json_syntax=not yaml_syntax)
    except ParseProblem as exc:
        kind = "YAML" if yaml_syntax else "JSON"
        raise ValueError(f"schema file {path} is not valid {kind}: {exc}") from None


def schema_problem(schema: object) -> str | None:
    """What keeps ``schema`` from being applied as it is (not a valid schema, a reference
    that needs a file, a reference loop), or None. Every loaded schema passes; a schema put
    together in code without loading may not."""
    try:
        checked = checked_schema(schema)
        if not isinstance(checked, dict):
            return "expected a JSON Schema object"
        check_stands_alone(checked)
    except ValueError as exc:
        return str(exc)
    return None


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for a loaded schema that never reads a file or the network: a loaded
    schema holds everything its references need."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=_referencing().Registry())


def _read_checked(path: Path) -> object:
    return checked_schema(read_schema_file(path))


def _not_json(value: object) -> str | None:
    """What keeps ``value`` from being JSON data (YAML also has dates, sets, binary...)."""
    stack: list[tuple[object, str]] = [(value, "the top level")]
    seen: set[int] = set()  # data built in Python may share (or loop back to) a container
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    return f"{where} has the key {key!r}; keys must be strings"
                stack.append((inner, key if where == "the top level" else f"{where}/{key}"))
        elif isinstance(item, list):
            stack += [(inner, f"{where}/{index}") for index, inner in enumerate(item)]
        elif not isinstance(item, str | int | float | bool) and item is not None:
            return f"{where} holds a {type(item).__name__}, which JSON does not have"
    return None


def _referencing() -> Any:
    """The ``referencing`` package, imported when a schema is first checked."""
    import referencing

    return referencing


def _dialects() -> Any:
    """``referencing.jsonschema``: the dialects' specifications."""
    import referencing.jsonschema

    return referencing.jsonschema


def _metaschemas() -> Any:
    """Every dialect's metaschema, as a registry (jsonschema_specifications)."""
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    return REGISTRY
