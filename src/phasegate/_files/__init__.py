"""Reading the files users hand phasegate: bounded parsing, confined paths, model errors."""

from phasegate._files.confined import FILES_ROOT_OPTION, confined_path
from phasegate._files.limits import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    FileTooLargeError,
    NotRegularFileError,
    ParseProblem,
    open_regular,
    read_bounded,
)
from phasegate._files.models import (
    LocatedValueError,
    Number,
    OptionValueError,
    WholeNumber,
    read_mapping,
    validate_model,
)
from phasegate._files.parsing import parse_data, parse_json, read_text

__all__ = [
    "FILES_ROOT_OPTION",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "FileTooLargeError",
    "LocatedValueError",
    "NotRegularFileError",
    "Number",
    "OptionValueError",
    "ParseProblem",
    "WholeNumber",
    "confined_path",
    "open_regular",
    "parse_data",
    "parse_json",
    "read_bounded",
    "read_mapping",
    "read_text",
    "validate_model",
]
