"""The service refuses what it must: no token, a foreign Host or Origin, paths out of the
root, oversized bodies; and a repeated request with its idempotency key starts nothing new."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.service import Service, running_service
from tests.helpers.service_root import make_root

pytestmark = pytest.mark.cli


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the root, with a task file."""
    return tmp_path_factory.mktemp("outside")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, outside: Path) -> Iterator[Service]:
    """One service for the module; its root has symlinks leading to ``outside``."""
    root = make_root(tmp_path_factory.mktemp("service") / "root")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (outside / "elsewhere.yaml").write_text((root / "task.yaml").read_text())
    (root / "outside.yaml").symlink_to(outside / "elsewhere.yaml")
    (root / "project" / "inner").mkdir()
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as running:
        yield running


def test_the_token_file_is_made_private_on_first_start(service: Service) -> None:
    path = service.root / ".phasegate" / "server-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(service.token) >= 40
    assert f"phasegate serve: token file {path}" in service.said


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Basic abc", "Bearer"])
def test_a_missing_or_wrong_token_is_401(service: Service, header: str | None) -> None:
    headers = {"Authorization": header} if header is not None else {}
    for method, path in (("GET", "/v1/runs"), ("POST", "/v1/runs"), ("GET", "/v1/runs/x")):
        answer = httpx.request(method, service.url + path, headers=headers, json={})
        assert answer.status_code == 401, (method, path)
        assert answer.json()["error"]["code"] == "unauthorized"
        assert answer.headers["www-authenticate"] == "Bearer"
        assert service.token not in answer.text


def test_health_and_the_openapi_document_need_no_token_and_no_page_loads_scripts_elsewhere(
    service: Service,
) -> None:
    assert httpx.get(service.url + "/healthz").json() == {"status": "ok", "api_version": "v1"}
    assert httpx.get(service.url + "/openapi.json").json()["info"]["title"] == "phasegate"
    for page in ("/docs", "/redoc"):
        assert httpx.get(service.url + page).status_code == 404


def test_an_inline_definition_nested_too_deep_is_refused_not_a_server_error(
    service: Service,
) -> None:
    nested: dict[str, object] = {"k": 1}
    for _ in range(300):
        nested = {"k": nested}
    body = {"task": {"name": "t", "phases": [{"name": "p", "extra": nested}]}, "workdir": "project"}
    answer = service.client().post("/v1/runs", json=body)
    assert answer.status_code == 422
    assert "64 levels" in answer.text


@pytest.mark.parametrize(
    "body",
    [
        b'{"task": "task.yaml", "workdir": "project", "timeout": NaN}',
        b'{"task": "task.yaml", "workdir": "project", "max_cost": 1e999}',
        b'{"task": "task.yaml", "workdir": "project", "timeout": -Infinity}',
        b'{"task": "task.yaml", "workdir": "\\ud800"}',
        b"not json at all",
        b"\xff\xfe\x00garbage",
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["nan", "1e999", "infinity", "lone-surrogate", "text", "bytes", "deep"],
)
def test_a_body_that_is_not_strict_json_is_400_bad_body_and_starts_nothing(
    service: Service, body: bytes
) -> None:
    before = _runs(service)
    for content_type in ("application/json", "text/plain"):
        answer = service.client().post(
            "/v1/runs", content=body, headers={"Content-Type": content_type}
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "bad_body"
        assert "Traceback" not in answer.text
    assert _runs(service) == before
    assert httpx.get(service.url + "/healthz").json()["status"] == "ok"


@pytest.mark.parametrize("key", [b"k" * 256, b"", "caf\u00e9".encode()])
def test_an_idempotency_key_that_cannot_be_one_is_400_bad_idempotency_key(
    service: Service, key: bytes
) -> None:
    answer = service.client().post(
        "/v1/runs",
        json={"task": "task.yaml", "workdir": "project", "copy_workdir": True},
        headers={b"Idempotency-Key": key},
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == {
        "code": "bad_idempotency_key",
        "message": "an Idempotency-Key is 1 to 255 printable ASCII characters",
        "field": "Idempotency-Key",
    }


@pytest.mark.parametrize(
    "body", [b"not json", b'{"task": 1}', b'{"timeout": NaN}', b"x" * (2 * 1024 * 1024)]
)
def test_a_request_without_the_token_is_401_whatever_its_body(
    service: Service, body: bytes
) -> None:
    for path in ("/v1/runs", "/v1/plans", "/v1/runs/nope/cancel"):
        answer = httpx.post(
            service.url + path, content=body, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example:8080"},
        {"Host": "127.0.0.1.evil.example"},
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
    ],
)
def test_a_foreign_host_or_origin_is_403_even_with_the_token(
    service: Service, headers: dict[str, str]
) -> None:
    for path in ("/v1/runs", "/healthz"):
        answer = httpx.get(service.url + path, headers={**service.auth, **headers})
        assert answer.status_code == 403
        assert answer.json()["error"]["code"] == "forbidden_host"


def test_a_local_origin_is_allowed(service: Service) -> None:
    origin = {"Origin": service.url}
    assert httpx.get(service.url + "/v1/runs", headers={**service.auth, **origin}).is_success


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"task": "task.yaml", "workdir": "../"}, "workdir", "outside_root"),
        ({"task": "task.yaml", "workdir": "/etc"}, "workdir", "outside_root"),
        ({"task": "task.yaml", "workdir": "escape"}, "workdir", "outside_root"),
        ({"task": "../task.yaml", "workdir": "project"}, "task", "not_found"),
        ({"task": "outside.yaml", "workdir": "project"}, "task", "outside_root"),
        ({"task": "task.yaml", "workdir": ".phasegate"}, "workdir", "reserved_path"),
        ({"task": "task.yaml", "workdir": "nowhere"}, "workdir", "not_found"),
        ({"task": "project", "workdir": "project"}, "task", "not_a_file"),
        ({"task": "task.yaml", "workdir": "."}, "workdir", "reserved_path"),
        ({"task": "task.yaml", "workdir": "a" * 300}, "workdir", "bad_path"),
        ({"pipeline": "task.yaml", "workdir": "empty"}, "pipeline", "invalid_pipeline"),
        (
            {"task": {"name": "t", "phases": []}, "workdir": "project"},
            "task.phases",
            "invalid_task",
        ),
    ],
)  # fmt: skip
def test_a_path_that_escapes_the_root_or_a_bad_definition_is_400_naming_the_field(
    service: Service, outside: Path, body: dict[str, object], field: str, code: str
) -> None:
    before = _runs(service)
    answer = service.client().post("/v1/runs", json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["field"], error["code"]) == (field, code)
    assert str(outside) not in error["message"]
    assert str(service.root) not in error["message"]
    assert _runs(service) == before


def test_a_body_over_a_mebibyte_is_413_declared_or_streamed(service: Service) -> None:
    body = {"task": {"name": "t", "description": "x" * (1024 * 1024)}, "workdir": "project"}
    declared = service.client().post("/v1/runs", json=body)
    chunks = (b"x" * 65536 for _ in range(20))
    streamed = service.client().post(
        "/v1/runs", content=chunks, headers={"Content-Type": "application/json"}
    )
    for answer in (declared, streamed):
        assert answer.status_code == 413
        assert answer.json()["error"]["code"] == "body_too_large"
    assert "content-length" not in streamed.request.headers


def test_an_idempotency_key_returns_the_same_run_and_refuses_another_request(
    service: Service,
) -> None:
    client = service.client()
    body = {"task": "task.yaml", "workdir": "project", "copy_workdir": True}
    key = {"Idempotency-Key": "order-42"}

    runs_before = len(_runs(service))
    first = client.post("/v1/runs", json=body, headers=key)
    again = client.post("/v1/runs", json=body, headers=key)
    other = client.post("/v1/runs", json={**body, "mode": "single-query"}, headers=key)

    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert first.json()["id"] in _runs(service)
    assert len(_runs(service)) == runs_before + 1


def test_a_second_run_in_a_busy_or_overlapping_work_directory_is_409(service: Service) -> None:
    client = service.client()
    first = service.start_run(client, task="task.yaml", workdir="project")
    busy = client.post("/v1/runs", json={"task": "task.yaml", "workdir": "project"})
    inside = client.post("/v1/runs", json={"task": "task.yaml", "workdir": "project/inner"})
    assert inside.status_code == 409
    copy = client.post(
        "/v1/runs", json={"task": "task.yaml", "workdir": "project", "copy_workdir": True}
    )
    assert busy.status_code == 409
    assert busy.json()["error"] == {
        "code": "workdir_busy",
        "message": busy.json()["error"]["message"],
        "field": "workdir",
    }
    assert first["id"] in busy.json()["error"]["message"]
    assert copy.status_code == 202


def _runs(service: Service) -> set[str]:
    folder = service.root / ".phasegate" / "runs"
    return set(os.listdir(folder)) if folder.exists() else set()


def test_the_service_keeps_its_folders_and_run_output_to_its_user(service: Service) -> None:
    client = service.client()
    run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
    service.wait(client, run["id"])
    state = service.root / ".phasegate"
    for folder in (state, state / "runs", state / "runs" / run["id"]):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((state / "runs" / run["id"] / "process.log").stat().st_mode) == 0o600
