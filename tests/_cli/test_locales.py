"""A machine whose locale is not UTF-8 (the C locale without coercion; Windows' code pages):
phasegate reads and writes its files as UTF-8 all the same, and prints what it must."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.helpers.cli import PHASEGATE
from tests.helpers.scenarios import EXAMPLE

ASCII_ONLY = {
    **os.environ,
    "LC_ALL": "C",
    "LANG": "C",
    "PYTHONCOERCECLOCALE": "0",  # no C.UTF-8 in its place
    "PYTHONUTF8": "0",
}
"""An environment where Python's default encoding is ASCII."""


def test_a_run_under_an_ascii_locale_reads_and_writes_utf_8(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    text = (EXAMPLE / "task.yaml").read_text(encoding="utf-8")
    task.write_text(text.replace("Find the", "Überall — find the", 1), encoding="utf-8")
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    comment = "# Grüße, 日本語, ✓\n"
    with (work / "app.py").open("a", encoding="utf-8") as app:
        app.write(comment)
    log = tmp_path / "events.jsonl"
    probe = [PHASEGATE[0], "-c", "import locale; print(locale.getpreferredencoding(False))"]

    encoding = subprocess.run(probe, env=ASCII_ONLY, capture_output=True, text=True, check=True)
    done = subprocess.run(
        [*PHASEGATE, "run", task, "--workdir", work, "--agent", "scripted", "--script",
         EXAMPLE / "model.yaml", "--log-file", log, "--json"],
        env=ASCII_ONLY, capture_output=True, timeout=120, check=False,
    )  # fmt: skip

    assert encoding.stdout.strip().lower() in ("ascii", "ansi_x3.4-1968")
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr
    assert json.loads(done.stdout)["verdict"] == "accepted"
    assert (work / "app.py").read_text(encoding="utf-8").endswith(comment)
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert events[-1]["event"] == "run.completed"
