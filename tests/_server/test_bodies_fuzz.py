"""Fuzzing the service's request bodies: any JSON (shaped like a request or not), any bytes,
any Idempotency-Key, against every POST route. Every answer is a documented status, never a
5xx; a 4xx carries the error shape with a code docs/server.md lists (or FastAPI's 422 detail
for JSON that breaks the schema); the service stays healthy.

The app runs in this process (no port, no fork server: runs are accepted but never leave
the queue), so hundreds of requests take seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phasegate.client.schema import PlanRequest, RunRequest
from tests.helpers.fuzz import hostile_text
from tests.helpers.service_app import sync_client

pytestmark = pytest.mark.fuzz

SERVER_DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
ANSWERED = {200, 202, 400, 404, 409, 413, 422}
"""What a POST with the token may get from a healthy service that is not shutting down."""


def _documented_codes() -> dict[int, set[str]]:
    """The error codes of docs/server.md's table, by status."""
    codes: dict[int, set[str]] = {}
    for status, cell in re.findall(r"^\| `(\d{3})` \| (.*) \|$", SERVER_DOC.read_text(), re.M):
        codes[int(status)] = set(re.findall(r"`([a-z_]+)`", cell))
    return codes


DOCUMENTED = _documented_codes()

PATHS = st.sampled_from(["task.yaml", "three.yaml", "project", "empty", ".", "..", "/etc",
                         ".phasegate", "project/app.py", "nowhere", "scripts"])  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    hostile_text, PATHS,
)  # fmt: skip
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12,
)  # fmt: skip
FIELDS = sorted({*RunRequest.model_fields, *PlanRequest.model_fields})
SHAPED = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), JSON, max_size=6)
"""Objects with the requests' own keys (and others)."""
DEFINITIONS = st.one_of(
    PATHS,
    st.fixed_dictionaries({"name": hostile_text, "phases": st.lists(
        st.fixed_dictionaries({"name": hostile_text, "instructions": hostile_text},
                              optional={"output_schema": PATHS | JSON}), max_size=2)}),
    JSON,
)  # fmt: skip
OBJECTS = st.dictionaries(st.text(max_size=8), JSON, max_size=4)
FOR_RUNS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "task": {"mode": st.sampled_from(["gate", "single-query", "unstructured"]),
             "max_attempts": st.integers(1, 100)},
    "pipeline": {"isolation": st.sampled_from(["session", "process"])},
    "": {"copy_workdir": st.booleans(), "timeout": st.floats(min_value=0.001, max_value=1e6),
         "max_cost": st.floats(min_value=0, max_value=1e6), "model": hostile_text,
         "inputs": OBJECTS, "plan": OBJECTS},
}  # fmt: skip
FOR_PLANS: dict[str, st.SearchStrategy[Any]] = {
    "responses": OBJECTS,
    "questions_per_turn": st.integers(1, 10),
}
REQUESTS = st.one_of(*(
    st.fixed_dictionaries({kind: DEFINITIONS, "workdir": st.one_of(PATHS, PATHS, hostile_text)},
                          optional={"context": OBJECTS, **extra})
    for kind in ("task", "pipeline")
    for extra in ({**FOR_RUNS[kind], **FOR_RUNS[""]}, FOR_PLANS)
))  # fmt: skip
"""Objects close to a run or plan request, each field with a value of its kind: they reach
past the schema into paths, definitions, plans and inputs."""


def _raw(value: Any) -> bytes:
    return json.dumps(value).encode()


BODIES = st.one_of(
    REQUESTS.map(_raw),
    REQUESTS.map(_raw),
    SHAPED.map(_raw),
    JSON.map(_raw),
    st.binary(max_size=200),
    hostile_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"NaN", b'{"timeout": 1e999}', b'{"workdir": "\\ud800"}', b"[" * 5000]),
)
QUEUED = "the id of a run accepted before the fuzzing starts"
ROUTES = st.sampled_from(["/v1/runs", "/v1/runs", "/v1/plans", "/v1/plans", "/v1/runs/abc/cancel",
                          f"/v1/runs/{QUEUED}/cancel", f"/v1/runs/{QUEUED}/resume"])  # fmt: skip
KEYS = st.one_of(st.none(), st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                                    max_size=300))  # fmt: skip


def test_no_body_gets_a_server_error_or_an_undocumented_answer(root: Path) -> None:
    with sync_client(root) as client:
        body = {"task": "task.yaml", "workdir": "project", "copy_workdir": True}
        queued = client.post("/v1/runs", json=body).json()["id"]

        @given(
            route=ROUTES,
            body=BODIES,
            key=KEYS,
            content_type=st.sampled_from(["application/json", "text/plain"]),
        )
        @settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # fmt: skip
        def answers_as_documented(
            route: str, body: bytes, key: str | None, content_type: str
        ) -> None:
            headers = {"Content-Type": content_type}
            if key is not None:
                headers["Idempotency-Key"] = key
            answer = client.post(route.replace(QUEUED, queued), content=body, headers=headers)
            _check(answer.status_code, answer.text)

        answers_as_documented()
        assert client.get("/healthz").json()["status"] == "ok"


def _check(status: int, text: str) -> None:
    assert status in ANSWERED, (status, text)
    assert "Traceback" not in text
    if status < 400:
        return
    body = json.loads(text)
    if status == 422 and "detail" in body:
        return  # FastAPI's shape for JSON that breaks the schema, as documented
    code = body["error"]["code"]
    assert code in DOCUMENTED[status], (status, code, text)


def test_the_documented_codes_are_read_from_the_page() -> None:
    assert {"bad_body", "bad_idempotency_key", "outside_root"} <= DOCUMENTED[400]
    assert DOCUMENTED[503] >= {"storage_failed", "shutting_down", "too_many_streams"}
