"""A real ``phasegate serve`` process on a free port, and a real HTTP client for it."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.cli import PHASEGATE

_LISTENING = re.compile(r"listening on (http://\S+)")
_START_TIMEOUT = 60.0


@dataclass
class Service:
    """A running service: its process, address and token, and what it said on stderr."""

    process: subprocess.Popen[str]
    root: Path
    url: str
    token: str
    said: list[str] = field(default_factory=list)
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def auth(self) -> dict[str, str]:
        """The header every /v1 request needs."""
        return {"Authorization": f"Bearer {self.token}"}

    def client(self) -> httpx.Client:
        """An HTTP client for the service, with the token (closed with the service)."""
        client = httpx.Client(base_url=self.url, headers=self.auth, timeout=60)
        self.clients.append(client)
        return client

    def start_run(self, client: httpx.Client, **body: Any) -> dict[str, Any]:
        """POST /v1/runs; the run, after checking the answer is 202."""
        answer = client.post("/v1/runs", json=body)
        assert answer.status_code == 202, answer.text
        run: dict[str, Any] = answer.json()
        return run

    def wait(self, client: httpx.Client, run_id: str, *, timeout: float = 120) -> dict[str, Any]:
        """The run once it has ended (followed through its event stream)."""
        events(client, run_id, timeout=timeout)
        run: dict[str, Any] = client.get(f"/v1/runs/{run_id}").json()
        return run

    def signal(self, number: int) -> int:
        """Send ``number`` and wait for the process to end; its exit code."""
        self.process.send_signal(number)
        return self.process.wait(timeout=120)

    def log_lines_of_only_run(self) -> list[str]:
        """The event log lines of the one run the service has."""
        (run_id,) = os.listdir(self.root / ".phasegate" / "runs")
        return self.log_lines(run_id)

    def log_lines(self, run_id: str) -> list[str]:
        """The lines of the run's event log on disk."""
        path = self.root / ".phasegate" / "runs" / run_id / "events.jsonl"
        return path.read_text().splitlines()


@contextlib.contextmanager
def running_service(
    root: Path,
    *args: str | Path,
    token_file: Path | None = None,
    temporary: Path | None = None,
) -> Iterator[Service]:
    """``phasegate serve --root ROOT --port 0 ARGS``, stopped (SIGTERM, then SIGKILL) after;
    with ``token_file``, the service reads its token there; with ``temporary``, that folder
    is its temporary folder (``TMPDIR``), out of reach of other tests' services."""
    if token_file is not None:
        args = (*args, "--token-file", token_file)
    env = None if temporary is None else {**os.environ, "TMPDIR": str(temporary)}
    process = subprocess.Popen(
        [*PHASEGATE, "serve", "--root", str(root), "--port", "0", *map(str, args)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=env,
    )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process, lines), daemon=True)
    reader.start()
    said: list[str] = []
    try:
        url = _wait_for_address(process, lines, said)
        token = (token_file or root / ".phasegate" / "server-token").read_text().strip()
        service = Service(process, root, url, token, said)
        threading.Thread(target=_keep_reading, args=(lines, said), daemon=True).start()
        try:
            yield service
        finally:
            for client in service.clients:
                client.close()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        reader.join(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@dataclass(frozen=True)
class StreamedEvent:
    """One Server-Sent Event as received."""

    id: int
    event: str
    data: str

    @property
    def json(self) -> dict[str, Any]:
        """The data, parsed."""
        parsed: dict[str, Any] = json.loads(self.data)
        return parsed


def events(
    client: httpx.Client,
    run_id: str,
    *,
    last_event_id: int | None = None,
    stop_after: int | None = None,
    timeout: float = 120,
    headers: dict[str, bytes] | None = None,
) -> list[StreamedEvent]:
    """Read the run's event stream until it closes (or ``stop_after`` events, then hang up);
    ``headers`` go with the request as they are."""
    sent = {name.encode(): value for name, value in (headers or {}).items()}
    if last_event_id is not None:
        sent[b"Last-Event-ID"] = str(last_event_id).encode()
    received: list[StreamedEvent] = []
    fields: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=sent) as answer:
        assert answer.status_code == 200, answer.read()
        for line in answer.iter_lines():
            assert time.monotonic() < deadline, f"the stream of {run_id} did not end in time"
            if line == "" and "data" in fields:
                received.append(StreamedEvent(int(fields["id"]), fields["event"], fields["data"]))
                fields = {}
                if stop_after is not None and len(received) >= stop_after:
                    break
            elif line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
    return received


def wait_for_tool_call(service: Service, run_id: str, *, timeout: float = 60.0) -> None:
    """Until run ``run_id`` has called a tool: with a script that hangs after one, the run is
    then in flight, its model answering no more."""
    deadline = time.monotonic() + timeout
    while not any('"tool.called"' in line for line in service.log_lines(run_id)):
        assert time.monotonic() < deadline, "the run never reached its hang"
        time.sleep(0.05)


def descendants(pid: int) -> dict[int, str]:
    """Every living process below ``pid`` (through /proc), with its command line."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
        commands[int(entry)] = command.decode(errors="replace")
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found[child] = commands.get(child, "")
        todo.extend(children.get(child, []))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a living process (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _read_lines(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    assert process.stderr is not None
    for line in process.stderr:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _keep_reading(lines: queue.Queue[str | None], said: list[str]) -> None:
    while (line := lines.get()) is not None:
        said.append(line)


def _wait_for_address(
    process: subprocess.Popen[str], lines: queue.Queue[str | None], said: list[str]
) -> str:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError(f"phasegate serve ended: {process.wait()}\n" + "\n".join(said))
        said.append(line)
        if match := _LISTENING.search(line):
            return match.group(1)
    raise AssertionError("phasegate serve did not start listening:\n" + "\n".join(said))
