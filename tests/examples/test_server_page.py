"""The service's browser page (examples/server/index.html) in a real browser.

Against the real ``phasegate serve``, the page starts the example task and follows it to
its verdict. A stand-in service (http.server in a thread) checks what the real one cannot be
made to do on cue: it streams an accepted two-phase run holding hostile text and drops the
first connection after event 3, so the page must reconnect with ``Last-Event-ID`` and show
the text as text. Debian's headless chromium loads the page with ``#token=...&autostart=1``
and is asked over the DevTools protocol for the DOM once the run has ended. Skips without
chromium (``make chromium``), unless PHASEGATE_REQUIRE_CHROMIUM=1 turns the skip into a
failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from phasegate._server.ui import ui_page
from tests.helpers.devtools import dom_once
from tests.helpers.service import running_service
from tests.helpers.service_root import make_root
from tests.helpers.service_runs import HOSTILE, RUN_ID, accepted_run_lines, run_info, sse_frames

PAGE = Path(__file__).resolve().parents[2] / "examples" / "server" / "index.html"
TOKEN = "tok-3f9a"
CHROMIUM = shutil.which("chromium")
REQUIRED = os.environ.get("PHASEGATE_REQUIRE_CHROMIUM") == "1"
browser = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED, reason="no chromium on PATH (`make chromium`)"
)


@dataclass
class Seen:
    """What the stand-in service was asked: (method, path, headers, body) per request."""

    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)

    def of(self, method: str, path: str) -> list[tuple[dict[str, str], bytes]]:
        """The headers and bodies of the requests to ``method path``."""
        return [(h, b) for m, p, h, b in self.requests if (m, p) == (method, path)]


@contextmanager
def stand_in_service() -> Iterator[tuple[str, Seen]]:
    """A fake ``phasegate serve`` on 127.0.0.1: its base URL and what it was asked. Its event
    stream sends events 1 to 3 and closes on the first connection; later connections replay
    from after their ``Last-Event-ID`` to ``done``."""
    seen = Seen()
    frames = sse_frames(accepted_run_lines())
    events_path = f"/v1/runs/{RUN_ID}/events"

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> bytes:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.requests.append((self.command, self.path, dict(self.headers.items()), body))
            return body

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._record()
            if self.path == "/ui":
                self._send(200, "text/html; charset=utf-8", ui_page())
            elif self.path == events_path:
                after = int(self.headers.get("Last-Event-ID") or 0)
                first = len(seen.of("GET", events_path)) == 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                self.wfile.write(b"retry: 200\n: ping\n\n")
                for frame in frames[after : 3 if first else None]:
                    self.wfile.write(frame)
                    self.wfile.flush()
            else:
                self._send(404, "application/json", b'{"error": {"code": "not_found", '
                           b'"message": "no such thing", "field": null}}')  # fmt: skip

        def do_POST(self) -> None:
            self._record()
            if self.path == "/v1/runs":
                body = json.dumps(run_info(status="queued")).encode()
                self._send(202, "application/json", body)
            else:
                self._send(404, "application/json", b"{}")

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def live_dom(tmp_path: Path, url: str) -> str:
    """The DOM of the page at ``url`` once its run has ended (``data-status`` says how),
    waited for in real time: a live event stream keeps chromium's virtual time from waiting
    for anything."""
    if CHROMIUM is None:
        pytest.fail("PHASEGATE_REQUIRE_CHROMIUM=1 but chromium is not on PATH: `make chromium`")
    profile = Path(tempfile.mkdtemp(prefix="profile-", dir=tmp_path))
    ended = (
        "['finished', 'failed', 'cancelled', 'interrupted']"
        ".includes(document.body && document.body.dataset.status)"
    )
    return dom_once(CHROMIUM, profile, url, ended, timeout=90)


class Elements(HTMLParser):
    """Every element of a document as (tag, attributes), and the text of each id."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, str] = {}
        self._ids: list[str | None] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._ids.append(dict(attrs).get("id"))

    def handle_endtag(self, tag: str) -> None:
        if self._ids:
            self._ids.pop()

    def handle_data(self, data: str) -> None:
        for element_id in self._ids:
            if element_id:
                self.texts[element_id] = self.texts.get(element_id, "") + data

    def attrs(self, tag: str, **having: str) -> list[dict[str, str | None]]:
        """The attributes of each ``tag`` element whose attributes include ``having``."""
        wanted = {key.replace("_", "-"): value for key, value in having.items()}
        return [a for t, a in self.elements if t == tag and wanted.items() <= a.items()]


@browser
def test_the_page_starts_a_run_and_shows_its_phases_verdict_and_hostile_text_as_text(
    tmp_path: Path,
) -> None:
    """From ``#token=...&task=...&workdir=...&autostart=1``: the page POSTs the run with the
    token, follows its events, reconnects after the cut with ``Last-Event-ID: 3``, and ends
    showing both phases accepted and the verdict. The marker text holding an ``<img
    onerror>`` is shown as text: no element is made of it, its handler never runs."""
    with stand_in_service() as (base, seen):
        fragment = f"#token={TOKEN}&task=tasks/fix.yaml&workdir=project&mode=gate&autostart=1"
        dom = live_dom(tmp_path, f"{base}/ui{fragment}")
    page = Elements(dom)
    (body,) = page.attrs("body")
    assert (body.get("data-status"), body.get("data-verdict")) == ("finished", "accepted")
    assert "data-pwned" not in body
    rows = {a["data-phase"]: a["data-status"] for a in page.attrs("tr") if "data-phase" in a}
    assert rows == {"1": "accepted", "2": "accepted"}
    assert (page.texts["status"], page.texts["verdict"], page.texts["tools"]) == (
        "finished", "accepted", "2",
    )  # fmt: skip
    assert page.attrs("img") == []
    assert HOSTILE in page.texts["log"]
    assert len(page.attrs("li", data_event="phase.marker")) == 1  # shown once, not replayed

    ((post_headers, post_body),) = seen.of("POST", "/v1/runs")
    assert post_headers["Authorization"] == f"Bearer {TOKEN}"
    assert json.loads(post_body) == {"task": "tasks/fix.yaml", "workdir": "project", "mode": "gate"}
    streams = seen.of("GET", f"/v1/runs/{RUN_ID}/events")
    assert [h.get("Last-Event-ID") for h, _ in streams] == [None, "3"]
    assert {h["Authorization"] for h, _ in streams} == {f"Bearer {TOKEN}"}
    assert all(TOKEN not in path for _, path, _, _ in seen.requests)


def test_the_page_is_self_contained_and_its_script_matches_its_content_security_policy() -> None:
    """No external resource, no innerHTML; the policy allows only the page's own inline
    script (by its hash: inline event handlers, as injected markup would carry, stay blocked)
    and connections to the service itself."""
    text = PAGE.read_text(encoding="utf-8")
    assert ui_page() == PAGE.read_bytes()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text)
    assert "innerHTML" not in text and "insertAdjacentHTML" not in text
    assert "document.write" not in text
    script = re.search(r"<script>(.*?)</script>", text, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)
    assert policy is not None
    assert f"script-src 'sha256-{digest}'" in policy.group(1), (
        "the script changed: put its new hash in the page's Content-Security-Policy"
    )
    assert "default-src 'none'" in policy.group(1)
    assert "connect-src 'self'" in policy.group(1)


@browser
@pytest.mark.cli
def test_the_page_served_by_the_real_service_runs_a_task_to_its_verdict(tmp_path: Path) -> None:
    """``phasegate serve`` serves the page at /ui without a token; from the fragment the page
    starts the example task in a copy of its project and follows it live to its verdict."""
    root = make_root(tmp_path / "root")
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        answer = httpx.get(service.url + "/ui")
        fragment = (
            f"#token={service.token}&task=task.yaml&workdir=project&copy_workdir=1&autostart=1"
        )
        dom = live_dom(tmp_path, f"{service.url}/ui{fragment}")
        runs = service.client().get("/v1/runs").json()["runs"]

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"
    page = Elements(dom)
    (body,) = page.attrs("body")
    assert (body.get("data-status"), body.get("data-verdict")) == ("finished", "accepted")
    assert body.get("data-run") == runs[0]["id"]
    rows = {a["data-phase"]: a["data-status"] for a in page.attrs("tr") if "data-phase" in a}
    assert rows == {"1": "accepted", "2": "accepted"}
    assert [run["status"] for run in runs] == ["finished"]
