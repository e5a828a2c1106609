"""Claude Code run headless, as an :class:`~phasegate.agents.protocol.Agent`, without
claude-agent-sdk: one ``claude -p`` process per session, its stream-json output read into
transcript entries by the parser every saved transcript goes through
(:class:`~phasegate.evidence.stream_json.MessageReader`).

It is for a process that has the CLI but not claude-agent-sdk: the Claude Code plugin's
hooks, where a ``rubric`` check's grader runs (docs/plugin.md). So it runs what a grader
asks (:class:`~phasegate.agents.grading.AgentGrader`) and no more: a prompt in a work
directory, the runtime's own tools by name, an output schema. A session runs:

- **isolated**: none of the user's or the project's settings files, no installed plugin, no
  hook, no MCP server, no skill or command (the CLI's safe mode), and none of the variables
  Claude Code sets for the session whose hook starts it (:data:`SESSION_VARIABLES`), so a
  plugin's own hooks never run inside its grader, and the grader session is not kept for
  ``--resume``;
- **read-only in practice**: only the tools the request names (a grader: Read, Grep, Glob),
  in the CLI's "don't ask" permission mode, where what would need a person's permission is
  refused (reading outside the work directory is);
- **bounded**: by its model turns and cost cap, and by ``deadline`` (a :func:`time.time`),
  past which the process is ended with everything it started.

The prompt goes on the CLI's standard input (a grader's evidence may pass what one
command-line argument may hold). Which CLI runs is the caller's choice (:func:`find_cli`
gives the plugin's rule). Imported only where a grader runs; it imports no
claude-agent-sdk.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.errors import AgentError, UsageError
from phasegate.evidence.stream_json import MessageReader
from phasegate.evidence.transcript import RunResult

CLI_VARIABLE = "PHASEGATE_CLAUDE_CLI"
"""The environment variable naming the Claude Code CLI a headless session runs (a path, or a
command looked up on ``PATH``); without it, ``claude`` on ``PATH``."""

SESSION_VARIABLES = frozenset(
    {
        "CLAUDECODE",
        "CLAUDE_PID",
        "CLAUDE_PROJECT_DIR",
        "CLAUDE_PLUGIN_ROOT",
        "CLAUDE_PLUGIN_DATA",
        "CLAUDE_ENV_FILE",
        "CLAUDE_EFFORT",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_CODE_SESSION_ATTENDED",
        "CLAUDE_CODE_CHILD_SESSION",
        "CLAUDE_CODE_CHILD_NOTES_DIR",
        "CLAUDE_CODE_MESSAGING_TOKEN",
        "AI_AGENT",
    }
)
"""What Claude Code (2.1.332) sets in a hook's environment about the session running the
hook: its process, session, project, plugin and effort. A headless session is a session
of its own, so it gets none of them (the connection's variables, ``ANTHROPIC_*``,
``CLAUDE_CONFIG_DIR`` and the provider switches ``CLAUDE_CODE_USE_*``, stay)."""

MIN_SECONDS = 5.0
"""A session is not started with less time than this before its deadline: the CLI alone
takes about a second to start."""
LINE_LIMIT = 64 * 1024 * 1024
"""The longest stream-json line read (a tool result holds a whole file)."""
STDERR_CHARS = 2000
"""The end of the CLI's standard error an error message quotes."""


def find_cli(env: Mapping[str, str]) -> Path | str:
    """The CLI a headless session runs, by ``env``: :data:`CLI_VARIABLE` when set (a path, or
    a name looked up on ``env``'s ``PATH``), else ``claude`` on that ``PATH``. When there is
    none, what is wrong, as a sentence (a ``str``), never an exception."""
    named = env.get(CLI_VARIABLE, "").strip()
    path = env.get("PATH", os.defpath)
    if named:
        found = shutil.which(named, path=path)
        if found is None:
            return (
                f"{CLI_VARIABLE} is {named!r}, which is not an executable file nor a command "
                "on PATH"
            )
        return Path(found)
    found = shutil.which("claude", path=path)
    if found is None:
        return (
            f"no Claude Code CLI was found: there is no 'claude' on PATH; set {CLI_VARIABLE} "
            "to the claude executable"
        )
    return Path(found)


def session_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the variables of the session that starts this one
    (:data:`SESSION_VARIABLES`)."""
    return {name: value for name, value in env.items() if name not in SESSION_VARIABLES}


class HeadlessClaude:
    """One ``claude -p`` session per :meth:`run`, with ``cli``, ``model``, ``max_turns`` and
    ``max_budget_usd``, in the environment ``env`` (whole: :func:`session_env` of the
    caller's, typically) plus the request's, ended at ``deadline`` (a :func:`time.time`;
    None: no deadline)."""

    name = "claude"

    def __init__(
        self,
        cli: str | Path,
        *,
        model: str,
        max_turns: int,
        max_budget_usd: float,
        env: Mapping[str, str],
        deadline: float | None = None,
    ) -> None:
        self.cli = Path(cli)
        self.model = model
        self.max_turns = max_turns
        self.max_budget_usd = max_budget_usd
        self.env = dict(env)
        self.deadline = deadline

    def command(self, request: AgentRequest) -> list[str]:
        """The CLI's command line for ``request`` (the prompt goes on its standard input)."""
        argv = [
            str(self.cli), "--print", "--output-format", "stream-json", "--verbose",
            "--model", self.model, "--max-turns", str(self.max_turns),
            f"--max-budget-usd={self.max_budget_usd:g}",
            # Isolated: no settings file, installed plugin, hook, MCP server, skill or
            # command of the user's or the project's; not kept for --resume.
            "--setting-sources=", "--safe-mode", "--strict-mcp-config",
            "--disable-slash-commands", "--no-session-persistence",
            # Nothing can ask the user: what is not allowed outright is refused (reading
            # outside the work directory is).
            "--permission-mode", "dontAsk",
        ]  # fmt: skip
        if request.toolset is not None:
            argv.append(f"--tools={','.join(request.toolset)}")
        if request.output_schema is not None:
            argv.append(f"--json-schema={json.dumps(request.output_schema)}")
        return argv

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Run one session to its end, each message's entries reported as it comes.

        Raises :class:`~phasegate.errors.AgentError` when the CLI cannot start, runs past
        the deadline, or ends without a result; :class:`~phasegate.errors.UsageError` for a
        request it cannot carry out (completion tools, calls to check, a sandbox, a resumed
        session: none of which a grader asks for)."""
        _refuse_unsupported(request)
        left = None if self.deadline is None else self.deadline - time.time()
        if left is not None and left < MIN_SECONDS:
            raise AgentError(
                f"Claude Code was not started: {max(left, 0):.0f} s were left of the time "
                "it was given"
            )
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command(request),
                cwd=request.workdir,
                env={**self.env, **request.env},
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=os.name == "posix",  # a group of its own, ended whole
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise AgentError(f"Claude Code ({self.cli}) could not be started: {exc}") from exc
        try:
            async with asyncio.timeout(left):
                result = await _session(process, request.prompt, observer)
        except TimeoutError:
            raise AgentError(
                f"the Claude Code session ran past the {left:.0f} s it was given and was ended"
            ) from None
        finally:
            await _end(process)
        code, stderr, finished = result
        if not finished:
            raise AgentError(
                f"Claude Code ({self.cli}) ended without a result (exit status {code})"
                + (f": {stderr}" if stderr else "")
            )


def _refuse_unsupported(request: AgentRequest) -> None:
    asked = [
        what
        for what, given in (
            ("completion tools", request.tools),
            ("calls checked before they run", request.check_before),
            ("a sandbox", request.confinement is not None),
            ("a resumed session", request.resume is not None),
        )
        if given
    ]
    if asked:
        raise UsageError(
            "a headless Claude Code session runs a grader's requests only, not " + ", ".join(asked)
        )


async def _session(
    process: asyncio.subprocess.Process, prompt: str, observer: AgentObserver
) -> tuple[int, str, bool]:
    """Feed ``prompt``, report every entry, wait for the end: (exit status, the end of
    standard error, whether a result came)."""
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(prompt.encode())
        await process.stdin.drain()
        process.stdin.close()
    reader = MessageReader()
    finished = False
    async for raw in process.stdout:
        try:
            message: Any = json.loads(raw)
        except ValueError:
            continue  # not a message: the CLI's own noise
        if not isinstance(message, dict):
            continue
        for entry in reader.entries(message):
            finished = finished or isinstance(entry, RunResult)
            observer.on_entry(entry)
    code = await process.wait()
    stderr = (await errors).decode(errors="replace").strip()[-STDERR_CHARS:]
    return code, stderr, finished


async def _end(process: asyncio.subprocess.Process) -> None:
    """The CLI and everything it started, ended (nothing when it has exited already)."""
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    await process.wait()
