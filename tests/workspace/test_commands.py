"""Running one check command (phasegate.workspace.commands): its output kept to a bounded
tail however much it prints, and nothing it started left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from phasegate.validators.stage_checks import output_tail
from phasegate.workspace.commands import TAIL_BYTES, OutputTail, run_bounded
from tests.helpers.processes import gone

FLOOD_MB = 400
"""What the flooding command prints: far more than a process running it needs besides."""


def python(code: str) -> list[str]:
    """An argv running ``code`` with this interpreter."""
    return [sys.executable, "-c", textwrap.dedent(code)]


def fed(data: bytes, piece: int) -> str:
    """The text an :class:`OutputTail` gives for ``data`` arriving ``piece`` bytes at a
    time."""
    tail = OutputTail()
    for start in range(0, len(data), piece):
        tail.add(data[start : start + piece])
    return tail.text()


OUTPUTS = {
    "a few lines": b"one\ntwo\nthree\n",
    "many short lines": b"".join(b"line %d\n" % i for i in range(5000)),
    "one huge line": b"x" * (3 * TAIL_BYTES) + b" the end",
    "multibyte characters": "é€😀 ligne\n".encode() * 4000,
    "an error, then a flood of blank lines": b"error: boom\n" + b"\n" * (4 * TAIL_BYTES),
    "blank lines between words": b"start" + b" \n" * (2 * TAIL_BYTES) + b"end\n",
    "nothing but blanks": b"\n \t" * TAIL_BYTES,
    "undecodable bytes": b"\xff\xfe" * TAIL_BYTES + b"\nlast",
}


@pytest.mark.parametrize("name", OUTPUTS)
@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_the_kept_tail_reads_as_the_tail_of_the_whole_output(name: str, piece: int) -> None:
    """However the output arrives in pieces, the detail shows what it would show were all
    of it kept (the cut marked with ``…`` alike)."""
    data = OUTPUTS[name]
    if piece == 1 and len(data) > 100_000:
        data = data[-100_000:]  # one byte at a time: the end is what matters
    assert fed(data, piece) == output_tail(data.decode("utf-8", errors="replace"))


def test_a_command_flooding_its_output_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """A command printing hundreds of megabytes costs the process that runs it no more than
    the tail it keeps: its peak memory grows far less than what was printed (measured from
    the peak the process had before, its imports included), and the detail ends with the
    last line."""
    runner = textwrap.dedent(f"""
        import json, resource, sys
        from pathlib import Path
        from phasegate.workspace.commands import run_bounded
        before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        flood = '''
        import sys
        block = (b"x" * 1023 + b"\\\\n") * 1024
        for _ in range({FLOOD_MB}):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.write(b"the last line\\\\n")
        '''
        outcome = run_bounded(
            [sys.executable, "-c", flood], cwd=Path.cwd(), env=dict(__import__("os").environ),
            timeout=120,
        )
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({{"exit": outcome.exit_code, "output": outcome.output,
                          "grown_mb": (peak_kb - before_kb) // 1024}}))
    """)
    done = subprocess.run(
        [sys.executable, "-c", runner],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["exit"] == 0
    assert result["output"].splitlines()[-1] == "the last line"
    assert result["output"].startswith("…")
    assert result["grown_mb"] < FLOOD_MB // 4, result["grown_mb"]


def test_a_command_flooding_without_end_is_stopped_at_its_timeout(work: Path) -> None:
    """Output that never stops neither keeps the gate waiting nor fills its memory: the
    timeout stops it, and the detail shows the end of what it printed."""
    outcome = run_bounded(
        python("""
            import sys
            line = b"flood " * 100 + b"\\n"
            while True:
                sys.stdout.buffer.write(line * 100)
        """),
        cwd=work,
        env=os.environ,
        timeout=1.0,
    )
    assert (outcome.exit_code, outcome.timed_out) == (None, True)
    assert outcome.output.startswith("…")
    assert outcome.output.rsplit("\n", 1)[-1].startswith("flood flood")
    assert len(outcome.output) <= 2001


def test_what_a_command_leaves_running_is_ended_when_it_exits(work: Path) -> None:
    """A process a check started in the background, its output elsewhere, does not outlive
    the check: it is killed as the command exits."""
    outcome = run_bounded(
        python("""
            import subprocess, sys
            left = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(60)"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            print(left.pid)
        """),
        cwd=work,
        env=os.environ,
        timeout=30,
    )
    assert outcome.exit_code == 0
    assert gone(int(outcome.output))
