"""YAML within phasegate's limits: PyYAML's safe loader, checked before any value is built.

The composer is stopped at :data:`~phasegate._files.limits.MAX_DEPTH` levels and
:data:`~phasegate._files.limits.MAX_NODES` nodes as it reads (it recurses once per level,
and each node costs memory); the composed graph is then measured with its aliases expanded,
once per node, so an alias bomb is refused in time linear in the file; a mapping's keys are
checked for repeats before it is built.
"""

from __future__ import annotations

from typing import Any

import yaml

from phasegate._files.limits import (
    MAX_DEPTH,
    MAX_NODES,
    Mark,
    ParseProblem,
    too_deep,
    too_many,
    where_is,
)

_MERGE_TAG = "tag:yaml.org,2002:merge"


def parse_yaml(text: str) -> object:
    """YAML text as Python data (the safe subset); duplicate keys, deep nesting and alias
    bombs refused with a ParseProblem."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)  # its reader already refuses control characters
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ParseProblem(f"invalid YAML: {_yaml_problem(exc)}") from None
    except ParseProblem:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # a date or number out of range
        raise ParseProblem(f"invalid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with phasegate's limits, checked before any value is built."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # The composer recurses once per level: stop long before Python's recursion limit,
        # and before the nodes read so far fill the memory.
        self._depth += 1
        self._nodes += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ParseProblem(too_deep(self._next_mark()))
            if self._nodes > MAX_NODES:
                raise ParseProblem(too_many(self._next_mark()))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> yaml.Node | None:
        node = super().compose_document()
        if node is not None:
            _check_graph(node)
        return node

    def _next_mark(self) -> Mark | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped stub
        return event.start_mark

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _refuse_duplicate_keys(self, node)
        return super().construct_mapping(node, deep=deep)


def _check_graph(root: yaml.Node) -> None:
    """MAX_DEPTH and MAX_NODES with aliases expanded, and no alias inside itself.

    Aliases make the node graph a DAG (or, for an alias inside its own anchor, a cycle);
    sizes and depths are computed once per node, so the check is linear in the file.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            if depth[key] > MAX_DEPTH:
                raise ParseProblem(too_deep(node.start_mark))
            if size[key] > MAX_NODES:
                raise ParseProblem(too_many(node.start_mark))
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise ParseProblem(
                f"an alias refers to the value that holds it, which never ends "
                f"({where_is(node.start_mark)}); write the value out instead"
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _refuse_duplicate_keys(loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
    seen: dict[object, Mark] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue  # a merge (<<) may be overridden; complex keys are PyYAML's to refuse
        key = loader.construct_object(key_node)
        try:
            first = seen.get(key)
        except TypeError:
            continue
        if first is not None:
            raise ParseProblem(
                f"the key {key!r} appears twice in one mapping (line {first.line + 1} and "
                f"line {key_node.start_mark.line + 1}); keep only one of them"
            )
        seen[key] = key_node.start_mark


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} ({where_is(mark)})"
    return str(problem)
