"""The job summary says how the agent was confined and lists each attempt to leave, in the
report's words shown as code; without a sandbox it says nothing about one."""

from __future__ import annotations

from phasegate._github.summary import job_summary
from phasegate._github.view import ReportView
from phasegate.evidence.confinement import Blocked
from phasegate.phases.sandbox import SandboxOutcome


def _summary(sandbox: SandboxOutcome | None, *blocked: Blocked) -> str:
    view = ReportView(kind="task", name="t", verdict="accepted", exit_code=0, sandbox=sandbox,
                      blocked=blocked)  # fmt: skip
    return job_summary(view, omitted_annotations={})


def test_a_confined_run_names_its_hosts_and_each_blocked_attempt() -> None:
    summary = _summary(
        SandboxOutcome(mode="on", confined=True, network=("pypi.org",)),
        Blocked(kind="path", tool="Bash", tool_use_id="a", detail="/x: Read-only file system"),
        Blocked(
            kind="host", tool="Bash", tool_use_id="b", detail="deny network-outbound e.com:443"
        ),
    )
    assert "**Sandbox:** confined (on); hosts allowed: ` pypi.org `" in summary
    assert "**Blocked by the sandbox** (2)" in summary
    assert "- path: ` Bash ` ` /x: Read-only file system `" in summary
    assert "- host: ` Bash ` ` deny network-outbound e.com:443 `" in summary


def test_what_an_attempt_went_for_is_shown_as_code_when_the_report_says() -> None:
    summary = _summary(
        SandboxOutcome(mode="on", confined=True),
        Blocked(kind="file_tool", tool="Write", tool_use_id="w", target="/etc/`x`",
                detail="Refused: /etc/x is outside"),
    )  # fmt: skip
    assert "- file_tool: ` Write ` `` /etc/`x` ``: ` Refused: /etc/x is outside `" in summary


def test_an_optional_sandbox_that_could_not_run_is_a_warning() -> None:
    summary = _summary(SandboxOutcome(mode="optional", confined=False, unavailable="no bwrap"))
    assert "**Sandbox:** ⚠️ not confined: ` no bwrap `" in summary


def test_no_sandbox_asked_for_no_word_of_one() -> None:
    assert "Sandbox" not in _summary(None)
