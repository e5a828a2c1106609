"""The page of a recorded run with many tool calls: its size, the time to render it in
Python, and the time headless chromium takes to load and paint it.

The recording is made by hand following docs/recordings.md
(``tests/helpers/recording_fixtures.py``'s ``many_calls``): one phase of N ``Read`` calls
(default 1,000), each with a result of 2,000 characters (a long tool result, as the writer
keeps it), every one folded in the page. It
prints the recording's size on disk, the page's size in bytes, the median time of
``render_page`` over five runs, and chromium's navigation timings (DOMContentLoaded, load,
first contentful paint; the median of three fresh browsers, the page loaded from a file).

Reported, not asserted: ``tests/recording/test_page_in_browser.py`` checks the page stays
usable (every call folded); this measures it. Needs Debian's chromium (``make chromium``);
without it only the Python figures are printed.

Run with ``make bench`` or ``.venv/bin/python bench/page.py [--calls N] [--result-chars C]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the hand-made recordings and the DevTools driver of the tests

from tests.helpers.devtools import load_page  # noqa: E402
from tests.helpers.recording_fixtures import many_calls  # noqa: E402

from phasegate.recording.page import render_page, write_page  # noqa: E402


def main() -> None:
    """Build the recording, render it, load it in chromium, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="tool calls (default 1000)")
    parser.add_argument("--result-chars", type=int, default=2000,
                        help="characters of each tool result (default 2000)")  # fmt: skip
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-page-") as scratch:
        folder = many_calls(Path(scratch) / "run", options.calls, result_chars=options.result_chars)
        on_disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        times = []
        for _ in range(5):
            started = time.perf_counter()
            page = render_page(folder)
            times.append(time.perf_counter() - started)
        written = write_page(folder)
        print(f"recording: {options.calls} tool calls of {options.result_chars} characters, "
              f"{on_disk / 1e6:.2f} MB on disk")  # fmt: skip
        print(f"page: {len(page.encode()):,} bytes ({len(page.encode()) / 1e6:.2f} MB)")
        print(f"render_page (read + render), median of 5: {statistics.median(times) * 1000:.0f} ms")
        chromium = shutil.which("chromium")
        if chromium is None:
            print("chromium: not on PATH (make chromium); no browser timings")
            return
        loads = []
        for n in range(3):
            profile = Path(scratch) / f"profile-{n}"
            loads.append(load_page(chromium, profile, written.as_uri(), timeout=120).timing)
        for name in ("dom_content_loaded", "load", "first_contentful_paint"):
            value = statistics.median(timing[name] for timing in loads)
            print(f"chromium {name.replace('_', ' ')}, median of 3: {value:.0f} ms")


if __name__ == "__main__":
    main()
