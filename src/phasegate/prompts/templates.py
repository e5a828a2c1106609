"""Prompt templates: editable text files, bundled with the package and overridable.

Every prompt phasegate sends is rendered from a file in ``phasegate/prompts/templates/``
with ``$name`` placeholders (Python's :class:`string.Template`; write ``$$`` for a literal
dollar sign). A directory given as ``prompts_dir`` (or in ``PHASEGATE_PROMPTS_DIR``) overrides
any file it contains; the others keep their bundled text.
"""

from __future__ import annotations

import os
import string
from importlib import resources
from pathlib import Path

from phasegate._files import ParseProblem, read_text
from phasegate.errors import PromptTemplateError

PROMPTS_DIR_ENV = "PHASEGATE_PROMPTS_DIR"
"""The environment variable naming a directory of template overrides."""
TEMPLATE_NAMES = (
    "phased.md",
    "work_phase.md",
    "complete_marker.md",
    "complete_tool.md",
    "complete_either.md",
    "output_phase.md",
    "answer_marker.md",
    "answer_tool.md",
    "answer_either.md",
    "answer_structured.md",
    "unstructured.md",
    "unstructured_output.md",
    "feedback.md",
    "resume.md",
    "stage.md",
    "stage_feedback.md",
    "stage_revision.md",
    "pipeline_resume.md",
)
"""Every template phasegate renders; an override directory may replace any of them."""


class PromptTemplates:
    """The set of templates in use: bundled ones, with a directory's files taking precedence."""

    def __init__(self, directory: str | Path | None = None) -> None:
        chosen = directory if directory is not None else os.environ.get(PROMPTS_DIR_ENV) or None
        self.directory = Path(chosen) if chosen is not None else None
        if self.directory is not None and not self.directory.is_dir():
            raise PromptTemplateError(
                f"prompts directory {self.directory} does not exist or is not a directory; "
                f"create it, or unset {PROMPTS_DIR_ENV} and name no directory to use the bundled "
                "prompts",
                option="prompts_dir",
            )
        self._cache: dict[str, str] = {}

    def text(self, name: str) -> str:
        """The raw text of template ``name`` (e.g. ``"phased.md"``)."""
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def render(self, name: str, **values: object) -> str:
        """Template ``name`` with its placeholders filled; unknown placeholders are an error."""
        template = string.Template(self.text(name))
        try:
            return template.substitute({key: str(value) for key, value in values.items()})
        except KeyError as exc:
            raise PromptTemplateError(
                f"template {self._origin(name)} uses ${exc.args[0]}, which phasegate does not "
                f"provide there; available: {', '.join('$' + k for k in sorted(values))}"
            ) from None
        except ValueError as exc:
            raise PromptTemplateError(
                f"template {self._origin(name)} has a stray '$' ({exc}); write $$ for a dollar sign"
            ) from None

    def _read(self, name: str) -> str:
        if self.directory is not None:
            override = self.directory / name
            if override.is_file():
                try:
                    return read_text(override)
                except (OSError, ParseProblem) as exc:
                    raise PromptTemplateError(f"cannot read template {override}: {exc}") from None
        bundled = resources.files("phasegate.prompts").joinpath("templates", name)
        if not bundled.is_file():
            raise PromptTemplateError(
                f"no template named {name!r}; known: {', '.join(TEMPLATE_NAMES)}"
            )
        return bundled.read_text(encoding="utf-8")

    def _origin(self, name: str) -> str:
        if self.directory is not None and (self.directory / name).is_file():
            return str(self.directory / name)
        return f"{name} (bundled)"
