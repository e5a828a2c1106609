"""A check's commands confined as the agent's are (docs/sandbox.md): bubblewrap, run directly.

When a run is confined (``sandbox: on`` or ``optional``, and the agent's sandbox could
start), the gate's check commands run on the agent's work under the same rules as its shell
commands: they may write in the work directory and nowhere else, never on the paths
``protect`` names, phasegate's own files there, or a repository's ``.git/config`` and
``.git/hooks``, and reach only the hosts ``network:`` lists (none by default). Each runs in
``bwrap`` (:func:`bwrap_argv`):

- the whole file system read-only, the work directory bound writable over it, then the
  read-only paths bound over that (what exists as the command starts); a private folder of
  its own as ``TMPDIR`` (removed when it ends), as Claude Code gives its commands one;
- a new ``/dev`` and ``/proc`` (``/proc/sys`` and its other writable corners read-only), a
  process namespace of its own (when the command ends or is killed, everything it started
  goes with it), every capability dropped (as root too), ended with the gate's process;
- a network namespace of its own: no route anywhere; with hosts listed, its one way out is
  :mod:`phasegate.workspace.proxy_bridge`, to the
  :class:`~phasegate.workspace.host_proxy.HostProxy` outside, which lets through only those
  hosts;
- a seccomp filter (:func:`seccomp_filter`) that refuses Unix sockets (``Operation not
  permitted``): a daemon's socket on the machine (Docker's) would be a way out, and Claude
  Code's sandbox refuses them too; and ``io_uring``, which could make one past the filter.

Where bubblewrap cannot run, ``sandbox: on`` runs no check command unconfined: its check
fails, saying what is missing; ``optional`` runs it unconfined, as the agent's own commands
would be had its sandbox not started. bubblewrap is looked for on the gate's own ``PATH``,
never in the work directory (the agent could have put a program named ``bwrap`` there).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import platform
import shutil
import socket
import struct
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from phasegate._files.scratch import scratch_folder, sweep_dead
from phasegate._process.bubblewrap import bwrap_refusal
from phasegate.agents.protocol import Confinement
from phasegate.phases.sandbox import Sandbox, SandboxOutcome
from phasegate.validators.protect import protected_paths
from phasegate.validators.stage_checks import CommandOutcome
from phasegate.workspace import proxy_bridge
from phasegate.workspace.commands import find_program, not_started, run_bounded
from phasegate.workspace.host_proxy import HostProxy

SCRATCH_PREFIX = "phasegate-check"
"""The name of each confined command's own temporary folder (``TMPDIR``)."""
PROXY_PORT = 3128
"""Where a confined command finds its proxy, inside its own network namespace."""
NO_PROXY = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"
"""What the proxy is not asked for (its own namespace's loopback), as Claude Code sets it."""
GIT_FILES = (".git/config", ".git/hooks")
"""A repository's files a program git runs later could be planted in: read-only, as Claude
Code keeps them from the agent's commands."""
PROC_CORNERS = ("sys", "sysrq-trigger", "irq", "bus")
"""The parts of ``/proc`` that change the machine rather than the sandbox: read-only (run as
root, the command could otherwise write them, capabilities or not)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSandbox:
    """How a run's check commands are confined: as its agent's session (``confinement``),
    and whether they may run unconfined where bubblewrap cannot (``required``: not)."""

    confinement: Confinement
    required: bool
    """``sandbox: on``: a command that cannot be confined is not run, and its check fails
    saying why; ``optional``: it runs unconfined."""

    @classmethod
    def of(
        cls, outcome: SandboxOutcome | None, confinement: Confinement | None
    ) -> CommandSandbox | None:
        """The sandbox of a run's checks, from how its agent was confined: None when the
        agent is not (no sandbox asked for, or an optional one that could not start)."""
        if confinement is None or outcome is None:
            return None
        return cls(confinement=confinement, required=outcome.mode == "on")

    @classmethod
    def declared(cls, sandbox: Sandbox | None, protect: Sequence[str]) -> CommandSandbox | None:
        """The sandbox of checks run with no agent (a judgment): as the definition declares
        it, its ``protect`` globs read-only and its hosts reachable; None when it asks for
        none."""
        if sandbox is None or not sandbox.confined:
            return None
        confinement = Confinement(network=sandbox.network, read_only=tuple(protect))
        return cls(confinement=confinement, required=sandbox.mode == "on")


def run_confined(
    argv: Sequence[str],
    *,
    workdir: Path,
    env: Mapping[str, str],
    timeout: float,
    sandbox: CommandSandbox,
    stop: threading.Event | None = None,
) -> CommandOutcome:
    """Run ``argv`` as :func:`~phasegate.workspace.commands.run_bounded` does (``stop``
    included), confined in ``workdir`` (resolved) as ``sandbox`` says."""
    bwrap, problem = _usable_bwrap(workdir)
    rules = seccomp_filter()
    if bwrap is None or rules is None:
        if sandbox.required:
            return not_started(
                f"the run is confined (sandbox: on), so its checks' commands are too, and "
                f"they cannot be here: {problem}"
            )
        return run_bounded(argv, cwd=workdir, env=env, timeout=timeout, stop=stop)
    program = argv[0] if argv else ""
    missing = find_program(program, cwd=workdir, env=env)
    if missing is not None:
        return not_started(missing)
    _sweep_once()
    with contextlib.ExitStack() as stack:
        private = stack.enter_context(scratch_folder(SCRATCH_PREFIX))
        rules_fd = stack.enter_context(_readable(rules))
        command = list(argv)
        fds = [rules_fd]
        extra = {"TMPDIR": str(private)}
        hosts = sandbox.confinement.network
        if hosts:
            proxy = stack.enter_context(HostProxy(hosts))
            fd = proxy.theirs.fileno()
            command = [*bridge_argv(fd), *command]
            fds.append(fd)
            extra |= proxy_env(PROXY_PORT)
        wrapped = bwrap_argv(
            bwrap,
            command,
            workdir=workdir,
            private=private,
            read_only=read_only_paths(sandbox.confinement, workdir),
            rules_fd=rules_fd,
        )
        return run_bounded(
            wrapped,
            cwd=workdir,
            env={**env, **extra},
            timeout=timeout,
            program=program,
            pass_fds=fds,
            stop=stop,
        )


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    workdir: Path,
    private: Path,
    read_only: Sequence[str],
    rules_fd: int,
) -> list[str]:
    """The command line running ``argv`` in ``workdir`` under bubblewrap (see the module):
    ``private`` writable too, ``read_only`` (absolute paths, those that exist) not,
    ``rules_fd`` the seccomp filter to read."""
    args = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--cap-drop", "ALL",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
    ]  # fmt: skip
    for corner in PROC_CORNERS:
        args += ["--ro-bind-try", f"/proc/{corner}", f"/proc/{corner}"]
    args += ["--bind", str(workdir), str(workdir), "--bind", str(private), str(private)]
    for path in read_only:
        args += ["--ro-bind-try", path, path]
    args += ["--seccomp", str(rules_fd), "--chdir", str(workdir), "--", *argv]
    return args


def read_only_paths(confinement: Confinement, workdir: Path) -> list[str]:
    """The paths in ``workdir`` a confined command may not write, as they are now: what the
    run protects (a folder whole when its glob covers all it may hold), phasegate's own
    files there, and a repository's :data:`GIT_FILES` (absolute, links resolved)."""
    found = protected_paths(confinement.read_only, str(workdir))
    found += [os.path.realpath(path) for path in confinement.own]
    found += [os.path.realpath(workdir / name) for name in GIT_FILES]
    return [path for path in dict.fromkeys(found) if os.path.lexists(path)]


def bridge_argv(fd: int) -> list[str]:
    """What runs before a command whose run lists hosts:
    :mod:`phasegate.workspace.proxy_bridge`, by the gate's own interpreter, isolated from
    the command's Python settings, handing connections over ``fd``."""
    return [sys.executable, "-I", "-S", proxy_bridge.__file__, str(fd), str(PROXY_PORT)]


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a command's requests to its proxy (as Claude Code sets them
    for its sandbox, less those of a SOCKS proxy it does not get)."""
    address = f"http://127.0.0.1:{port}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    found = dict.fromkeys((*names, *(name.lower() for name in names)), address)
    return found | {"NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}


def find_bwrap(workdir: Path) -> str | None:
    """``bwrap`` on this process's ``PATH``, never a folder inside ``workdir`` nor a
    relative one (a program the agent could have written); None when there is none."""
    root = workdir.resolve()
    folders = [
        folder
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if folder and os.path.isabs(folder) and not Path(folder).resolve().is_relative_to(root)
    ]
    return shutil.which("bwrap", path=os.pathsep.join(folders)) if folders else None


def bwrap_problem(workdir: Path) -> str | None:
    """Why a check's command cannot be confined here, saying what to install; None when
    it can. bubblewrap is tried once per process and program."""
    bwrap, problem = _usable_bwrap(workdir)
    return None if bwrap is not None else problem


def _usable_bwrap(workdir: Path) -> tuple[str | None, str]:
    """The bubblewrap to confine commands in ``workdir`` with, or None and why not."""
    if not sys.platform.startswith("linux"):
        return None, f"bubblewrap confines commands on Linux only, not on {sys.platform}"
    if seccomp_filter() is None:
        return None, (
            f"phasegate has no seccomp filter for this machine ({platform.machine()}): "
            "x86_64 and aarch64 only"
        )
    bwrap = find_bwrap(workdir)
    if bwrap is None:
        return None, (
            "bwrap not found on PATH: install bubblewrap (Debian and Ubuntu: apt-get "
            "install bubblewrap)"
        )
    problem = _probe(bwrap)
    return (None, problem) if problem is not None else (bwrap, "")


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot start the sandbox a command gets, or None."""
    rules = seccomp_filter()
    assert rules is not None
    with _readable(rules) as fd:
        return bwrap_refusal(
            [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-net",
             "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--seccomp", str(fd), "--", "true"],
            pass_fds=(fd,),
        )  # fmt: skip


@contextlib.contextmanager
def _readable(data: bytes) -> Iterator[int]:
    """A descriptor to read ``data`` from (a pipe, written whole first), closed after."""
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as writing:
            writing.write(data)
        yield read
    finally:
        os.close(read)


@functools.cache
def _sweep_once() -> None:
    """Remove the private folders of confined commands whose process was killed."""
    sweep_dead(SCRATCH_PREFIX)


# -- the seccomp filter: a classic BPF program, as bwrap --seccomp reads it ------------------

_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO: "Operation not permitted"
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_X32 = 0x40000000  # the x32 ABI's calls: numbered apart, filtered by nobody here
# seccomp_data: the call's number at 0, the architecture at 4, its first argument at 16 (its
# low 32 bits on these little-endian machines: a family is an int).
_NUMBER, _ARCH, _FIRST_ARGUMENT = 0, 4, 16


@dataclass(frozen=True, slots=True)
class _Machine:
    audit_arch: int
    socket: int
    io_uring: tuple[int, ...] = (425, 426, 427)  # setup, enter, register: the same on both
    x32: bool = False


_MACHINES = {
    "x86_64": _Machine(audit_arch=0xC000003E, socket=41, x32=True),
    "aarch64": _Machine(audit_arch=0xC00000B7, socket=198),
}


@functools.cache
def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The filter a confined command runs under, for ``machine`` (default: this one's):
    ``socket(AF_UNIX, ...)`` and ``io_uring`` refused with ``EPERM``, a call of another
    architecture (a 32-bit program's) ends the process, everything else is let through.
    None where phasegate has none (only x86_64 and aarch64)."""
    found = _MACHINES.get(machine or platform.machine())
    if found is None:
        return None
    steps: list[_Step] = [
        (_LOAD, _ARCH, None, None),
        (_JUMP_EQUAL, found.audit_arch, "number", "kill"),
        "number",
        (_LOAD, _NUMBER, None, None),
    ]
    if found.x32:
        steps.append((_JUMP_AT_LEAST, _X32, "refuse", None))
    steps += [(_JUMP_EQUAL, number, "refuse", None) for number in found.io_uring]
    steps += [
        (_JUMP_EQUAL, found.socket, "socket", None),
        (_RETURN, _ALLOW, None, None),
        "socket",
        (_LOAD, _FIRST_ARGUMENT, None, None),
        (_JUMP_EQUAL, socket.AF_UNIX, "refuse", None),
        (_RETURN, _ALLOW, None, None),
        "refuse",
        (_RETURN, _REFUSE, None, None),
        "kill",
        (_RETURN, _KILL, None, None),
    ]
    return _assemble(steps)


_Step = str | tuple[int, int, str | None, str | None]
"""A label, or an instruction: its code, its constant, where it jumps when true and when
false (a label; None: on to the next)."""


def _assemble(steps: Sequence[_Step]) -> bytes:
    """``steps`` as the ``struct sock_filter`` array the kernel reads."""
    at: dict[str, int] = {}
    instructions: list[tuple[int, int, str | None, str | None]] = []
    for step in steps:
        if isinstance(step, str):
            at[step] = len(instructions)
        else:
            instructions.append(step)
    code = b""
    for position, (operation, constant, when_true, when_false) in enumerate(instructions):
        true = at[when_true] - position - 1 if when_true else 0
        false = at[when_false] - position - 1 if when_false else 0
        code += struct.pack("=HBBI", operation, true, false, constant)
    return code
