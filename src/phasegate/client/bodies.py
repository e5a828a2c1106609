"""The service's response bodies, read into the wire schema's models, tolerant of fields a newer
service adds (consumers ignore what they do not know) and strict about the rest."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from phasegate.client.errors import bad_answer
from phasegate.client.schema import Health, RunInfo

_Model = TypeVar("_Model", bound=BaseModel)


def json_object(body: bytes, status_code: int) -> dict[str, Any]:
    """The answer's body as one JSON object, else a :class:`ServiceError`."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise bad_answer(f"a {status_code} answer that is not a JSON object")
    return data


def run_info(data: object) -> RunInfo:
    """A run (fields this client does not know are left out)."""
    if not isinstance(data, dict):
        raise bad_answer("a run that is not a JSON object")
    return _parse(RunInfo, data)


def health(data: dict[str, Any]) -> Health:
    """The service's health (fields this client does not know are left out)."""
    return _parse(Health, data)


def _parse(model: type[_Model], data: dict[str, Any]) -> _Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise bad_answer(
            f"a {model.__name__} that breaks the schema ({where}: {first['msg']})"
        ) from exc
