"""``phasegate serve``: the HTTP service, until SIGTERM or Ctrl-C drains it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer

from phasegate._cli.options import CliPath, sandbox_mode
from phasegate.errors import UsageError


def serve(
    root: Annotated[
        Path,
        typer.Option(help="Every task, pipeline and work directory a request names lies in here."),
    ],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8080,
    max_concurrent: Annotated[
        int | None, typer.Option(min=1, help="Agent sessions at once (default: one per CPU).")
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            help="File holding the bearer token (default: ROOT/.phasegate/server-token, "
            "created with a random token on first start)."
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Another name clients may call the service by (repeatable); "
            "127.0.0.1, localhost and ::1 always are."
        ),
    ] = None,
    grace: Annotated[
        float, typer.Option(min=0, help="Seconds running runs get to finish on shutdown.")
    ] = 30.0,
    model_script: Annotated[
        Path | None,
        typer.Option(
            help="Offline: every run replays this script against phasegate's "
            "scripted model server (no key, no network)."
        ),
    ] = None,
    cli_path: CliPath = None,
    max_streams: Annotated[
        int, typer.Option(min=1, help="Event streams open at once, in all (more: 503).")
    ] = 256,
    max_streams_per_client: Annotated[
        int,
        typer.Option(min=1, help="Event streams open at once from one client address (more: 429)."),
    ] = 32,
    sandbox: Annotated[
        bool | None,
        typer.Option(
            "--sandbox/--no-sandbox",
            help="Confine every run in Claude Code's sandbox (docs/sandbox.md), or none, "
            "whatever its file says. Default: as the file says, else optional (confined where "
            "the sandbox can run; the report says when it could not).",
        ),
    ] = None,
) -> None:
    """Serve tasks and pipelines over HTTP, with their events as Server-Sent Events.

    Every endpoint but /healthz, /openapi.json and /ui needs 'Authorization: Bearer
    TOKEN'. SIGTERM or Ctrl-C: no new run is accepted, queued runs are interrupted, running
    ones get --grace seconds, then the rest are interrupted (pipelines can be resumed after
    a restart).
    """  # fmt: skip
    from phasegate._process.starting import require_process_groups

    require_process_groups("phasegate serve")
    try:
        import uvicorn

        from phasegate._server.app import create_app
        from phasegate._server.serving import DrainingServer, service_scratch
    except ImportError as exc:
        raise UsageError(f"phasegate serve needs the serve extra ({exc.name} is missing): "
                         "pip install 'phasegate[serve]'") from None  # fmt: skip
    from phasegate._server.records import make_private
    from phasegate._server.security import (
        LOCAL_HOSTS,
        default_token_file,
        load_or_create_token,
        readable_by_others,
    )
    from phasegate._server.service import RunService
    from phasegate._server.settings import ServiceSettings

    if not root.is_dir():
        raise UsageError(f"--root {root} is not a directory")
    if model_script is not None and not model_script.is_file():
        raise UsageError(f"--model-script {model_script} is not a file")
    root = root.resolve()
    try:
        # First: the service's folder must be a real folder before the token is made in it.
        make_private(root)
    except OSError as exc:
        raise UsageError(f"cannot keep the service's runs in {root}/.phasegate/runs: "
                         f"{exc.strerror or exc}") from None  # fmt: skip
    token_path = token_file or default_token_file(root)
    token = load_or_create_token(token_path, create=token_file is None)
    if readable_by_others(token_path):
        _say(f"warning: other users can read the token file {token_path}: chmod 600 it")
    settings = ServiceSettings(
        root=root,
        max_concurrent=max_concurrent or os.cpu_count() or 1,
        grace=grace,
        model_script=model_script.resolve() if model_script else None,
        cli_path=str(cli_path) if cli_path else None,
        secrets=(token,),
        max_streams=max_streams,
        max_streams_per_client=max_streams_per_client,
        sandbox=sandbox_mode(sandbox),
    )
    service = RunService(settings)
    service.recover()
    service_scratch()  # before the fork server starts: its socket folder goes there
    service.start()
    hosts = frozenset({*LOCAL_HOSTS, host, *(allow_host or ())})
    config = uvicorn.Config(
        create_app(service, token, hosts), host=host, port=port, log_level="warning",
        timeout_graceful_shutdown=5, lifespan="off",
    )  # fmt: skip
    _say(f"root {root}")
    _say(f"token file {token_path}")
    for line in service.unreadable:
        _say(f"skipped an unreadable run: {line}")
    asyncio.run(DrainingServer(config, service).serve(_say))
    _say("stopped")


def _say(text: str) -> None:
    typer.echo(f"phasegate serve: {text}", err=True)
