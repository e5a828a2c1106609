"""A run's own limits hold over HTTP, and secrets never leave the service."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.service import events, running_service

pytestmark = pytest.mark.cli

SECRET = "sk-ant-api03-DoNotShowThisAnywhere42"
TOKEN = "the-service-token-0123456789"


def test_a_run_that_outlives_its_timeout_ends_with_the_error_and_its_report(root: Path) -> None:
    with running_service(root, "--model-script", root / "scripts" / "hang.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", timeout=3)
        ended = service.wait(client, run["id"])

    assert (ended["status"], ended["verdict"]) == ("finished", "error")
    assert ended["error"] == "the run did not finish within its timeout of 3 s"
    assert ended["report"]["error"] == ended["error"]


def test_secrets_in_what_the_model_says_reach_neither_responses_nor_events(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example's model, saying secrets in its marker line and its summary's description.
    script = root / "scripts" / "secret.yaml"
    script.write_text(
        (root / "scripts" / "task.yaml").read_text()
        .replace("Files have been edited", f"Files have been edited with {SECRET} {TOKEN}")
        .replace("Replaced eval()", f"Replaced eval() ({SECRET}, environment-secret-value-123, "
                 f"{TOKEN})")
    )  # fmt: skip
    token_file = root / "token"
    token_file.write_text(TOKEN + "\n")
    monkeypatch.setenv("SERVICE_API_KEY", "environment-secret-value-123")
    with running_service(root, "--model-script", script, token_file=token_file) as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        streamed = events(client, run["id"])
        info = client.get(f"/v1/runs/{run['id']}")
        listing = client.get("/v1/runs")

    assert any("[redacted]" in e.data for e in streamed)
    for text in (info.text, listing.text, *(e.data for e in streamed)):
        assert SECRET not in text
        assert "environment-secret-value-123" not in text
        assert service.token not in text
    assert "[redacted]" in info.text
    assert os.environ["SERVICE_API_KEY"] == "environment-secret-value-123"
