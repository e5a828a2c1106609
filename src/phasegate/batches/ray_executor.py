"""The Ray executor: each unit a Ray task on a cluster (``pip install 'phasegate[ray]'``).

A unit runs in a Ray worker with ``cpus_per_unit`` CPUs and returns its outcome, result
files included, to the batch process, which writes it; workers need phasegate installed and
the units' copy sources reachable, nothing else. Ray itself runs a unit again when the
worker running it is lost (up to ``max_retries`` times); a unit lost more often than that
ends in error, and the batch goes on. When the cluster itself fails, the batch stops
scheduling (:class:`~.executor.ExecutorError`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from typing import Any

from phasegate._process.starting import short_base, socket_fits
from phasegate.batches.executor import ExecutorError
from phasegate.batches.outcome import UnitJob, UnitOutcome
from phasegate.batches.unit_run import failed_outcome, run_unit_blocking
from phasegate.errors import UsageError

EXTRA_HINT = "pip install 'phasegate[ray]'"
"""How to install what the Ray executor needs."""
CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a cluster's address to answer before Ray's own, much longer, retries."""


class RayExecutor:
    """Runs units as Ray tasks: on the cluster at ``address``, or on a local one it starts
    (with ``num_cpus`` CPUs, default all) when Ray is not initialised in this process yet.

    ``runtime_env`` is handed to Ray for the workers (environment variables, a working
    directory); ``max_retries`` bounds how often Ray re-runs a unit whose worker was lost.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        cpus_per_unit: float = 1.0,
        max_retries: int = 3,
        num_cpus: int | None = None,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise UsageError(
                f"the Ray executor needs Ray, which is not installed: {EXTRA_HINT}",
                option="executor",
            ) from None
        if cpus_per_unit <= 0:
            raise UsageError("cpus_per_unit must be more than 0", option="cpus_per_unit")
        self._ray = ray
        self._started = False
        self.cpus_per_unit = cpus_per_unit
        if address is not None:
            _refuse_unreachable(address)
        if not ray.is_initialized():
            try:
                ray.init(
                    address=address,
                    _temp_dir=_local_temp_dir() if address is None else None,
                    num_cpus=num_cpus if address is None else None,
                    runtime_env=runtime_env,
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
                raise UsageError(
                    f"cannot start or reach {where}: {exc}", option="address"
                ) from None
            self._started = True
        decorate = ray.remote(num_cpus=cpus_per_unit, max_retries=max_retries)
        self._remote = decorate(run_unit_blocking)

    def default_concurrency(self) -> int:
        """As many units as the cluster has CPUs for."""
        resources = self._ray.cluster_resources()  # type: ignore[no-untyped-call]
        cpus = float(resources.get("CPU", 1.0))
        return max(1, int(cpus // self.cpus_per_unit))

    async def run(self, job: UnitJob) -> UnitOutcome:
        """Run the unit as a Ray task; cancelling this call cancels the task."""
        exceptions = self._ray.exceptions
        ref = self._remote.remote(job)
        try:
            outcome = await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)
            raise
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError) as exc:
            return failed_outcome(
                job.unit,
                f"the Ray worker running it was lost more often than Ray retries ({exc}); run "
                "the batch again retrying failed units",
            )
        except exceptions.RayTaskError as exc:
            return failed_outcome(job.unit, f"the unit failed in its Ray worker: {exc}")
        except exceptions.RayError as exc:
            raise ExecutorError(f"the Ray cluster failed: {exc}") from exc
        if not isinstance(outcome, UnitOutcome):
            raise ExecutorError(f"a Ray worker returned {type(outcome).__name__}, not an outcome")
        return outcome

    def close(self) -> None:
        """Shut down the local cluster this executor started (a cluster it joined stays)."""
        if self._started:
            self._started = False
            self._ray.shutdown()


_RAY_SOCKET = len("/ray/session_2026-11-27_18-14-19_855165_1234567/sockets/plasma_store")
"""What a local Ray cluster adds to its temporary folder for its longest socket's path."""


def _local_temp_dir() -> str | None:
    """Where a local cluster keeps its sessions: Ray's own choice (``RAY_TMPDIR``, else
    ``TMPDIR`` on Linux, else ``/tmp``) unless that is too long for its sockets (a long
    ``TMPDIR``: Ray then fails with "AF_UNIX path length cannot exceed 107 bytes"); then
    ``ray`` in a short system folder, as Ray itself does on macOS."""
    if "RAY_TMPDIR" in os.environ:
        return None  # the user's choice, errors included
    temp = os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None
    if temp is None or socket_fits(temp, _RAY_SOCKET):
        return None
    base = short_base(_RAY_SOCKET, "a local Ray cluster's socket", "RAY_TMPDIR=/tmp", temp)
    return str(base / "ray")


def _refuse_unreachable(address: str) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) nothing answers on: Ray itself would
    keep retrying for many minutes. Other forms (``auto``) are left to Ray."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise UsageError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one there "
            "(ray start --head) or give the address its head node prints",
            option="address",
        ) from None
