"""Reading YAML/JSON files into pydantic models with errors that name the file and field.

Shared by task, pipeline and scripted-agent script files, so every file phasegate reads
fails the same way: which file, which field, what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Strict, ValidationError

from phasegate._files.limits import NotRegularFileError, ParseProblem
from phasegate._files.parsing import parse_data, read_text
from phasegate.errors import _FileFieldError

ModelT = TypeVar("ModelT", bound=BaseModel)

WholeNumber = Annotated[int, Strict()]
"""A count or code in a file: a whole number, and only that. ``bool`` is a subclass of
``int``, so a lax ``int`` field takes ``true`` as 1 (and ``"3"`` as 3): ``repeats: true``
would run once instead of being refused."""

Number = Annotated[float, Strict()]
"""Seconds or dollars in a file: a number (whole or not), never ``true``, ``false`` or text."""

_FRIENDLY = {
    "missing": "is required but missing",
    "extra_forbidden": "is not a known key",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "dict_type": "must be a mapping (key: value)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "too_short": "must not be empty",
    "string_too_short": "must not be empty",
}


class OptionValueError(ValueError):
    """A validator's ValueError that a keyword argument of the loading call would avoid;
    the file error it becomes carries that ``option``."""

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(message)
        self.option = option


class LocatedValueError(ValueError):
    """A model validator's ValueError about one field below the model (``location``, as
    pydantic locates fields), so the file error it becomes names that field."""

    def __init__(self, message: str, *, location: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.location = location


def read_mapping(path: Path, error: type[_FileFieldError]) -> dict[str, Any]:
    """Parse a YAML or JSON file whose top level must be a mapping.

    JSON is chosen by the ``.json`` suffix; anything else is read as YAML (a superset). The
    limits of :mod:`phasegate._files.parsing` apply.
    """
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise error(path, None, "file not found") from None
    except NotRegularFileError as exc:
        raise error(path, None, f"{exc.strerror}; expected a YAML or JSON file") from None
    except OSError as exc:
        raise error(path, None, f"cannot read the file: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise error(path, None, str(exc)) from None
    try:
        data = parse_data(text, json_syntax=path.suffix.lower() == ".json")
    except ParseProblem as exc:
        raise error(path, None, str(exc)) from None
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise error(path, None, f"expected a mapping at the top level, found {found}")
    return data


def validate_model(
    model: type[ModelT],
    data: Mapping[str, Any],
    *,
    path: Path | None,
    error: type[_FileFieldError],
    context: dict[str, Any] | None = None,
) -> ModelT:
    """Build ``model`` from ``data``; a validation failure becomes ``error`` naming the field."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise _as_file_error(exc, model, path, error) from None


def _as_file_error(
    exc: ValidationError, model: type[BaseModel], path: Path | None, error: type[_FileFieldError]
) -> _FileFieldError:
    problems: list[tuple[str, str]] = []
    option: str | None = None
    errors = exc.errors(include_url=False)
    for item in errors:
        cause = item.get("ctx", {}).get("error")
        option = option or getattr(cause, "option", None)
        below = cause.location if isinstance(cause, LocatedValueError) else ()
        location = [str(part) for part in (*item["loc"], *below)]
        if item["type"] == "too_short" and any(
            len(other["loc"]) > len(item["loc"]) and other["loc"][: len(item["loc"])] == item["loc"]
            for other in errors
        ):
            continue  # pydantic counts only valid items: the list is not empty, its items are bad
        field = ".".join(location)
        message = _FRIENDLY.get(item["type"], item["msg"].removeprefix("Value error, "))
        if item["type"] in ("int_type", "float_type"):
            message += f", not {_shown_input(item.get('input'))}"
        if item["type"] == "extra_forbidden":
            known = _known_keys(model, location[:-1])
            if known:
                message += f"; expected one of: {', '.join(known)}"
        problems.append((field, message))
    field, first = problems[0]
    more = "".join(f"\n  also {f or '<top level>'}: {m}" for f, m in problems[1:])
    return error(path, field or None, first + more, option=option)


def _shown_input(value: object) -> str:
    """A value a number field refused, as the file spells it."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (true or false)"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    return f"a {type(value).__name__}"


def _known_keys(model: type[BaseModel], location: list[str]) -> list[str]:
    """The keys allowed at ``location`` (digits step into lists), for 'unknown key' errors."""
    current: type[BaseModel] | None = model
    for part in location:
        if current is None:
            return []
        if part.isdigit():
            continue
        info = current.model_fields.get(part)
        current = _inner_model(info.annotation) if info else None
    return list(current.model_fields) if current is not None else []


def _inner_model(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        found = _inner_model(argument)
        if found is not None:
            return found
    return None
