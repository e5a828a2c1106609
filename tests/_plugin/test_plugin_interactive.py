"""The plugin in a real interactive session: the bundled ``claude`` in a tmux pane (a real
terminal) with the plugin loaded, commands typed with ``send-keys``, the gate's feedback and
its acceptance read from the screen with ``capture-pane``."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from phasegate.testing import load_script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import ROOT, claude
from tests.helpers.scenarios import EXAMPLE

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


class Pane:
    """One tmux server of its own (``-L``), one pane running a command."""

    def __init__(self, command: str) -> None:
        self.socket = f"phasegate-test-{uuid.uuid4().hex[:8]}"
        self._tmux("new-session", "-d", "-x", "160", "-y", "50", command)
        self.path = Path(self._tmux("display-message", "-p", "#{socket_path}").strip())

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=30, check=True)  # fmt: skip
        return done.stdout

    def screen(self) -> str:
        """The pane with its scrollback."""
        return self._tmux("capture-pane", "-p", "-S", "-3000")

    def wait_for(self, text: str, timeout: float = 90) -> str:
        """The screen once it shows ``text`` (the test fails after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"the screen never showed {text!r}:\n{screen}")
            time.sleep(0.2)

    def type(self, line: str) -> None:
        """Type ``line``, wait until it shows, and press Enter."""
        self._tmux("send-keys", "-l", line)
        self.wait_for(line)
        self._tmux("send-keys", "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30, check=False)  # fmt: skip
        self.path.unlink(missing_ok=True)  # tmux leaves its socket file behind


@pytest.fixture
def interactive(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> Iterator[tuple[Pane, Path]]:
    """``claude --plugin-dir ROOT`` in a tmux pane, offline against the example's lazy model,
    in a copy of the example project (onboarding, trust and the API key accepted beforehand)."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    server = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    env = server.env()
    config = Path(env["CLAUDE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True,
        "projects": {str(work): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
    }))  # fmt: skip
    env |= {"PHASEGATE_PLUGIN_PYTHON": sys.executable, "IS_SANDBOX": "1",
            "TERM": "xterm-256color"}  # fmt: skip
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    pane = Pane(
        f"cd {shlex.quote(str(work))} && env {exports} {shlex.quote(str(claude()))} "
        f"--plugin-dir {shlex.quote(str(ROOT))} --permission-mode acceptEdits"
    )
    try:
        yield pane, work
    finally:
        pane.close()


def test_a_typed_run_shows_the_gates_feedback_then_its_acceptance_on_screen(
    interactive: tuple[Pane, Path],
) -> None:
    """Typed in a real terminal: the lazy model's claim is sent back with the gate's feedback,
    the model edits, and the screen shows the acceptance with the recording's page."""
    pane, work = interactive
    pane.wait_for("accept edits on")
    pane.type(f"/phasegate:run {EXAMPLE / 'task.yaml'}")
    # The terminal shows a Stop block as "stop hook problem" (its text goes to the model):
    # the model's answer to the gate's feedback is what the screen shows of it.
    pane.wait_for("stop hook problem")
    pane.wait_for("The gate is right, I only described the fix.")
    screen = pane.wait_for("task 'fix-vulnerability' accepted")
    assert "Update(app.py)" in screen and "phasegate view" in screen
    (state,) = [json.loads(p.read_text()) for p in work.glob(".phasegate/plugin/*/state.json")]
    assert [check["accepted"] for check in state["checks"]] == [False, True]
    assert {i["code"] for i in state["checks"][0]["issues"]} >= {"tool_not_used", "no_changes"}
    assert "_evaluate(ast.parse(expression" in (work / "app.py").read_text()
