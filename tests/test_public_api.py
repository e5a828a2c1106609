"""The public surface: what users import, and what the README promises."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import phasegate
import phasegate.testing

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_api_is_exactly_what_all_lists_and_sorted() -> None:
    """__all__ is sorted and every name in it exists; nothing private leaks; the lazy name
    map (what resolves on first use) lists exactly the names of __all__, in both packages."""
    assert phasegate.__all__ == sorted(phasegate.__all__)
    for name in [*phasegate.__all__]:
        assert hasattr(phasegate, name), name
    assert not [n for n in phasegate.__all__ if n.startswith("_")]
    assert phasegate.testing.__all__ == sorted(phasegate.testing.__all__)
    for package in (phasegate, phasegate.testing):
        assert sorted(package._WHERE) == package.__all__, package.__name__


def test_importing_phasegate_does_not_import_claude_agent_sdk() -> None:
    """The SDK (0.6 s of imports) stays lazy so check/judge/report start fast; so do
    OpenTelemetry, jsonschema, structlog and YAML, which only some commands need."""
    heavy = ("claude_agent_sdk", "opentelemetry", "jsonschema", "structlog", "yaml")
    code = (
        "import sys, phasegate, phasegate._cli.app\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(heavy)!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    """The README's example, with its placeholder path pointed at a copy of the project."""
    readme = (ROOT / "README.md").read_text()
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
        exec(compile(source, "README.md", "exec"), {})
    assert "accepted 2" in output.getvalue().splitlines()
    assert "{'files_changed': ['app.py']" in output.getvalue()
