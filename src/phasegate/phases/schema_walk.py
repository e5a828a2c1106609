"""Walking a JSON Schema the way a validator would: every subschema, every reference.

:func:`walk_schema` visits each subschema once, follows each ``$ref`` (``$dynamicRef``,
``$recursiveRef``) through a :mod:`referencing` registry, and records two things: where each
reference is and what it resolved to (so it can be rewritten), and which subschemas apply
to the *same* value as another (a reference, ``allOf``, ``not``, ``if``...). A loop made only
of those never reaches a smaller part of the value, so a validator following it never ends:
:meth:`SchemaGraph.loop` finds one before any value is checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

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
                found = Resource.from_contents(resolved.contents, default_specification=spec)
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
