"""Layers only point down, and no module imports itself back through others.

:data:`LAYERS` is the one ordered list of phasegate's layers, lowest first
(``docs/architecture.md`` explains it). A module may import from its own layer and the ones
below; every import counts, inside functions and under ``TYPE_CHECKING`` too. Within the
package, no chain of imports may lead back to where it started.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "phasegate.errors",
        "phasegate.modes",
        "phasegate._files",
        "phasegate._lazy",
        "phasegate._process",
        "phasegate._secrets",
    ),
    ("phasegate.evidence",),
    ("phasegate.phases",),
    ("phasegate.validators",),
    ("phasegate.prompts",),
    ("phasegate.metrics",),
    ("phasegate.telemetry",),
    ("phasegate.agents",),  # the Agent protocol, Claude Code, the scripted agent and model server
    ("phasegate.workspace",),
    (
        "phasegate.recording",
    ),  # a run's recording folder: written when a run ends, read back, and its page
    ("phasegate.tasks",),
    ("phasegate.planning",),  # task inputs: inference, clarification, both planners
    ("phasegate.pipelines",),
    ("phasegate.running",),  # one way to run any definition: task, pipeline or loop
    ("phasegate.batches",),
    ("phasegate.testing",),  # the public fakes: re-exported, with the pytest plugin
    ("phasegate.client",),  # the service's wire schema and its Python client
    ("phasegate",),  # the public API: re-exports, imported lazily
    ("phasegate._github",),  # an edge: a report as GitHub Actions outputs, summary, annotations
    ("phasegate._plugin",),  # an edge: the Claude Code plugin's commands and hooks
    ("phasegate._server",),  # an edge: the HTTP service; the library never imports it
    ("phasegate._cli", "phasegate.__main__"),  # the edge: uses the library, never used by it
)
"""phasegate's layers, lowest first; each entry lists the modules or packages in it."""


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target, where it stands."""

    importer: str
    target: str
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.importer} imports {self.target}"


def module_name(file: Path, root: Path) -> str:
    """The dotted name of the module in ``file`` under source root ``root``."""
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_under(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` below ``root``, by dotted name."""
    return {module_name(file, root): file for file in sorted((root / package).rglob("*.py"))}


def imports_of(name: str, file: Path, known: Mapping[str, Path], package: str) -> Iterator[Import]:
    """The modules of ``package`` that ``file`` imports, anywhere in it."""
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from a.b import c` imports module a.b.c when there is one, else a name of a.b.
            targets = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in known
                else node.module
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target == package or target.startswith(f"{package}."):
                yield Import(name, target, file, node.lineno)


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> int:
    """The index of the layer ``module`` belongs to: the longest entry that contains it."""
    best, best_length = -1, -1
    for index, entries in enumerate(layers):
        for entry in entries:
            if (module == entry or module.startswith(f"{entry}.")) and len(entry) > best_length:
                best, best_length = index, len(entry)
    if best < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def upward_imports(
    root: Path, package: str, layers: Sequence[Sequence[str]]
) -> list[tuple[Import, str]]:
    """Imports from a higher layer, each with the layer it reaches up to."""
    known = modules_under(root, package)
    found = []
    for name, file in known.items():
        mine = layer_of(name, layers)
        for imp in imports_of(name, file, known, package):
            theirs = layer_of(imp.target, layers)
            if theirs > mine:
                found.append((imp, ", ".join(layers[theirs])))
    return found


def import_cycles(root: Path, package: str) -> list[list[str]]:
    """Each group of modules that import one another in a circle (Tarjan's algorithm)."""
    known = modules_under(root, package)
    graph = {
        name: sorted({i.target for i in imports_of(name, file, known, package)} - {name})
        for name, file in known.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, []):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_every_import_points_to_its_own_layer_or_a_lower_one() -> None:
    """No module imports from a layer above its own (the library never imports _cli)."""
    offending = [
        f"{imp} (layer {layer} is above)" for imp, layer in upward_imports(SRC, "phasegate", LAYERS)
    ]
    assert offending == []


def test_no_modules_import_one_another_in_a_circle() -> None:
    """Not even through imports inside functions."""
    assert import_cycles(SRC, "phasegate") == []


def test_the_public_fakes_use_only_the_agent_boundary_and_telemetry() -> None:
    """testing/ and the scripted agent stand in for an agent: they may not reach into the
    runners, the workspace, planning or batches (the layers would allow testing/ to)."""
    known = modules_under(SRC, "phasegate")
    running = tuple(
        f"phasegate.{name}" for name in ("workspace", "tasks", "planning", "pipelines", "batches")
    )
    reaching = [
        str(imp)
        for name, file in known.items()
        if name.startswith(("phasegate.testing", "phasegate.agents.scripted"))
        for imp in imports_of(name, file, known, "phasegate")
        if imp.target.startswith(running)
    ]
    assert reaching == []


def test_every_module_is_in_a_layer() -> None:
    """A new package must be placed in LAYERS before it can be checked."""
    for name in modules_under(SRC, "phasegate"):
        layer_of(name, LAYERS)


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A package ``toy`` whose ``low.a`` reaches up to ``high.b`` inside a function, and
    whose ``high.b`` and ``high.c`` import each other."""
    files = {
        "toy/__init__.py": "",
        "toy/low/__init__.py": "",
        "toy/low/a.py": "def f():\n    from toy.high import b\n",
        "toy/high/__init__.py": "",
        "toy/high/b.py": "from toy.high.c import x\n",
        "toy/high/c.py": "import toy.high.b\nx = 1\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def test_the_checker_names_an_upward_import_made_inside_a_function(toy: Path) -> None:
    """The offending import is named with its file and line."""
    layers = (("toy.low",), ("toy.high",), ("toy",))

    found = upward_imports(toy, "toy", layers)

    assert [(str(imp.target), imp.line, layer) for imp, layer in found] == [
        ("toy.high.b", 2, "toy.high")
    ]
    assert str(found[0][0]).endswith("toy/low/a.py:2: toy.low.a imports toy.high.b")


def test_the_checker_finds_a_cycle_between_two_modules(toy: Path) -> None:
    """``from toy.high.c import x`` and ``import toy.high.b`` make one circle."""
    assert import_cycles(toy, "toy") == [["toy.high.b", "toy.high.c"]]


def test_test_modules_import_shared_helpers_never_other_test_modules() -> None:
    """Shared code lives in tests/helpers or a conftest's fixtures, so a test module can be
    moved or deleted without breaking another."""
    root = SRC.parent
    known = modules_under(root, "tests")
    reaching = [
        str(imp)
        for name, file in known.items()
        for imp in imports_of(name, file, known, "tests")
        if not imp.target.startswith("tests.helpers")
    ]
    assert reaching == []
