"""Headless chromium driven over the DevTools protocol on a pipe (no websocket needed).

``--remote-debugging-pipe`` makes chromium read commands from its file descriptor 3 and
write answers to 4, as JSON texts each ended by a NUL byte. That is enough to load a page,
wait in real time until a condition holds in it (a live event stream keeps virtual time from
waiting), and read its DOM.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate._process.starting import short_base

CHROMIUM_SOCKETS = 64
"""Bytes below TMPDIR that chromium's own sockets take (``.org.chromium.Chromium.XXXXXX/
SingletonSocket`` and the like): under a long TMPDIR (CI runs the suite under one of 100
characters) they pass the AF_UNIX limit and chromium dies at start."""


def chromium_environment() -> dict[str, str]:
    """The environment to start chromium in: this one, with TMPDIR moved to a short folder
    when chromium's sockets would not fit under it (``short_base``, the rule phasegate's own
    sockets follow)."""
    base = short_base(CHROMIUM_SOCKETS, "chromium's sockets", "a shorter TMPDIR")
    return {**os.environ, "TMPDIR": str(base)}


_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--remote-debugging-pipe")  # fmt: skip


class _Pipe:
    def __init__(self, chromium: str, profile: Path) -> None:
        to_chromium_r, self._to_chromium = os.pipe()
        self._from_chromium, from_chromium_w = os.pipe()
        # In the child, fd 3 reads commands and fd 4 writes answers.
        self.process = subprocess.Popen(
            [chromium, *_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=chromium_environment(),
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_chromium_r, 3),
                                                 os.dup2(from_chromium_w, 4), None)[2],
        )  # fmt: skip
        os.close(to_chromium_r)
        os.close(from_chromium_w)
        self._buffer = b""
        self._next = 0

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chromium, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chromium, 65536)
            if not chunk:
                raise AssertionError("chromium closed its DevTools pipe")
            self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(text)
        return parsed

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chromium)
        os.close(self._from_chromium)


def dom_once(chromium: str, profile: Path, url: str, until: str, *, timeout: float = 60) -> str:
    """Load ``url`` and return its DOM once the JavaScript expression ``until`` is true (an
    AssertionError, with the DOM, when it is not within ``timeout`` seconds)."""
    pipe = _Pipe(chromium, profile)
    try:
        target = pipe.call("Target.createTarget", url=url)["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

        def evaluate(expression: str) -> Any:
            result = pipe.call("Runtime.evaluate", session, expression=expression,
                               returnByValue=True)  # fmt: skip
            return result.get("result", {}).get("value")

        deadline = time.monotonic() + timeout
        while not evaluate(f"Boolean({until})"):
            if time.monotonic() > deadline:
                dom = evaluate("document.documentElement.outerHTML")
                raise AssertionError(f"{until} never held within {timeout} s:\n{dom}")
            time.sleep(0.1)
        dom = evaluate("document.documentElement.outerHTML")
        assert isinstance(dom, str)
        return dom
    finally:
        pipe.close()


@dataclass(frozen=True)
class Loaded:
    """A page as chromium showed it: the visible text (``innerText``), the DOM, a screenshot
    (PNG bytes, when asked for) and the navigation timings (milliseconds from the start)."""

    text: str
    dom: str
    png: bytes | None
    timing: dict[str, float]


_TIMING = """(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByType("paint")
    .find((e) => e.name === "first-contentful-paint");
  return {dom_content_loaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
          first_contentful_paint: paint ? paint.startTime : -1,
          transfer_size: nav.transferSize, decoded_size: nav.decodedBodySize};
})()"""


def load_page(
    chromium: str, profile: Path, url: str, *, screenshot: bool = False,
    width: int = 1200, height: int = 1600, timeout: float = 60,
) -> Loaded:  # fmt: skip
    """Load ``url`` in a ``width`` by ``height`` window and wait for its load event; what it
    shows (a screenshot of the window's first screen when ``screenshot``)."""
    pipe = _Pipe(chromium, profile)
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        pipe.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)  # fmt: skip
        pipe.call("Page.enable", session)
        pipe.call("Page.navigate", session, url=url)

        def evaluate(expression: str) -> Any:
            result = pipe.call("Runtime.evaluate", session, expression=expression,
                               returnByValue=True)  # fmt: skip
            return result.get("result", {}).get("value")

        deadline = time.monotonic() + timeout
        ready = ("document.readyState === 'complete' && document.URL !== 'about:blank' && "
                 "performance.getEntriesByType('navigation')[0].loadEventEnd > 0")  # fmt: skip
        while not evaluate(f"Boolean({ready})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not load within {timeout} s")
            time.sleep(0.05)
        png = None
        if screenshot:
            data = pipe.call("Page.captureScreenshot", session, format="png")["data"]
            png = base64.b64decode(data)
        return Loaded(text=evaluate("document.body.innerText"),
                      dom=evaluate("document.documentElement.outerHTML"),
                      png=png, timing=evaluate(_TIMING))  # fmt: skip
    finally:
        pipe.close()
