"""The service against its own OpenAPI document: Schemathesis generates requests from it and
finds no server error and no response that breaks the document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance
from schemathesis.core.result import Ok

from tests.helpers.service import Service, running_service
from tests.helpers.service_root import make_root

pytestmark = pytest.mark.cli

EXAMPLES = 30
"""Generated requests per operation: enough to vary every field, few enough for the suite."""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for the module, with one finished run to find."""
    root = make_root(tmp_path_factory.mktemp("openapi") / "root")
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as running:
        client = running.client()
        run = running.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        running.wait(client, run["id"])
        yield running


def test_no_request_the_document_allows_gets_a_5xx_or_an_undocumented_answer(
    service: Service,
) -> None:
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json", headers=service.auth)
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results) == 9

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def answers_by_the_document(case: Any) -> None:
            # A request the document allows may still name a path that does not exist under
            # the root: a documented 400, not a broken contract, so that check is left out.
            case.call_and_validate(headers=service.auth, excluded_checks=[positive_data_acceptance])

        answers_by_the_document()


def test_the_document_describes_every_route_and_the_bearer_scheme(service: Service) -> None:
    document = service.client().get("/openapi.json").json()
    assert set(document["paths"]) == {
        "/v1/runs", "/v1/plans", "/v1/runs/{run_id}", "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}/cancel", "/v1/runs/{run_id}/resume", "/v1/runs/{run_id}/view",
        "/healthz",
    }  # fmt: skip
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    events = document["paths"]["/v1/runs/{run_id}/events"]["get"]["responses"]["200"]
    assert "text/event-stream" in events["content"]
