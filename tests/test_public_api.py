"""The public surface: what users import, and what the README promises."""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import phasegate
import phasegate.client
import phasegate.testing
from phasegate._lazy import public_names

ROOT = Path(__file__).resolve().parents[1]


PUBLIC_PACKAGES = (phasegate, phasegate.testing, phasegate.client)


def test_each_public_package_declares_its_names_once_in_its_stub() -> None:
    """The stub next to each package's __init__.py holds only the declaration (a docstring,
    one ``from M import Name as Name`` per name, the type of ``__all__``); ``__all__`` is read
    from it, sorted, every name of it (one wrapped in parentheses too), and nothing private is
    public."""
    for package in PUBLIC_PACKAGES:
        assert package.__file__ is not None
        stub = Path(package.__file__).with_suffix(".pyi")
        tree = ast.parse(stub.read_text())
        statements = tree.body[1:] if ast.get_docstring(tree) else tree.body
        for node in statements:
            if isinstance(node, ast.AnnAssign):
                assert ast.unparse(node) == "__all__: list[str]", stub
            else:
                assert isinstance(node, ast.ImportFrom), (stub, ast.unparse(node))
                assert all(alias.asname == alias.name for alias in node.names), ast.unparse(node)
        declared = {alias.name for node in statements if isinstance(node, ast.ImportFrom)
                    for alias in node.names}  # fmt: skip
        assert package.__all__ == sorted(public_names(package.__file__)) == sorted(declared), stub
        assert package.__all__, stub
        assert not [name for name in package.__all__ if name.startswith("_")]


def test_every_public_name_resolves_from_its_declared_module_and_has_a_docstring() -> None:
    """A stale line in a stub fails here, not in a user's import; every public item says
    what it is."""
    for package in PUBLIC_PACKAGES:
        assert package.__file__ is not None
        for name, module in public_names(package.__file__).items():
            value = getattr(package, name)
            assert value is getattr(importlib.import_module(module), name), (package, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert inspect.getdoc(value), f"{package.__name__}.{name} has no docstring"


def test_the_stubs_types_are_what_the_package_gives_at_run_time() -> None:
    """A type checker reads the stub; the lazy loader reads the same lines: ``dir()`` shows
    every public name before any was touched."""
    code = (
        "import phasegate, phasegate.testing, phasegate.client\n"
        "for p in (phasegate, phasegate.testing, phasegate.client):\n"
        "    assert set(p.__all__) <= set(dir(p)), p\n"
        "    assert not set(p.__all__) & set(vars(p)), 'imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# The pages for people who change phasegate (the site's Contributing section): naming modules is
# what they are for. architecture.md is the map of where each concept lives; claude-code.md
# lists each Claude Code contract with the module that relies on it, for whoever updates
# phasegate when a release changes one.
CONTRIBUTORS_PAGES = {"docs/architecture.md", "docs/claude-code.md"}


def _user_texts() -> dict[str, str]:
    """What users read and copy: the README, every page of docs/, the examples' Python."""
    texts = {"README.md": (ROOT / "README.md").read_text()}
    texts |= {
        str(path.relative_to(ROOT)): path.read_text() for path in (ROOT / "docs").rglob("*.md")
    }
    texts |= {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "examples").rglob("*.py")}
    return texts


def _code(name: str, text: str) -> str:
    return text if name.endswith(".py") else "".join(re.findall(r"```python\n(.*?)```", text, re.S))


def test_every_name_the_readme_docs_and_examples_import_is_public() -> None:
    """What a reader copies from the README, the docs or an example resolves through
    ``__all__``."""
    imported = {
        (where, package, name.strip())
        for where, text in _user_texts().items()
        for package, names in re.findall(
            r"^from (phasegate(?:\.testing|\.client)?) import ([^\n(]+)$", text, re.M
        )
        for name in names.split(",")
    }
    assert ("README.md", "phasegate", "Runner") in imported, "the pattern is stale"
    assert any(where.startswith("docs/") for where, _, _ in imported), "the pattern is stale"
    exported = {package.__name__: package.__all__ for package in PUBLIC_PACKAGES}
    assert {(w, p, n) for w, p, n in imported if n not in exported[p]} == set()


def test_the_readme_docs_and_examples_import_only_from_the_public_packages() -> None:
    """Users copy these imports: they must not reach into subpackages that may move."""
    imported = {
        (where, module)
        for where, text in _user_texts().items()
        for module in re.findall(r"^\s*(?:from|import) (phasegate[\w.]*)", _code(where, text), re.M)
    }
    assert imported, "no phasegate import found: the pattern is stale"
    public = {package.__name__ for package in PUBLIC_PACKAGES}
    assert {(w, m) for w, m in imported if m not in public} == set()


def test_the_user_docs_never_send_readers_to_an_internal_module() -> None:
    """Prose names public homes too (``from phasegate import LoopRunner``), not module paths
    that may move (``phasegate.tasks.report``, ``src/phasegate/...``, ``phases/markers.py``).
    The pages of CONTRIBUTORS_PAGES are the exception."""
    subpackages = {
        path.stem if path.suffix == ".py" else path.name
        for path in (ROOT / "src" / "phasegate").iterdir()
        if path.name not in {"testing", "client", "__pycache__"} and path.suffix in {"", ".py"}
    }
    assert {"tasks", "_cli", "errors"} <= subpackages, "the pattern is stale"
    names = "|".join(sorted(subpackages))
    internal = re.compile(
        rf"\bphasegate\.(?:{names})\b|\bsrc/phasegate\b|(?<![\w/.])phasegate/(?:{names})\b"
        r"|\bphasegate\.(?:testing|client)\.\w+"
        # a module file named from the package's root (`phases/markers.py`), not a test's path
        rf"|(?<![\w/.])(?:{names})/[\w/]*\w\.py\b"
    )
    public = {
        f"{package.__name__}.{name}" for package in PUBLIC_PACKAGES for name in package.__all__
    }
    named = {
        (where, match.group(0))
        for where, text in _user_texts().items()
        if where not in CONTRIBUTORS_PAGES
        for match in internal.finditer(text)
        if match.group(0) not in public
    }
    assert named == set()


def test_importing_phasegate_does_not_import_claude_agent_sdk() -> None:
    """The SDK (0.6 s of imports) stays lazy so check/judge/report start fast; so do
    OpenTelemetry, jsonschema, structlog, YAML and pydantic, which only some commands need."""
    heavy = {"claude_agent_sdk", "opentelemetry", "jsonschema", "structlog", "yaml"}
    heavy |= {"pydantic", "pydantic_core"}
    code = (
        "import sys, phasegate, phasegate._cli.app\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("page", ["README.md", "docs/python.md"])
def test_the_first_python_example_runs_as_written(page: str, tmp_path: Path) -> None:
    """The README's example (the first of docs/python.md too), with its placeholder path
    pointed at a copy of the project."""
    readme = (ROOT / page).read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S)
    assert code is not None
    work = tmp_path / "project"
    shutil.copytree(ROOT / "examples/fix-vulnerability/project", work)
    source = code.group(1).replace(
        '"path/to/a/copy/of/examples/fix-vulnerability/project"', repr(str(work))
    )
    assert repr(str(work)) in source, "the README example's path placeholder changed"
    output = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(output):
        exec(compile(source, page, "exec"), {})
    assert "accepted 2" in output.getvalue().splitlines()
    assert "{'files_changed': ['app.py']" in output.getvalue()
