"""The plugin's launcher (plugin/bin/phasegate-plugin) with its own runtime: the SessionStart
``setup`` byte-compiles the plugin's own phasegate once, so that a user who keeps Python from
writing bytecode (``PYTHONDONTWRITEBYTECODE``) does not compile it at every gated stop."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _plugin_copy(folder: Path) -> Path:
    """The plugin's folder as installed: launcher, version, lock file and its phasegate."""
    root = folder / "plugin-root"
    (root / "plugin/bin").mkdir(parents=True)
    shutil.copy(ROOT / "plugin/bin/phasegate-plugin", root / "plugin/bin")
    shutil.copy(ROOT / "plugin/requirements.lock", root / "plugin")
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(ROOT / "src/phasegate", root / "src/phasegate",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return root


def _own_runtime(root: Path, data: Path) -> None:
    """A runtime in ``data`` that the launcher takes as set up: its python is this test's."""
    runtime = data / "runtime"
    (runtime / "bin").mkdir(parents=True)
    python = runtime / "bin/python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    lock = (root / "plugin/requirements.lock").read_bytes()
    stamp = subprocess.run(["cksum"], input=lock, capture_output=True, check=True).stdout
    (runtime / ".installed").write_bytes(stamp)


def _setup(root: Path, data: Path, project: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(data.parent),
        "CLAUDE_PLUGIN_ROOT": str(root),
        "CLAUDE_PLUGIN_DATA": str(data),
        "CLAUDE_PROJECT_DIR": str(project),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.run(
        ["sh", str(root / "plugin/bin/phasegate-plugin"), "setup"],
        input="{}", env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_setup_with_the_plugins_own_runtime_byte_compiles_its_phasegate_once(
    tmp_path: Path,
) -> None:
    root = _plugin_copy(tmp_path)
    data = tmp_path / "data"
    project = tmp_path / "project"
    project.mkdir()
    _own_runtime(root, data)
    done = _setup(root, data, project)
    assert done.returncode == 0, done.stderr
    tag = sys.implementation.cache_tag
    compiled = root / f"src/phasegate/_plugin/__pycache__/gated.{tag}.pyc"
    assert compiled.is_file()
    sources = {p.relative_to(root) for p in (root / "src/phasegate").rglob("*.py")}
    cached = {
        (p.parent.parent / f"{p.name.split('.')[0]}.py").relative_to(root)
        for p in (root / "src/phasegate").rglob(f"*.{tag}.pyc")
    }
    assert cached == sources
    before = compiled.stat().st_mtime_ns
    os.utime(root / "src/phasegate/_plugin/gated.py")  # a stale pyc is not compiled again
    assert _setup(root, data, project).returncode == 0
    assert compiled.stat().st_mtime_ns == before
