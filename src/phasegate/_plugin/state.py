"""Where a session's gated work is kept, and how it is read and written.

Everything lives under the project's ``.phasegate/`` folder: ``plugin/<session id>/`` holds
``state.json`` (the gated work: kind, definition, gate counters, blocks in a row),
``policy.json`` (what the PreToolUse hook needs, written once by ``run``), ``hashes.json``
(the work directory's file hashes by size and times, so a stop reads only the files that
changed: :class:`~phasegate.workspace.observer.WorkspaceObserver`) and
``evidence.jsonl`` (one line per tool call the hooks saw, append-only); the events go to
``.phasegate/events.jsonl`` and recordings to ``.phasegate/recordings/<run id>/``.

A session id that is empty or not the CLI's shape is never used: no state is read or written
for it, so a hook input without one never reaches another session's state. Reading imports
only the standard library (the hooks read this on every tool call of every session); writing
goes through :mod:`phasegate._files` (atomic, confined), imported when a gated session writes.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

STATE_DIR = ".phasegate"
PLUGIN_DIR = "plugin"
EVENTS_FILE = "events.jsonl"
"""The default log of the plugin's runs, relative to the project (``phasegate report`` reads it)."""
RECORDINGS_DIR = "recordings"

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$")


def valid_session(session_id: object) -> str | None:
    """``session_id`` when it has the CLI's shape (letters, digits, ``-``, ``_``), else None."""
    if isinstance(session_id, str) and _SESSION_ID.match(session_id):
        return session_id
    return None


class SessionFiles:
    """The files of one session's gated work in one project."""

    def __init__(self, project: Path, session_id: str) -> None:
        self.project = project
        self.session_id = session_id
        self.root = project / STATE_DIR
        self.folder = self.root / PLUGIN_DIR / session_id

    @property
    def state_path(self) -> Path:
        return self.folder / "state.json"

    @property
    def policy_path(self) -> Path:
        return self.folder / "policy.json"

    @property
    def hashes_path(self) -> Path:
        return self.folder / "hashes.json"

    @property
    def warm_path(self) -> Path:
        """Where the session's warm gate listens (:mod:`.warm`)."""
        return self.folder / "warm.json"

    @property
    def evidence_path(self) -> Path:
        return self.folder / "evidence.jsonl"

    @property
    def events_path(self) -> Path:
        return self.root / EVENTS_FILE

    def recording(self, run_id: str) -> Path:
        """The recording folder of run ``run_id``."""
        return self.root / RECORDINGS_DIR / run_id

    def _path(self, which: str) -> Path:
        paths = {"state": self.state_path, "policy": self.policy_path, "warm": self.warm_path}
        return paths.get(which, self.hashes_path)

    def read(self, which: str = "state") -> dict[str, Any] | None:
        """``state.json``, ``policy.json``, ``warm.json`` or ``hashes.json`` (``which``), or
        None when missing or unreadable."""
        path = self._path(which)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write(self, data: dict[str, Any], which: str = "state") -> None:
        """Replace ``state.json``, ``policy.json`` or ``hashes.json`` atomically, confined to
        the project's ``.phasegate/`` (a linked folder on the way is refused)."""
        from phasegate._files.atomic import write_atomic
        from phasegate._files.confined import inside_folder

        path = self._path(which)
        inside_folder(self.project, f"{STATE_DIR}/{PLUGIN_DIR}/{self.session_id}")
        write_atomic(path, json.dumps(data, indent=1).encode(), inside=self.project)

    def append(self, record: dict[str, Any]) -> None:
        """Add one line to ``evidence.jsonl`` with one ``write`` (never rewritten: a killed
        hook loses at most its own line).

        The session's folder was made confined by :meth:`write` when the task started; the
        file is opened as :func:`phasegate._files.confined.open_appending` opens it (no link
        followed, a regular file only), by the standard library alone, because importing
        :mod:`phasegate._files` loads pydantic and PostToolUse runs on every tool call.
        """
        if self.folder.is_symlink() or not self.folder.is_dir():
            return  # no gated work set up here (or a planted link): nothing to add to
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.evidence_path, flags | os.O_NONBLOCK, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            os.write(fd, (json.dumps(record) + "\n").encode())
        finally:
            os.close(fd)

    def evidence(self) -> list[dict[str, Any]]:
        """Every line of ``evidence.jsonl`` that is a JSON object, in order."""
        try:
            lines = self.evidence_path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        found = []
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line cut by a killed hook
            if isinstance(value, dict):
                found.append(value)
        return found


def project_dir(hook_input: dict[str, Any] | None = None) -> Path:
    """The project the session works in: ``CLAUDE_PROJECT_DIR``, else the hook's ``cwd``,
    else the current directory."""
    named = os.environ.get("CLAUDE_PROJECT_DIR") or (hook_input or {}).get("cwd") or os.getcwd()
    return Path(str(named)).resolve()
