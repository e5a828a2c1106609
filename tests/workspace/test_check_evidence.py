"""Exit-check evidence from disk (phasegate.workspace.checks): files stay inside the work
directory, commands never go through a shell, and a timeout kills everything they started."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from phasegate._process import environment
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.phases.checks import CommandCheck, FileExists, MinLines
from phasegate.validators.stage_checks import StageEvidence, evaluate_all
from phasegate.workspace.checks import DiskEvidence
from tests.helpers.processes import gone

NO_CHANGES = WorkspaceDiff()


def evidence_in(work: Path, **env: str) -> DiskEvidence:
    """Evidence for ``work`` with no changes and no tool calls."""
    return DiskEvidence(work, diff=NO_CHANGES, tools={}, env=env)


def python(code: str) -> list[str]:
    """An argv running ``code`` with this interpreter."""
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_disk_evidence_is_stage_evidence(work: Path) -> None:
    """It satisfies the protocol the exit checks are judged through (checked by mypy)."""
    evidence: StageEvidence = evidence_in(work)
    assert evidence.tool_successes() == {}


# --- reading files --------------------------------------------------------------------------


def test_a_file_in_the_work_directory_is_read_as_text(work: Path) -> None:
    """Nested paths are relative to the work directory."""
    (work / "docs").mkdir()
    (work / "docs" / "a.md").write_text("one\ntwo\n", encoding="utf-8")
    assert evidence_in(work).read_text("docs/a.md") == "one\ntwo\n"


def test_undecodable_bytes_are_replaced_not_fatal(work: Path) -> None:
    """A file that is not UTF-8 still reads (and still has lines to count)."""
    (work / "a.md").write_bytes(b"ok\n\xff\xfe\n")
    assert evidence_in(work).read_text("a.md") == "ok\n\ufffd\ufffd\n"


def test_a_missing_file_raises_file_not_found(work: Path) -> None:
    """Missing is an OSError the checks report as 'does not exist'."""
    with pytest.raises(FileNotFoundError):
        evidence_in(work).read_text("nope.md")


def test_a_directory_raises_is_a_directory(work: Path) -> None:
    """A directory is not a file."""
    (work / "docs").mkdir()
    with pytest.raises(IsADirectoryError):
        evidence_in(work).read_text("docs")


def test_a_fifo_is_refused_without_blocking(work: Path) -> None:
    """A named pipe under the checked name must not hang the gate waiting for a writer."""
    os.mkfifo(work / "a.md")
    with pytest.raises(OSError, match="not a regular file"):
        evidence_in(work).read_text("a.md")


def test_a_symlink_loop_raises_an_os_error(work: Path) -> None:
    """Python 3.11 reports loops as RuntimeError; the evidence keeps to OSError."""
    (work / "a.md").symlink_to("b.md")
    (work / "b.md").symlink_to("a.md")
    with pytest.raises(OSError, match="symbolic links"):
        evidence_in(work).read_text("a.md")


def test_a_symlink_inside_the_work_directory_is_followed(work: Path) -> None:
    """Links are fine as long as they land inside."""
    (work / "real.md").write_text("x")
    (work / "link.md").symlink_to("real.md")
    assert evidence_in(work).read_text("link.md") == "x"


def test_a_symlink_pointing_outside_the_work_directory_is_refused(work: Path) -> None:
    """Following the link would read a file the stage does not own."""
    secret = work.parent / "secret.txt"
    secret.write_text("secret")
    (work / "link.md").symlink_to(secret)
    with pytest.raises(ValueError, match="outside the work directory") as raised:
        evidence_in(work).read_text("link.md")
    assert "secret\n" not in str(raised.value)


@pytest.mark.parametrize("path", ["../secret.txt", "docs/../../secret.txt", "/etc/hostname"])
def test_a_path_leaving_the_work_directory_is_refused(work: Path, path: str) -> None:
    """Climbing out with .. or naming an absolute path elsewhere raises ValueError."""
    (work.parent / "secret.txt").write_text("secret")
    with pytest.raises(ValueError, match="outside the work directory"):
        evidence_in(work).read_text(path)


def test_a_symlinked_work_directory_still_reads_its_own_files(tmp_path: Path, work: Path) -> None:
    """The work directory is resolved too, so a link to it is not 'outside' itself."""
    (work / "a.md").write_text("x")
    alias = tmp_path / "alias"
    alias.symlink_to(work)
    assert evidence_in(alias).read_text("a.md") == "x"


# --- running commands -----------------------------------------------------------------------


@pytest.mark.parametrize("code", [0, 3])
def test_a_command_reports_its_exit_code_and_output(work: Path, code: int) -> None:
    """stdout and stderr are combined, in order."""
    outcome = evidence_in(work).run_command(
        python(f"""
            import sys
            print("to stdout", flush=True)
            print("to stderr", file=sys.stderr, flush=True)
            sys.exit({code})
        """),
        timeout=30,
    )
    assert (outcome.exit_code, outcome.timed_out, outcome.error) == (code, False, None)
    assert outcome.output == "to stdout\nto stderr"


def test_only_the_tail_of_a_long_output_is_kept(work: Path) -> None:
    """The last 40 lines (and at most 2000 characters), as a check's detail shows them."""
    outcome = evidence_in(work).run_command(
        python("for i in range(1000): print('line', i)"), timeout=30
    )
    lines = outcome.output.splitlines()
    assert lines[-1] == "line 999"
    assert lines[0] == "…line 960"
    assert len(lines) == 40


def test_a_command_runs_in_the_work_directory(work: Path) -> None:
    """cwd is the (resolved) work directory."""
    outcome = evidence_in(work).run_command(python("import os; print(os.getcwd())"), timeout=30)
    assert outcome.output == str(work.resolve())


def test_a_command_gets_the_environment_plus_the_extra_variables(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``env`` adds to (and overrides) the runner's own environment."""
    monkeypatch.setenv("PHASEGATE_INHERITED", "yes")
    monkeypatch.setenv("PHASEGATE_OVERRIDDEN", "old")
    evidence = evidence_in(work, PHASEGATE_EXTRA="42", PHASEGATE_OVERRIDDEN="new")
    outcome = evidence.run_command(
        python("""
            import os
            names = ["PHASEGATE_INHERITED", "PHASEGATE_EXTRA", "PHASEGATE_OVERRIDDEN"]
            print(",".join(os.environ[name] for name in names))
        """),
        timeout=30,
    )
    assert outcome.output == "yes,42,new"


def test_a_command_reading_stdin_gets_end_of_file_at_once(work: Path) -> None:
    """stdin is closed: a command asking for input cannot wait for it."""
    outcome = evidence_in(work).run_command(
        python("import sys; print(repr(sys.stdin.read()))"), timeout=30
    )
    assert outcome.output == "''"


def test_a_command_line_that_needs_a_shell_is_not_run_through_one(work: Path) -> None:
    """The whole string is taken as a program name, which does not exist."""
    outcome = evidence_in(work).run_command(["echo hi; touch pwned"], timeout=30)
    assert outcome.exit_code is None
    assert outcome.error == (
        "program not found: echo hi; touch pwned (is it installed and on PATH?)"
    )
    assert not (work / "pwned").exists()


def test_shell_syntax_in_an_argument_is_passed_verbatim(work: Path) -> None:
    """Arguments reach the program as they are: nothing is expanded or executed."""
    argument = "$(touch pwned); `touch pwned2` && touch pwned3 | cat > out *"
    outcome = evidence_in(work).run_command(
        [*python("import sys; print(sys.argv[1])"), argument], timeout=30
    )
    assert (outcome.exit_code, outcome.output) == (0, argument)
    assert list(work.iterdir()) == []


def test_a_missing_program_is_reported_not_raised(work: Path) -> None:
    """The error names the program and suggests PATH."""
    outcome = evidence_in(work).run_command(["phasegate-no-such-program", "-q"], timeout=30)
    assert (outcome.exit_code, outcome.output, outcome.timed_out) == (None, "", False)
    assert outcome.error == (
        "program not found: phasegate-no-such-program (is it installed and on PATH?)"
    )


def test_an_argument_no_program_can_receive_is_reported_not_raised(work: Path) -> None:
    """A NUL byte cannot be passed to a program; the check fails instead of the gate."""
    outcome = evidence_in(work).run_command([sys.executable, "a\0b"], timeout=30)
    assert (outcome.exit_code, outcome.error) == (
        None,
        f"cannot run {sys.executable}: embedded null byte",
    )


def test_a_file_without_execute_permission_is_reported_as_not_executable(work: Path) -> None:
    """Relative program paths are found from the work directory."""
    script = work / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    outcome = evidence_in(work).run_command(["./check.sh"], timeout=30)
    assert (outcome.exit_code, outcome.error) == (None, "not executable: ./check.sh")


def test_a_command_past_its_timeout_is_killed_with_everything_it_started(work: Path) -> None:
    """The whole process group goes: a grandchild (a test runner's worker) does not linger."""
    pid_file = work / "grandchild.pid"
    argv = python("""
        import pathlib, subprocess, sys, time
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        pathlib.Path("grandchild.pid").write_text(str(grandchild.pid))
        print("started", flush=True)
        time.sleep(60)
    """)
    started = time.monotonic()
    outcome = evidence_in(work).run_command(argv, timeout=1.0)
    grandchild = int(pid_file.read_text())
    assert (outcome.exit_code, outcome.timed_out, outcome.error) == (None, True, None)
    assert outcome.output == "started"
    assert time.monotonic() - started < 30  # not the child's 60 s sleep
    assert gone(grandchild)


# --- changes and tools ----------------------------------------------------------------------


def test_changed_paths_are_the_added_and_modified_files_not_the_deleted(work: Path) -> None:
    """Deletions are not changes a glob can ask for (taking snapshots from disk is
    tests/test_workspace.py's subject)."""
    baseline = WorkspaceSnapshot({"src/kept.py": "a", "src/edited.py": "a", "gone.md": "a"})
    current = WorkspaceSnapshot({"src/kept.py": "a", "src/edited.py": "b", "new.md": "n"})
    diff = WorkspaceDiff.between(baseline, current)
    evidence = DiskEvidence(work, diff=diff, tools={})
    assert list(evidence.changed_paths()) == ["new.md", "src/edited.py"]


def test_tool_successes_are_the_counts_handed_in(work: Path) -> None:
    """The runner counts the calls; the evidence passes them on."""
    evidence = DiskEvidence(work, diff=NO_CHANGES, tools={"Edit": 2, "Read": 0})
    assert dict(evidence.tool_successes()) == {"Edit": 2, "Read": 0}


def test_checks_judged_against_the_disk_report_each_failure(work: Path) -> None:
    """End to end: a short file, a missing file and a failing command, all reported."""
    (work / "architecture.md").write_text("# Architecture\n" * 7)
    outcomes = evaluate_all(
        [
            MinLines(path="architecture.md", n=20),
            FileExists(path="prd.md"),
            CommandCheck(argv=tuple(python("print('1 failed'); raise SystemExit(1)"))),
        ],
        evidence_in(work),
    )
    heads = [outcome.detail.splitlines()[0] for outcome in outcomes]
    assert [outcome.ok for outcome in outcomes] == [False, False, False]
    assert heads[:2] == ["architecture.md has 7 lines", "prd.md does not exist"]
    assert heads[2].endswith("` exited with 1")
    assert outcomes[2].detail.endswith("last output:\n1 failed")


# --- the files of a directory -----------------------------------------------------------------


def test_a_directory_s_files_come_from_the_snapshot_so_what_snapshots_skip_never_counts(
    work: Path,
) -> None:
    """node_modules, .git and __pycache__ under the directory do not make up the count."""
    from phasegate.phases.checks import DirFiles
    from phasegate.workspace.observer import WorkspaceObserver

    for name in ("src/a.py", "src/pkg/b.py", "src/node_modules/x.js", "src/__pycache__/a.pyc"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("x\n")
    snapshot = WorkspaceObserver(work).snapshot()
    evidence = DiskEvidence(work, diff=NO_CHANGES, tools={}, snapshot=snapshot)
    assert evidence.files_under("src") == ["src/a.py", "src/pkg/b.py"]
    (outcome,) = evaluate_all([DirFiles(path="src", min=3)], evidence)
    assert (outcome.ok, outcome.detail) == (False, "src holds 2 files: src/a.py, src/pkg/b.py")


def test_a_directory_link_leading_outside_the_work_directory_is_refused(
    work: Path, tmp_path: Path
) -> None:
    """A symbolic link cannot make a directory elsewhere count."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (work / "src").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="outside the work directory"):
        evidence_in(work).files_under("src")
    with pytest.raises(FileNotFoundError):
        evidence_in(work).files_under("missing")


def test_a_command_does_not_get_what_the_process_set_for_itself(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable the gate's process set for itself alone (the plugin's hook turning
    pydantic's plugins off) is not the command's: it runs as it would outside the gate."""
    monkeypatch.setattr(environment, "_OWN", {})
    monkeypatch.delenv("PHASEGATE_SELF_ONLY", raising=False)
    environment.set_for_self("PHASEGATE_SELF_ONLY", "1")
    try:
        outcome = evidence_in(work).run_command(
            python("import os; print(os.environ.get('PHASEGATE_SELF_ONLY', 'absent'))"),
            timeout=30,
        )
    finally:
        del os.environ["PHASEGATE_SELF_ONLY"]
    assert outcome.output == "absent"
