"""Claude Code's own files, recognised by shape on any machine, and by the folders a run's
environment names; a path that only passes through one is not one."""

from __future__ import annotations

import pytest

from phasegate.evidence.claude_code_files import (
    OwnRoots,
    claude_code_file,
    environment_roots,
    may_touch,
    own_folders_inside,
    written_by_claude_code,
)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/home/dev/.claude/plans/quiet-fox.md", "plan"),
        ("C:\\Users\\dev\\.claude\\plans\\quiet-fox.md", "plan"),
        ("/tmp/claude/-home-dev-proj/tasks/b4f2.output", "task-output"),
        ("/private/tmp/claude-501/-Users-me-p/5e55a1a0/tasks/x.output", "task-output"),
        ("C:/Users/dev/AppData/Local/Temp/claude/p/tasks/a.output", "task-output"),
        ("/home/dev/.claude/settings.json", "config"),
        ("/home/dev/.claude/projects/-home-dev-p/5e55.jsonl", "config"),
        ("/home/dev/.claude.json", "config"),
        ("/home/dev/.claude/../.ssh/id_rsa", None),
        ("/home/dev/.claude/.credentials.json", None),
        ("C:\\Users\\dev\\.claude\\.credentials.json", None),
        ("/home/dev/.claude/plans/../../.bashrc", None),
        ("/tmp/claude/notes.txt", None),
        ("/etc/passwd", None),
    ],
)
def test_each_kind_is_told_by_its_shape(path: str, kind: str | None) -> None:
    assert claude_code_file(path) == kind


def test_only_a_plan_may_be_written_any_own_file_read() -> None:
    assert may_touch("/home/dev/.claude/plans/p.md", writes=True)
    assert not may_touch("/home/dev/.claude/settings.json", writes=True)
    assert may_touch("/home/dev/.claude/settings.json", writes=False)
    assert not may_touch("/home/dev/notes.md", writes=False)
    assert not may_touch("/home/dev/.claude/.credentials.json", writes=False)


def test_the_folders_the_environment_names_count_whatever_their_name() -> None:
    roots = environment_roots({"CLAUDE_CONFIG_DIR": "/srv/cc", "CLAUDE_CODE_TMPDIR": "/scratch"})

    assert claude_code_file("/srv/cc/plans/p.md", roots) == "plan"
    assert claude_code_file("/srv/cc/settings.json", roots) == "config"
    assert claude_code_file("/scratch/x/tasks/b.output", roots) == "task-output"
    assert claude_code_file("/scratch/x/notes.txt", roots) is None
    assert own_folders_inside("/srv", roots) == ["cc"]


def test_inside_a_work_directory_only_claude_codes_runtime_folders_are_its_own() -> None:
    """A project's own .claude settings, commands and agents are work; plans, session logs
    and a home's .claude.json are not."""
    assert written_by_claude_code(".claude/plans/p.md")
    assert written_by_claude_code(".claude/projects/-w/s.jsonl")
    assert written_by_claude_code(".claude.json")
    assert not written_by_claude_code(".claude/settings.json")
    assert not written_by_claude_code(".claude/commands/fix.md")
    assert not written_by_claude_code("docs/.claude.json")
    assert OwnRoots() == environment_roots({})
