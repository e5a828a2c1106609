"""The run's page says how the agent was confined and lists each attempt to leave, escaped;
a report without a sandbox, or one whose sandbox is not of the expected shape, adds nothing.
Each attempt also stands in the conversation, where it was recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phasegate.recording.page import render_page
from tests.helpers.recording_fixtures import Builder, gate_run


def _page(tmp_path: Path, **fields: Any) -> str:
    folder = gate_run(tmp_path / "run")
    report = json.loads((folder / "report.json").read_text())
    (folder / "report.json").write_text(json.dumps({**report, **fields}))
    return render_page(folder)


def test_a_confined_run_shows_its_hosts_and_what_was_blocked(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        sandbox={"mode": "on", "confined": True, "network": ["pypi.org"], "unavailable": None},
        blocked=[{"kind": "path", "tool": "Bash", "tool_use_id": "a",
                  "detail": "<b>/etc/x</b>: Read-only file system"}],
    )  # fmt: skip
    assert "<h2>Sandbox</h2><p>confined (on); hosts allowed: pypi.org</p>" in page
    assert "Blocked by the sandbox (1)" in page
    assert "<code>&lt;b&gt;/etc/x&lt;/b&gt;: Read-only file system</code>" in page
    assert "<b>/etc/x</b>" not in page


def test_what_an_attempt_went_for_is_shown_escaped_when_the_report_says(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        sandbox={"mode": "on", "confined": True, "network": [], "unavailable": None},
        blocked=[{"kind": "host", "tool": "Bash", "tool_use_id": "a",
                  "target": "<i>evil.example:443</i>", "detail": "deny network-outbound"}],
    )  # fmt: skip
    assert "host: Bash <code>&lt;i&gt;evil.example:443&lt;/i&gt;</code>: <code>deny" in page
    assert "<i>evil.example" not in page


def test_an_attempt_stands_in_the_conversation_after_the_result_that_shows_it(
    tmp_path: Path,
) -> None:
    run = Builder()
    run.call("Bash", {"command": "echo x > /etc/x"}, "/etc/x: Read-only file system")
    said = "/etc/x: Read-only file system"
    at = run.add("blocked", blocked="path", tool="Bash", tool_use_id="toolu_0",
                 target="echo <b>x</b> > /etc/x", detail=said)  # fmt: skip
    run.add("assistant", text="PHASE 1 COMPLETE: done")
    run.part(0, "edit", index=1)
    page = render_page(run.write(tmp_path / "run"))
    block = page[page.index(f'id="e{at}"') :]
    assert block.index("blocked by the sandbox (path): Bash echo &lt;b&gt;x&lt;/b&gt;") < 200
    assert "<pre>/etc/x: Read-only file system</pre>" in block
    assert "<b>x</b>" not in page


def test_an_optional_sandbox_that_could_not_run_says_why(tmp_path: Path) -> None:
    page = _page(
        tmp_path, sandbox={"mode": "optional", "confined": False, "unavailable": "no bwrap"}
    )
    assert "<p>not confined: no bwrap</p>" in page


def test_no_sandbox_or_a_malformed_one_adds_nothing(tmp_path: Path) -> None:
    assert "Sandbox" not in _page(tmp_path)
    assert "Sandbox" not in _page(tmp_path / "b", sandbox="on", blocked="x")
