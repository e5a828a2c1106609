"""The Python client against a real ``phasegate serve``: start, follow, wait, cancel, errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from phasegate.client import ServiceClient, ServiceError
from tests.helpers.service import running_service
from tests.helpers.service_root import make_root

pytestmark = pytest.mark.cli


def test_the_client_starts_a_run_follows_its_events_and_waits_for_its_report(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path / "root")

    async def session(url: str, token_file: Path) -> tuple[list[str], str, str | None, int]:
        async with ServiceClient(url, token_file=token_file) as client:
            run = await client.start(task="task.yaml", workdir="project", copy_workdir=True,
                                     idempotency_key="client-1")  # fmt: skip
            again = await client.start(task="task.yaml", workdir="project", copy_workdir=True,
                                       idempotency_key="client-1")  # fmt: skip
            assert again.id == run.id
            names = [event.event async for event in client.events(run.id)]
            final = await client.wait(run.id)
            listed = [r async for r in client.runs()]
            return names, final.status, final.verdict, len(listed)

    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        token_file = root / ".phasegate" / "server-token"
        names, status, verdict, listed = asyncio.run(session(service.url, token_file))

    assert names[0] == "run.queued" and names[-1] == "done"
    assert names == [json.loads(line)["event"] for line in service.log_lines_of_only_run()]
    assert (status, verdict, listed) == ("finished", "accepted", 1)


def test_the_client_cancels_and_turns_refusals_into_service_errors(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")

    async def session(url: str, token: str) -> tuple[str, ServiceError, ServiceError]:
        async with ServiceClient(url, token) as client:
            run = await client.start(task="task.yaml", workdir="project")
            cancelled = await client.cancel(run.id)
            with pytest.raises(ServiceError) as escape:
                await client.start(task="task.yaml", workdir="../")
        async with ServiceClient(url, "not-the-token") as stranger:
            with pytest.raises(ServiceError) as refused:
                await stranger.get(run.id)
        return cancelled.status, escape.value, refused.value

    with running_service(root, "--model-script", root / "scripts" / "hang.yaml") as service:
        status, escape, refused = asyncio.run(session(service.url, service.token))

    assert status == "cancelled"
    assert (escape.status_code, escape.code, escape.field) == (400, "outside_root", "workdir")
    assert (refused.status_code, refused.code) == (401, "unauthorized")
    assert refused.exit_code == 2
