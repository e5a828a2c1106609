"""The run service in this process: a cancel that comes while a run's process starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from phasegate._server.records import EVENTS, run_dir
from phasegate._server.service import RunService
from phasegate._server.settings import ServiceSettings
from phasegate.client.schema import RunRequest


def test_a_run_cancelled_while_its_process_starts_never_starts_its_agent(root: Path) -> None:
    settings = ServiceSettings(root=root, max_concurrent=1,
                               model_script=root / "scripts" / "task.yaml")  # fmt: skip

    async def main() -> tuple[str, list[str]]:
        service = RunService(settings)
        service.recover()
        request = RunRequest(task="task.yaml", workdir="project", copy_workdir=True)
        live, _ = await service.submit(request, None)
        live.ending = "cancelled"  # as a cancel handled before the run's first step
        assert live.task is not None
        await live.task
        log = (run_dir(root, live.record.id) / EVENTS).read_text()
        return live.record.status, [line.split('"')[3] for line in log.splitlines()]

    status, names = asyncio.run(main())
    assert status == "cancelled"
    assert "run.started" not in names
    assert names[-2:] == ["run.cancelled", "done"]
