"""Secrets in what phasegate shows: one redaction, for inputs, events and the service."""

from __future__ import annotations

import io
import json

import pytest

from phasegate._secrets import REDACTED, redact, redact_text
from phasegate.telemetry.events import RunEvent, RunStarted
from phasegate.telemetry.log import EventLog

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

CREDENTIAL_URLS = {
    f"https://x-access-token:{TOKEN}@github.com/o/r.git": f"x-access-token:{TOKEN}",
    f"https://{TOKEN}@github.com/o/r.git": TOKEN,
    f"https://{TOKEN}:x-oauth-basic@github.com/o/r": TOKEN,
    "https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.com/o/r.git": "glpat-abcdefghijklmnopqrst",
    "https://user:p%40ss-w0rd@example.com/r.git": "p%40ss-w0rd",
    "http://deploy:secretvalue@10.0.0.1:8080/r.git": "secretvalue",
    "ssh://git:hunter2hunter2@host/r.git": "hunter2hunter2",
    "postgres://app:s3cr3t-pw@db.internal:5432/app": "s3cr3t-pw",
}


@pytest.mark.parametrize(("url", "secret"), CREDENTIAL_URLS.items())
def test_credentials_inside_a_url_are_redacted_and_the_host_kept(url: str, secret: str) -> None:
    """What follows the `@` (host, path) stays readable."""
    shown = redact_text(f"remote is {url} (origin)")
    assert secret not in shown
    assert f"://{REDACTED}@" in shown
    assert shown.endswith(url.split("@", 1)[1] + " (origin)")


@pytest.mark.parametrize(
    "text",
    ["ssh://git@github.com/o/r.git", "https://github.com/o/r.git", "git@github.com:o/r.git",
     "mail me at someone@example.com"],
)  # fmt: skip
def test_urls_without_credentials_are_left_alone(text: str) -> None:
    """A plain user name (`git@`) is no secret; neither is an e-mail address."""
    assert redact_text(text) == text


@pytest.mark.parametrize(("url", "secret"), CREDENTIAL_URLS.items())
def test_an_event_carrying_a_credential_url_is_logged_without_it(url: str, secret: str) -> None:
    """Events (and the service's answers, which use the same `redact`) never show it."""
    stream = io.StringIO()
    log = EventLog(stream=stream)
    started = RunStarted(agent="claude", workdir=f"checkout of {url}", phases=1, max_attempts=1)
    log(RunEvent(data=started, run_id="r", task="t", mode="gate"))
    line = json.loads(stream.getvalue())
    assert secret not in stream.getvalue()
    assert line["workdir"].startswith("checkout of " + url.split("://")[0] + f"://{REDACTED}@")
    assert secret not in json.dumps(redact({"inputs": [url]}))
