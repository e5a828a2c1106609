"""Parsing the YAML and JSON of every file phasegate reads, within stated limits.

Task, pipeline, schema, script and state files all go through :func:`read_text` and
:func:`parse_data`, so each is bounded the same way and fails with a sentence instead of a
traceback, a hang or a ``MemoryError``:

- a file may hold at most :data:`MAX_FILE_BYTES` bytes;
- values may nest at most :data:`MAX_DEPTH` levels deep;
- a document may hold at most :data:`MAX_NODES` values, counted with every YAML alias
  expanded (a few lines of aliases can otherwise stand for billions of values);
- a key may appear only once in a mapping (YAML and JSON would silently keep the last).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import yaml

MAX_FILE_BYTES = 2 * 1024 * 1024
"""The largest file phasegate reads: 2 MiB."""
MAX_DEPTH = 64
"""How deep values may nest (a mapping in a list in a mapping is three levels)."""
MAX_NODES = 100_000
"""How many values one document may hold, YAML aliases expanded (a task of 10,000 phases
holds about 70,000; PyYAML spends about 600 bytes on each while it reads)."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Mark(Protocol):
    """Where in the text a YAML node starts (0-based)."""

    line: int
    column: int


class ParseProblem(ValueError):
    """What is wrong with a file's contents, in words; the caller names the file."""


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (a byte-order mark dropped), refused past MAX_FILE_BYTES.

    Raises OSError when the file cannot be read, ParseProblem when it is too large or not
    UTF-8. Never reads more than the limit, even from a file that does not end.
    """
    with path.open("rb") as file:
        raw = file.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise ParseProblem(
            f"is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB, the most phasegate reads; "
            "split it or shorten it"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseProblem(f"is not UTF-8 text (byte {exc.start} cannot be decoded)") from None


def parse_data(text: str, *, json_syntax: bool) -> object:
    """``text`` parsed as JSON (``json_syntax``) or YAML, within the module's limits.

    Raises ParseProblem saying what is wrong and where (a line number when there is one).
    """
    return parse_json(text) if json_syntax else parse_yaml(text)


def parse_json(text: str) -> object:
    """JSON text as Python data; duplicate keys, deep nesting and huge numbers refused."""
    try:
        data = json.loads(text, object_pairs_hook=_json_object)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ParseProblem(f"invalid JSON at {where}: {exc.msg}") from None
    except RecursionError:
        raise ParseProblem(_too_deep()) from None
    except ParseProblem:
        raise
    except ValueError as exc:  # a number past Python's digit limit
        raise ParseProblem(f"invalid JSON: {exc}") from None
    _check_tree(data)
    return data


def parse_yaml(text: str) -> object:
    """YAML text as Python data (the safe subset); duplicate keys, deep nesting and alias
    bombs refused."""
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


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ParseProblem(
                    f"the key {key!r} appears twice in one object; keep only one of them"
                )
            seen.add(key)
    return data


def _check_tree(data: object) -> None:
    """MAX_DEPTH and MAX_NODES for parsed JSON (which has no aliases: a tree)."""
    count = 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            raise ParseProblem(_too_deep())
        if count > MAX_NODES:
            raise ParseProblem(_too_many())
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


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
                raise ParseProblem(_too_deep(self._next_mark()))
            if self._nodes > MAX_NODES:
                raise ParseProblem(_too_many(self._next_mark()))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> yaml.Node | None:
        node = super().compose_document()
        if node is not None:
            _check_graph(node)
        return node

    def _next_mark(self) -> _Mark | None:
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
                raise ParseProblem(_too_deep(node.start_mark))
            if size[key] > MAX_NODES:
                raise ParseProblem(_too_many(node.start_mark))
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise ParseProblem(
                f"an alias refers to the value that holds it, which never ends "
                f"({_where(node.start_mark)}); write the value out instead"
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
    seen: dict[object, _Mark] = {}
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


def _too_deep(mark: _Mark | None = None) -> str:
    where = f" ({_where(mark)})" if mark is not None else ""
    return f"values nest more than {MAX_DEPTH} levels deep{where}; flatten the file"


def _too_many(mark: _Mark | None = None) -> str:
    where = f" (counted up to {_where(mark)}, aliases expanded)" if mark is not None else ""
    return f"holds more than {MAX_NODES} values{where}; shorten the file"


def _where(mark: _Mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} ({_where(mark)})"
    return str(problem)
