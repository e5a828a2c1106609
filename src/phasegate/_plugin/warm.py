"""The warm gate: one background process per gated session that has imported the gate, so a
Stop hook hands it the hook input over a Unix socket instead of importing the gate itself.

Started by the commands that start gated work (``run``, ``pipeline``, ``loop``) unless
``PHASEGATE_PLUGIN_WARM=0``; it serves one session id, in a folder of its own (owner-only)
named in the session's ``warm.json``; it ends when the session's gated work ends, when the
session's state is gone, and after :data:`IDLE_SECONDS` without a request. The Stop hook's
side (:func:`ask`) uses the standard library alone: anything but a well-formed answer (no
``warm.json``, no socket, refused, timed out, garbage) and the hook does the work itself, by
the same :func:`~phasegate._plugin.dispatch.stop_output` the process calls. The hook hands over
its environment, folder and start time with the input, so the process judges as the hook
would, its checks bounded from the hook's start (:mod:`.checks`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasegate._plugin.state import SessionFiles

SWITCH = "PHASEGATE_PLUGIN_WARM"
"""``0`` turns the warm gate off: every Stop hook imports the gate itself."""
IDLE_SECONDS = 30 * 60.0
"""How long the process waits for a request before it ends (a killed CLI leaves none)."""
POLL_SECONDS = 2.0
"""How often it looks whether its session's gated work has ended."""
ACCEPT_SECONDS = 2.0
"""How long the hook waits for the process to take its request before doing it itself."""
NO_ANSWER = object()
"""What :func:`ask` returns when the hook must do the work itself."""

Answer = Callable[[dict[str, Any], float | None], dict[str, Any] | None]
"""The gate's answer to a Stop hook's input, given when the hook started."""


def start(files: SessionFiles) -> None:
    """Start the session's warm gate in the background (nothing when it is turned off)."""
    if os.environ.get(SWITCH, "1") == "0":
        return
    import subprocess

    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(files.project)}
    subprocess.Popen(
        [sys.executable, "-m", "phasegate._plugin", "warm", files.session_id],
        env=env, cwd=files.project, start_new_session=True, close_fds=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def ask(
    hook_input: dict[str, Any], files: SessionFiles, env: dict[str, str], started: float
) -> Any:
    """The Stop hook's output as the session's warm gate answers it, or :data:`NO_ANSWER`
    (``started``: when the hook started, which bounds the time a task's checks may take)."""
    if os.environ.get(SWITCH, "1") == "0":
        return NO_ANSWER
    try:
        door = json.loads(files.warm_path.read_text(encoding="utf-8"))
        path = str(door["socket"])
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(ACCEPT_SECONDS)
            conn.connect(path)
            request = {"input": hook_input, "env": env, "cwd": os.getcwd(), "started": started}
            conn.sendall(json.dumps(request).encode())
            conn.shutdown(socket.SHUT_WR)
            if conn.recv(1) != b"+":  # taken: from here on it runs the checks' commands
                return NO_ANSWER
            conn.settimeout(None)
            answer = json.loads(_read_all(conn))
        output = answer["output"]
    except (OSError, ValueError, KeyError, TypeError):
        return NO_ANSWER
    return output if output is None or isinstance(output, dict) else NO_ANSWER


def _read_all(conn: socket.socket) -> bytes:
    chunks = []
    while chunk := conn.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def serve(session_id: str, answer: Answer) -> int:
    """The warm gate's process: serve the session's Stop hooks with ``answer`` (the gate,
    imported already), then end."""
    import tempfile

    from phasegate._plugin.state import project_dir, valid_session
    from phasegate._process.starting import short_base

    if valid_session(session_id) is None:
        return 2
    files = SessionFiles(project_dir(), session_id)
    # SIGTERM (a user's kill) ends it as the end of its run does: socket and warm.json removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    folder = Path(tempfile.mkdtemp(prefix="pgw-", dir=short_base(16, "the warm gate's socket", "")))
    path = folder / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        os.chmod(path, 0o600)
        server.listen(4)
        server.settimeout(POLL_SECONDS)
        me = {"socket": str(path), "pid": os.getpid()}
        files.write(me, "warm")
        idle_since = time.monotonic()
        while _still_wanted(files, me) and time.monotonic() - idle_since < IDLE_SECONDS:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn, contextlib.suppress(OSError):  # a hook gone: it answers itself
                _answer(conn, files, answer)
            idle_since = time.monotonic()
    finally:
        server.close()
        path.unlink(missing_ok=True)
        folder.rmdir()
        if files.read("warm") == {"socket": str(path), "pid": os.getpid()}:
            files.warm_path.unlink(missing_ok=True)
    return 0


def _still_wanted(files: SessionFiles, me: dict[str, Any]) -> bool:
    """Whether the session still runs gated work and this process is still its warm gate."""
    state = files.read()
    return state is not None and state.get("status") == "running" and files.read("warm") == me


def _answer(conn: socket.socket, files: SessionFiles, answer: Answer) -> None:
    from phasegate._process.environment import set_for_self

    conn.settimeout(ACCEPT_SECONDS)
    try:
        request = json.loads(_read_all(conn))
        hook_input, env, cwd = request["input"], request["env"], request["cwd"]
        started = request.get("started")
        ok = (isinstance(hook_input, dict) and hook_input.get("session_id") == files.session_id
              and isinstance(env, dict) and isinstance(cwd, str))  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return
    if not ok:
        return  # another session's stop, or not a request: the hook does it itself
    conn.sendall(b"+")
    conn.settimeout(None)
    # The hook's own environment and folder, as a Stop the hook answered itself would have.
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    set_for_self("PYDANTIC_DISABLE_PLUGINS", "__all__")
    os.chdir(cwd)
    # The hook's start bounds its checks here too (no start given: from now).
    given = isinstance(started, int | float) and not isinstance(started, bool)
    started = float(started) if given else None
    conn.sendall(json.dumps({"output": answer(hook_input, started)}).encode())
