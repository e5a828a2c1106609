"""Prompt templates: bundled, overridable, strict about placeholders (prompts.templates)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from phasegate.errors import PromptTemplateError, UsageError
from phasegate.phases.model import Task
from phasegate.prompts.phased import phased_prompt
from phasegate.prompts.templates import PROMPTS_DIR_ENV, TEMPLATE_NAMES, PromptTemplates

pytestmark = pytest.mark.usefixtures("bundled_prompts")


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_known_template_is_bundled(name: str) -> None:
    """Each template name phasegate uses has non-empty bundled text and no override."""
    templates = PromptTemplates()

    assert templates.directory is None
    assert templates.text(name).strip()


def test_every_bundled_template_is_a_known_name() -> None:
    """TEMPLATE_NAMES lists every bundled file, so the names an override may use are all known."""
    bundled = resources.files("phasegate.prompts").joinpath("templates").iterdir()

    assert sorted(file.name for file in bundled if file.name.endswith(".md")) == sorted(
        TEMPLATE_NAMES
    )


def test_render_fills_placeholders_and_keeps_double_dollars_literal(tmp_path: Path) -> None:
    """$name is filled from the values given; $$ is a literal dollar sign."""
    (tmp_path / "feedback.md").write_text("Left: $attempts_left, cost $$5\n", encoding="utf-8")

    text = PromptTemplates(tmp_path).render("feedback.md", attempts_left=2, feedback_json="{}")

    assert text == "Left: 2, cost $5\n"


def test_a_prompts_dir_overrides_only_the_files_it_contains(tmp_path: Path) -> None:
    """An override replaces its template; every other template keeps its bundled text."""
    (tmp_path / "phased.md").write_text("Custom $task_name\n", encoding="utf-8")
    bundled = PromptTemplates()

    templates = PromptTemplates(tmp_path)

    assert templates.text("phased.md") == "Custom $task_name\n"
    for name in TEMPLATE_NAMES:
        if name != "phased.md":
            assert templates.text(name) == bundled.text(name)


def test_the_prompts_dir_can_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fix_task: Task
) -> None:
    """PHASEGATE_PROMPTS_DIR is used when no directory is passed."""
    (tmp_path / "phased.md").write_text("From env: $task_name\n$phases\n", encoding="utf-8")
    monkeypatch.setenv(PROMPTS_DIR_ENV, str(tmp_path))

    templates = PromptTemplates()

    assert templates.directory == tmp_path
    assert phased_prompt(fix_task).startswith("From env: fix-vulnerability\n")


def test_an_explicit_prompts_dir_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory argument takes precedence over PHASEGATE_PROMPTS_DIR."""
    env_dir, arg_dir = tmp_path / "env", tmp_path / "arg"
    for directory in (env_dir, arg_dir):
        directory.mkdir()
        (directory / "phased.md").write_text(directory.name, encoding="utf-8")
    monkeypatch.setenv(PROMPTS_DIR_ENV, str(env_dir))

    assert PromptTemplates(arg_dir).text("phased.md") == "arg"


def test_an_empty_environment_variable_means_the_bundled_prompts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PHASEGATE_PROMPTS_DIR= (empty) is treated as unset."""
    monkeypatch.setenv(PROMPTS_DIR_ENV, "")

    assert PromptTemplates().directory is None


def test_an_unknown_placeholder_in_an_override_names_the_file(tmp_path: Path) -> None:
    """A $name phasegate does not provide is an error naming the file and the placeholder."""
    override = tmp_path / "work_phase.md"
    override.write_text("## $index: $title\n", encoding="utf-8")

    with pytest.raises(PromptTemplateError) as caught:
        PromptTemplates(tmp_path).render("work_phase.md", index=1, name_upper="EDIT")

    message = str(caught.value)
    assert str(override) in message
    assert "$title" in message
    assert "available: $index, $name_upper" in message


def test_an_unknown_placeholder_in_a_bundled_template_is_named_as_bundled() -> None:
    """Rendering a bundled template without its values says which template it was."""
    with pytest.raises(PromptTemplateError, match=r"feedback\.md \(bundled\) uses \$"):
        PromptTemplates().render("feedback.md")


def test_a_stray_dollar_sign_in_an_override_is_explained(tmp_path: Path) -> None:
    """A lone $ that is not a placeholder points at $$ as the fix."""
    (tmp_path / "feedback.md").write_text("costs $ 5\n", encoding="utf-8")

    with pytest.raises(PromptTemplateError, match=r"stray '\$'.*write \$\$ for a dollar sign"):
        PromptTemplates(tmp_path).render("feedback.md")


def test_a_prompts_dir_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    """A missing prompts directory is reported at once, naming it and the way out."""
    missing = tmp_path / "nope"

    with pytest.raises(PromptTemplateError) as caught:
        PromptTemplates(missing)

    assert str(missing) in str(caught.value)
    assert PROMPTS_DIR_ENV in str(caught.value)
    assert isinstance(caught.value, UsageError)


def test_a_prompts_dir_from_the_environment_that_does_not_exist_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment variable is checked just like the argument."""
    monkeypatch.setenv(PROMPTS_DIR_ENV, str(tmp_path / "nope"))

    with pytest.raises(PromptTemplateError, match="does not exist"):
        PromptTemplates()


def test_a_file_given_as_prompts_dir_is_an_error(tmp_path: Path) -> None:
    """The prompts dir must be a directory."""
    file = tmp_path / "phased.md"
    file.write_text("x", encoding="utf-8")

    with pytest.raises(PromptTemplateError, match="not a directory"):
        PromptTemplates(file)


def test_an_unknown_template_name_lists_the_known_ones() -> None:
    """Asking for a template that does not exist names the ones that do."""
    with pytest.raises(
        PromptTemplateError, match=r"no template named 'nope\.md'; known: phased\.md"
    ):
        PromptTemplates().text("nope.md")


def test_an_unreadable_override_is_a_template_error(tmp_path: Path) -> None:
    """An override that is not UTF-8 text is reported as a template problem, naming it."""
    (tmp_path / "phased.md").write_bytes(b"\xff\xfe\x00bad")

    with pytest.raises(PromptTemplateError, match="cannot read template"):
        PromptTemplates(tmp_path).text("phased.md")
