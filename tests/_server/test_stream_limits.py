"""Event streams are bounded: per client address (429) and in all (503), each refused with
``too_many_streams`` and a ``Retry-After``; a stream that ends frees its slot."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.service import Service, running_service

pytestmark = pytest.mark.cli

WAIT = 30.0


def _client_from(service: Service, address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (any 127.x.y.z is this machine)."""
    client = httpx.Client(
        base_url=service.url, headers=service.auth, timeout=WAIT,
        transport=httpx.HTTPTransport(local_address=address),
    )  # fmt: skip
    service.clients.append(client)
    return client


@contextlib.contextmanager
def _streams(client: httpx.Client, run_id: str) -> Iterator[list[httpx.Response]]:
    """Open streams of ``run_id``'s events, each left open (headers read) until the block
    ends; :func:`_open` adds one."""
    opened: list[httpx.Response] = []
    try:
        yield opened
    finally:
        for response in opened:
            response.close()


def _open(client: httpx.Client, run_id: str, into: list[httpx.Response]) -> httpx.Response:
    request = client.build_request("GET", f"/v1/runs/{run_id}/events")
    response = client.send(request, stream=True)
    into.append(response)
    return response


def test_streams_past_the_bound_of_one_client_or_of_all_are_refused_until_one_ends(
    root: Path,
) -> None:
    script = root / "scripts" / "hang.yaml"
    bounds = ("--max-streams-per-client", "2", "--max-streams", "3")
    with running_service(root, "--model-script", script, *bounds) as service:
        first, second = _client_from(service, "127.0.0.1"), _client_from(service, "127.0.0.2")
        run = service.start_run(first, task="task.yaml", workdir="project")["id"]
        with _streams(first, run) as mine, _streams(second, run) as theirs:
            kept = [_open(first, run, mine).status_code for _ in range(2)]
            over_mine = _open(first, run, mine)
            over_mine.read()
            other = _open(second, run, theirs)
            over_all = _open(second, run, theirs)
            over_all.read()
            healthy = httpx.get(service.url + "/healthz").json()["status"]
            mine[0].close()
            deadline = time.monotonic() + WAIT
            while (again := _open(second, run, theirs)).status_code != 200:
                again.read()
                assert time.monotonic() < deadline, "a closed stream never freed its slot"
            first.post(f"/v1/runs/{run}/cancel")

    assert kept == [200, 200]
    assert other.status_code == 200
    assert healthy == "ok"
    for refused, status in ((over_mine, 429), (over_all, 503)):
        assert refused.status_code == status
        assert refused.json()["error"]["code"] == "too_many_streams"
        assert refused.headers["retry-after"] == "10"
    assert again.status_code == 200
