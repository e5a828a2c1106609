"""Issues: what a validator found wrong, with a stable code.

Codes are a contract (dashboards count them, users grep for them): a code is never reused
for another meaning. Each issue also carries the pieces of the structured feedback the model
receives: the ``field`` concerned, what was ``provided``, and the ``requirement`` that would
satisfy the gate, so the model learns what to change and not only that something failed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

PROVIDED_LIMIT = 200
"""Characters of what the agent gave that an issue keeps; longer text is cut with "…"."""

IssueGroup = Literal["invalid", "missing", "unknown"]
"""How the feedback groups an issue: something wrong, something absent, something unexpected."""


class IssueCode(StrEnum):
    """Every issue code phasegate reports; the issue-code table of docs/completion.md says
    what each means."""

    MARKER_MISSING = "marker_missing"
    MARKER_BEFORE_WORK = "marker_before_work"
    TOOL_NOT_USED = "tool_not_used"
    TOOL_FAILED = "tool_failed"
    NO_CHANGES = "no_changes"
    JSON_MISSING = "json_missing"
    JSON_INVALID = "json_invalid"
    JSON_BEFORE_MARKER = "json_before_marker"
    SCHEMA_VIOLATION = "schema_violation"
    PLACEHOLDER_VALUE = "placeholder_value"
    CLAIMED_NOT_CHANGED = "claimed_not_changed"
    CHANGED_NOT_CLAIMED = "changed_not_claimed"
    PATH_OUTSIDE_WORKDIR = "path_outside_workdir"
    EXIT_CONDITION_FAILED = "exit_condition_failed"
    EDIT_NOT_ON_DISK = "edit_not_on_disk"
    CHANGE_WITHOUT_TOOL = "change_without_tool"
    READ_OUTSIDE_WORKDIR = "read_outside_workdir"
    READ_ONLY_VIOLATED = "read_only_violated"
    ANSWER_REFUSED = "answer_refused"
    TOOL_NOT_ALLOWED = "tool_not_allowed"
    PROTECTED_PATH_CHANGED = "protected_path_changed"
    CHECK_FAILED = "check_failed"
    CHECK_NOT_RUN = "check_not_run"
    CRITERION_NOT_MET = "criterion_not_met"


_DEFAULT_GROUP: dict[IssueCode, IssueGroup] = {
    IssueCode.MARKER_MISSING: "missing",
    IssueCode.TOOL_NOT_USED: "missing",
    IssueCode.NO_CHANGES: "missing",
    IssueCode.JSON_MISSING: "missing",
    IssueCode.CHANGED_NOT_CLAIMED: "missing",
}
"""Codes for something absent; every other code is ``invalid`` unless its issue says so."""


class Issue(BaseModel):
    """One problem found at a gate.

    ``message`` is a full sentence for humans and reports; the other fields feed the
    structured feedback prompt.
    """

    model_config = ConfigDict(frozen=True)

    code: IssueCode
    message: str
    phase: int | None = None
    """1-based index of the phase the issue belongs to."""
    field: str | None = None
    """What the issue concerns: ``marker``, ``tools``, ``files``, or a JSON path (``$.x``)."""
    provided: str | None = None
    """What the agent gave, shortened (absent when it gave nothing)."""
    requirement: str | None = None
    """What would satisfy the gate, phrased as a requirement."""
    group: IssueGroup = "invalid"
    path: str | None = None
    """The file in the work directory the issue is about (relative, ``/`` separators)."""

    @classmethod
    def of(
        cls,
        code: IssueCode,
        message: str,
        *,
        phase: int | None = None,
        field: str | None = None,
        provided: str | None = None,
        requirement: str | None = None,
        group: IssueGroup | None = None,
        path: str | None = None,
    ) -> Issue:
        """An issue whose group defaults from its code (absent things are ``missing``)."""
        return cls(
            code=code,
            message=message,
            phase=phase,
            field=field,
            provided=shorten(provided) if provided is not None else None,
            requirement=requirement,
            group=group or _DEFAULT_GROUP.get(code, "invalid"),
            path=path,
        )


def shorten(text: str, limit: int = PROVIDED_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, ending with "…" when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
