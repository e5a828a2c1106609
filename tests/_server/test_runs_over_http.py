"""Tasks and pipelines run end to end over HTTP: a real service, the real CLI, offline."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
import yaml

from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER
from tests.helpers.service import events, running_service

pytestmark = pytest.mark.cli


def test_a_task_runs_over_http_and_its_stream_is_its_event_log_in_order(root: Path) -> None:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        assert run["status"] in ("queued", "running")
        assert run["links"]["events"] == f"/v1/runs/{run['id']}/events"

        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()

        log = service.log_lines(run["id"])
        assert [e.data for e in streamed] == log
        assert [e.id for e in streamed] == list(range(1, len(log) + 1))
        assert [e.event for e in streamed] == [json.loads(line)["event"] for line in log]
        names = [e.event for e in streamed]
        assert names[0] == "run.queued" and names[-1] == "done"
        assert names[1] == "run.started" and names[-2] == "run.completed"
        assert {e.json["run_id"] for e in streamed} == {run["id"]}
        assert streamed[-1].json["status"] == "finished"
        assert streamed[-1].json["verdict"] == "accepted"

        assert finished["status"] == "finished" and finished["verdict"] == "accepted"
        assert finished["report"]["run_id"] == run["id"]
        assert finished["report"]["verdict"] == "accepted"
        copy = root / finished["workdir"]
        assert "ast" in (copy / "app.py").read_text()  # the copy was fixed...
        assert "eval(" in (root / "project" / "app.py").read_text()  # ...not the original


def test_a_pipeline_runs_over_http_in_its_work_directory(root: Path) -> None:
    with running_service(root, "--model-script", root / "scripts" / "pipeline.yaml") as service:
        client = service.client()
        run = service.start_run(client, pipeline="three.yaml", workdir="empty")
        finished = service.wait(client, run["id"])

        assert (finished["kind"], finished["status"], finished["verdict"]) == (
            "pipeline", "finished", "accepted",
        )  # fmt: skip
        assert finished["isolation"] == "session" and finished["mode"] is None
        assert sorted(p.name for p in (root / "empty").glob("*.md")) == [
            "one.md", "three.md", "two.md",
        ]  # fmt: skip
        names = [json.loads(line)["event"] for line in service.log_lines(run["id"])]
        assert names[:2] == ["run.queued", "pipeline.started"]
        assert names[-2:] == ["pipeline.completed", "done"]
        assert names.count("stage.completed") == 3


def test_a_client_that_reconnects_with_last_event_id_gets_every_event_exactly_once(
    root: Path,
) -> None:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)

        first = events(client, run["id"], stop_after=3)
        status_then = client.get(f"/v1/runs/{run['id']}").json()["status"]
        rest = events(client, run["id"], last_event_id=first[-1].id)

        assert status_then in ("queued", "running")  # the hang-up came mid-run
        received = [e.id for e in first + rest]
        assert received == list(range(1, len(service.log_lines(run["id"])) + 1))
        assert [e.data for e in first + rest] == service.log_lines(run["id"])


def test_a_stream_of_an_ended_run_replays_from_the_query_parameter_and_closes(
    root: Path,
) -> None:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        service.wait(client, run["id"])
        total = len(service.log_lines(run["id"]))

        with client.stream("GET", f"/v1/runs/{run['id']}/events?last_event_id={total - 2}") as a:
            tail = [line for line in a.iter_lines() if line.startswith("id:")]
        after_everything = events(client, run["id"], last_event_id=total)

        malformed = [
            events(client, run["id"], headers={"Last-Event-ID": bad})
            for bad in (b"\xb2", b"9" * 5000, b"seven", b"-3")
        ]

        assert tail == [f"id: {total - 1}", f"id: {total}"]
        assert after_everything == []
        for replay in malformed:  # a malformed Last-Event-ID counts as none: all of it again
            assert [e.id for e in replay] == list(range(1, total + 1))


def test_runs_are_listed_newest_first_a_page_at_a_time_and_by_status(root: Path) -> None:
    with running_service(
        root, "--model-script", root / "scripts" / "task.yaml", "--max-concurrent", "1"
    ) as service:
        client = service.client()
        ids = [
            service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)["id"]
            for _ in range(3)
        ]
        client.post(f"/v1/runs/{ids[2]}/cancel")

        first = client.get("/v1/runs", params={"limit": 2}).json()
        second = client.get("/v1/runs", params={"limit": 2, "cursor": first["next_cursor"]}).json()
        cancelled = client.get("/v1/runs", params={"status": "cancelled"}).json()
        bad_cursors = [client.get("/v1/runs", params={"cursor": c}) for c in ("abc", "²", "-1")]

        assert [r["id"] for r in first["runs"] + second["runs"]] == ids[::-1]
        assert second["next_cursor"] is None
        assert [r["id"] for r in cancelled["runs"]] == [ids[2]]
        for bad_cursor in bad_cursors:
            assert bad_cursor.status_code == 400
            assert bad_cursor.json()["error"]["field"] == "cursor"


def test_a_client_that_never_reads_holds_up_neither_the_run_nor_other_clients(
    root: Path,
) -> None:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        host, port = service.url.removeprefix("http://").rsplit(":", 1)
        with socket.socket() as stuck:
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            stuck.connect((host, int(port)))
            stuck.sendall(
                f"GET /v1/runs/{run['id']}/events HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer {service.token}\r\n\r\n".encode()
            )
            streamed = events(client, run["id"])
            finished = client.get(f"/v1/runs/{run['id']}").json()

    assert finished["status"] == "finished"
    assert [e.data for e in streamed] == service.log_lines(run["id"])


def test_a_tasks_tool_policy_holds_over_http(root: Path) -> None:
    """The service runs a definition through the one runner: a summary handed in before the
    work is refused there too, and the run's report and event stream say so."""
    early = {"submit_summary": {"summary": {"files_changed": ["app.py"]}}}
    script = root / "scripts" / "early-summary.yaml"
    script.write_text(yaml.safe_dump({"replies": [
        {"tools": [early]},
        {"when": "tool_error", "text": "Fixing it.", "tools": [EDIT]},
        {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"},
    ]}))  # fmt: skip
    with running_service(root, "--model-script", script) as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()

    assert finished["verdict"] == "accepted"
    (refused,) = finished["report"]["phases"][0]["refusals"]
    assert refused["tool"] == "mcp__phasegate__submit_summary"
    (event,) = [e.json for e in streamed if e.event == "tool.refused"]
    assert event["tool_use_id"] == refused["tool_use_id"]


def test_a_tasks_checks_run_over_http_and_stream_as_check_ran_events(root: Path) -> None:
    """examples/prove-the-fix served: each run of the phase's check is a check.ran event on
    the stream, in order, and the report holds the run that decided."""
    example = Path(__file__).resolve().parents[2] / "examples" / "prove-the-fix"
    shutil.copytree(example, root / "prove")
    with running_service(root, "--model-script", root / "prove" / "model.yaml") as service:
        client = service.client()
        run = service.start_run(
            client, task="prove/task.yaml", workdir="prove/project", copy_workdir=True
        )
        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()

    assert finished["verdict"] == "accepted", finished
    ran = [e.json for e in streamed if e.event == "check.ran"]
    assert [(e["phase"], e["passed"], e["exit_code"]) for e in ran] == [(1, False, 1), (1, True, 0)]
    (check,) = finished["report"]["phases"][0]["checks"]
    assert check["run"] == ran[-1]["run"] and check["passed"]
