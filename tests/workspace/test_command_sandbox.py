"""A confined run's check commands (phasegate.workspace.command_sandbox): they write in the
work directory and nowhere else, never on a protected path or phasegate's own files, reach
no host but those listed, and take everything they started with them.

The tests that run bubblewrap skip where it cannot run, and fail instead under
PHASEGATE_REQUIRE_SANDBOX=1 (as in CI); those about a machine without it run anywhere."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from phasegate._process.starting import short_base
from phasegate.agents.protocol import Confinement
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.checks import CommandCheck
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.validators.stage_checks import CommandOutcome, evaluate_all
from phasegate.workspace.checks import DiskEvidence
from phasegate.workspace.command_sandbox import SCRATCH_PREFIX, CommandSandbox, seccomp_filter
from tests.helpers.processes import gone
from tests.helpers.sandboxed import local_server, require_bwrap


def python(code: str) -> list[str]:
    """An argv running ``code`` with this interpreter."""
    return [sys.executable, "-c", textwrap.dedent(code)]


def sandbox(
    *, protect: tuple[str, ...] = (), hosts: tuple[str, ...] = (), own: tuple[Path, ...] = ()
) -> CommandSandbox:
    """The sandbox of a run confined with ``sandbox: on``."""
    confinement = Confinement(network=hosts, read_only=protect, own=own)
    return CommandSandbox(confinement=confinement, required=True)


def run(work: Path, argv: list[str], box: CommandSandbox, timeout: float = 60) -> CommandOutcome:
    """``argv`` run as a check's command in ``work``, confined by ``box``."""
    evidence = DiskEvidence(work, diff=WorkspaceDiff(), tools={}, sandbox=box)
    return evidence.run_command(argv, timeout)


@pytest.fixture
def confined(work: Path) -> Path:
    """The work directory, where check commands can be confined (else the test skips)."""
    require_bwrap(work)
    return work


def test_a_confined_command_writes_in_the_work_directory_and_nowhere_else(
    confined: Path, tmp_path: Path
) -> None:
    """Inside, a file is made as usual; beside the work directory the write fails as the
    agent's would, and nothing is there afterwards."""
    outside = tmp_path / "outside.txt"
    outcome = run(
        confined,
        python(f"""
            open("inside.txt", "w").write("made")
            open({str(outside)!r}, "w").write("escaped")
        """),
        sandbox(),
    )
    assert outcome.exit_code == 1
    assert "Read-only file system" in outcome.output
    assert (confined / "inside.txt").read_text() == "made"
    assert not outside.exists()


def test_a_confined_command_cannot_change_a_protected_path(confined: Path) -> None:
    """A protected file keeps its text, and a protected folder takes no new file: the
    command fails on each, as the agent's commands do."""
    (confined / "tests").mkdir()
    (confined / "tests" / "test_a.py").write_text("original\n")
    (confined / "README.md").write_text("readme\n")
    outcome = run(
        confined,
        python("""
            import os
            for attempt in (
                lambda: open("tests/test_a.py", "w").write("pass\\n"),
                lambda: open("tests/test_new.py", "w").write("pass\\n"),
                lambda: os.remove("tests/test_a.py"),
                lambda: open("README.md", "a").write("more\\n"),
            ):
                try:
                    attempt()
                    print("changed")
                except OSError as exc:
                    print(exc.strerror)
        """),
        sandbox(protect=("tests/**", "README.md")),
    )
    assert outcome.exit_code == 0
    assert outcome.output.splitlines() == ["Read-only file system"] * 4
    assert (confined / "tests" / "test_a.py").read_text() == "original\n"
    assert sorted(os.listdir(confined / "tests")) == ["test_a.py"]
    assert (confined / "README.md").read_text() == "readme\n"


def test_a_confined_command_cannot_rewrite_phasegate_s_files_or_git_s(confined: Path) -> None:
    """phasegate's own record in the work directory, a repository's config and hooks (a
    program git would run later, outside any sandbox) stay as they were."""
    (confined / "events.jsonl").write_text("{}\n")
    (confined / ".git" / "hooks").mkdir(parents=True)
    (confined / ".git" / "config").write_text("[core]\n")
    outcome = run(
        confined,
        python("""
            for path in ("events.jsonl", ".git/config", ".git/hooks/pre-commit"):
                try:
                    open(path, "w").write("planted\\n")
                    print("wrote", path)
                except OSError as exc:
                    print(exc.strerror)
        """),
        sandbox(own=(confined / "events.jsonl",)),
    )
    assert outcome.output.splitlines() == ["Read-only file system"] * 3
    assert (confined / "events.jsonl").read_text() == "{}\n"
    assert (confined / ".git" / "config").read_text() == "[core]\n"
    assert not (confined / ".git" / "hooks" / "pre-commit").exists()


def test_a_confined_command_reaches_no_host_when_none_is_listed(confined: Path) -> None:
    """No network: even the machine's own loopback, where a server listens, is out of
    reach (the command has a network of its own)."""
    with local_server() as server:
        outcome = run(
            confined,
            python(f"""
                import socket
                try:
                    socket.create_connection(("127.0.0.1", {server.port}), timeout=5)
                    print("connected")
                except OSError as exc:
                    print(type(exc).__name__)
            """),
            sandbox(),
        )
    assert outcome.output == "ConnectionRefusedError"
    assert server.hits == []


def test_a_confined_command_reaches_a_listed_host_and_no_other(confined: Path) -> None:
    """With ``network: [127.0.0.1]`` its requests go through the proxy it is given to the
    listed address; the same server by another name is refused (403), as Claude Code's
    proxy refuses it."""
    with local_server() as server:
        outcome = run(
            confined,
            python(f"""
                import os, urllib.request
                os.environ["no_proxy"] = os.environ["NO_PROXY"] = ""  # loopback via the proxy
                for host in ("127.0.0.1", "localhost"):
                    try:
                        with urllib.request.urlopen(
                            f"http://{{host}}:{server.port}/from-{{host}}", timeout=10
                        ) as answer:
                            print(host, answer.read().decode())
                    except OSError as exc:
                        print(host, exc)
            """),
            sandbox(hosts=("127.0.0.1",)),
        )
    assert outcome.output.splitlines() == [
        "127.0.0.1 hello-from-local",
        "localhost HTTP Error 403: Forbidden",
    ]
    assert server.hits == ["/from-127.0.0.1"]


@pytest.fixture
def unix_server() -> Iterator[tuple[Path, list[bytes]]]:
    """A Unix socket on the machine (as Docker's is) and what reached it; in a short folder
    (phasegate's own rule for its sockets), as CI's temporary folder is too long for one."""
    base = short_base(len("/phasegate-daemon-XXXXXXXX/daemon.sock"), "the test's socket", "")
    folder = Path(tempfile.mkdtemp(prefix="phasegate-daemon-", dir=base))
    path = folder / "daemon.sock"
    reached: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()

    def accept() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            reached.append(connection.recv(100))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield path, reached
    listener.shutdown(socket.SHUT_RDWR)
    listener.close()
    thread.join(5)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_confined_command_cannot_talk_to_a_unix_socket_of_the_machine(
    confined: Path, unix_server: tuple[Path, list[bytes]]
) -> None:
    """A daemon's socket (Docker's would hand out the whole machine) is no way out: a Unix
    socket cannot even be made (Operation not permitted), as in Claude Code's sandbox."""
    path, reached = unix_server
    outcome = run(
        confined,
        python(f"""
            import socket
            try:
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect({str(path)!r})
                client.sendall(b"let me out")
                print("connected")
            except OSError as exc:
                print(exc.strerror)
        """),
        sandbox(),
    )
    assert outcome.output == "Operation not permitted"
    assert reached == []


def test_a_confined_command_has_a_temporary_folder_of_its_own_removed_after_it(
    confined: Path,
) -> None:
    """``TMPDIR`` is writable (a test suite's temporary files work) and goes with the
    command: nothing it put there is left."""
    outcome = run(
        confined,
        python("""
            import os, tempfile
            with tempfile.NamedTemporaryFile(delete=False) as file:
                file.write(b"x")
            print(os.environ["TMPDIR"])
        """),
        sandbox(),
    )
    assert outcome.exit_code == 0
    folder = Path(outcome.output)
    assert folder.name.startswith(SCRATCH_PREFIX)
    assert not folder.exists()


def test_a_timeout_ends_everything_a_confined_command_started_even_outside_its_session(
    confined: Path,
) -> None:
    """A process that left the command's session and process group (``setsid``, as a
    daemon does) still goes: the sandbox's processes end with it."""
    marker = f"phasegate-test-{uuid.uuid4().hex}"
    outcome = run(
        confined,
        python(f"""
            import subprocess, sys, time
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            print("started", flush=True)
            time.sleep(120)
        """),
        sandbox(),
        timeout=2,
    )
    assert (outcome.timed_out, outcome.output) == (True, "started")
    assert all(gone(pid) for pid in pids_running(marker))


def pids_running(marker: str) -> list[int]:
    """The processes on the machine whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_missing_program_is_said_plainly_not_as_a_sandbox_failure(confined: Path) -> None:
    """The check's detail names the program, as it would unconfined."""
    outcome = run(confined, ["phasegate-no-such-program", "-q"], sandbox())
    assert (outcome.exit_code, outcome.error) == (
        None,
        "program not found: phasegate-no-such-program (is it installed and on PATH?)",
    )
    script = confined / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    outcome = run(confined, ["./check.sh"], sandbox())
    assert (outcome.exit_code, outcome.error) == (None, "not executable: ./check.sh")


# --- where bubblewrap cannot run -------------------------------------------------------------


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no bubblewrap on it."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.usefixtures("no_bwrap")
def test_without_bubblewrap_sandbox_on_runs_no_check_command_and_says_why(
    work: Path, tmp_path: Path
) -> None:
    """``sandbox: on``: the command does not run unconfined; its check fails naming what to
    install."""
    outside = tmp_path / "ran.txt"
    (outcome,) = evaluate_all(
        [CommandCheck(argv=tuple(python(f"open({str(outside)!r}, 'w').write('x')")))],
        DiskEvidence(work, diff=WorkspaceDiff(), tools={}, sandbox=sandbox()),
    )
    assert not outcome.ok
    assert "could not start: the run is confined (sandbox: on), so its checks' commands are" in (
        outcome.detail
    )
    assert "bwrap not found on PATH: install bubblewrap" in outcome.detail
    assert not outside.exists()


@pytest.mark.usefixtures("no_bwrap")
def test_without_bubblewrap_an_optional_sandbox_runs_the_command_unconfined(
    work: Path, tmp_path: Path
) -> None:
    """``sandbox: optional``: the command runs as the agent's would have, unconfined (it
    writes beside the work directory)."""
    outside = tmp_path / "ran.txt"
    optional = CommandSandbox(confinement=Confinement(), required=False)
    outcome = run(work, python(f"open({str(outside)!r}, 'w').write('x')"), optional)
    assert (outcome.exit_code, outcome.error) == (0, None)
    assert outside.read_text() == "x"


def test_a_bwrap_in_the_work_directory_is_never_the_one_used(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program named ``bwrap`` the agent could have put in the work directory, even first
    on PATH, is not run: without another, the check says bubblewrap is missing."""
    planted = work / "bin" / "bwrap"
    planted.parent.mkdir()
    ran = tmp_path / "planted-ran"
    planted.write_text(f'#!/bin/sh\ntouch {ran}\nexec "$@"\n')
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted.parent}{os.pathsep}bin")
    outcome = run(work, python("print('ran')"), sandbox())
    assert outcome.error is not None and "bwrap not found on PATH" in outcome.error
    assert not ran.exists()


def test_a_run_s_checks_are_confined_only_when_its_agent_is() -> None:
    """An optional sandbox that could not start confines nothing, checks included; one
    that did confines them, required when the run asked for ``on``."""
    confinement = Confinement(network=("pypi.org",))
    unconfined = SandboxOutcome(mode="optional", confined=False, unavailable="no bwrap")
    assert CommandSandbox.of(unconfined, None) is None
    assert CommandSandbox.of(None, None) is None
    on = CommandSandbox.of(SandboxOutcome(mode="on", confined=True), confinement)
    optional = CommandSandbox.of(SandboxOutcome(mode="optional", confined=True), confinement)
    assert on == CommandSandbox(confinement=confinement, required=True)
    assert optional == CommandSandbox(confinement=confinement, required=False)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_seccomp_filter_is_whole_instructions_that_first_check_the_architecture(
    machine: str,
) -> None:
    """Each instruction is 8 bytes; the first loads the architecture (offset 4), so a call
    of another one (numbered otherwise) is never let through by number."""
    rules = seccomp_filter(machine)
    assert rules is not None and len(rules) % 8 == 0
    assert rules[:8] == (0x20).to_bytes(2, sys.byteorder) + b"\0\0" + (4).to_bytes(4, sys.byteorder)
    assert seccomp_filter("mips") is None
