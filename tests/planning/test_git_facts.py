"""Git facts are read only from metadata inside the work directory, and a remote URL's
credentials never reach a plan, a prompt or a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.phases.filled import task_with_values
from phasegate.phases.loading import task_from_mapping
from phasegate.planning.facts import WorkdirFacts
from phasegate.planning.reference import plan_task
from phasegate.planning.values import resolve_inputs
from phasegate.prompts.phased import phased_prompt

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def git_repository(folder: Path, url: str, *, branch: str = "main") -> Path:
    """A folder with a minimal ``.git``: HEAD on ``branch`` and remote origin at ``url``."""
    git = folder / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (git / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {url}\n')
    return git


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """Another repository, outside the work directory, whose config holds a token."""
    return git_repository(tmp_path / "elsewhere", f"https://x-access-token:{TOKEN}@github.com/o/r")


def test_a_git_folder_inside_the_work_directory_gives_its_branch_and_remote(work: Path) -> None:
    """The ordinary case still works."""
    git_repository(work, "https://github.com/o/r.git", branch="dev")
    facts = WorkdirFacts(work)
    assert facts.git("branch") == "dev"
    assert facts.git("remote_url") == "https://github.com/o/r.git"


def test_a_git_file_pointing_outside_leaves_the_git_facts_unknown(
    work: Path, elsewhere: Path
) -> None:
    """`gitdir: /elsewhere/.git` is not followed: the other repository's config is not read."""
    (work / ".git").write_text(f"gitdir: {elsewhere}\n")
    facts = WorkdirFacts(work)
    assert facts.git("remote_url") is None
    assert facts.git("branch") is None


def test_a_relative_git_file_climbing_out_leaves_the_git_facts_unknown(
    work: Path, elsewhere: Path
) -> None:
    """`gitdir: ../elsewhere/.git` is outside too."""
    (work / ".git").write_text("gitdir: ../elsewhere/.git\n")
    assert WorkdirFacts(work).git("remote_url") is None


def test_a_git_symlink_leading_outside_leaves_the_git_facts_unknown(
    work: Path, elsewhere: Path
) -> None:
    """A `.git` that is a symbolic link is never followed, wherever it leads."""
    (work / ".git").symlink_to(elsewhere, target_is_directory=True)
    assert WorkdirFacts(work).git("remote_url") is None


def test_a_commondir_leading_outside_leaves_the_remote_unknown(work: Path, elsewhere: Path) -> None:
    """A worktree-style `commondir` naming another repository's folder is not followed."""
    git = git_repository(work, "https://github.com/o/mine.git")
    (git / "commondir").write_text(f"{elsewhere}\n")
    assert WorkdirFacts(work).git("remote_url") is None


def test_a_config_symlinked_out_of_the_git_folder_is_not_read(work: Path, elsewhere: Path) -> None:
    """A link inside `.git` is resolved before reading, and refused when it leads out."""
    git = git_repository(work, "https://github.com/o/mine.git")
    (git / "config").unlink()
    (git / "config").symlink_to(elsewhere / "config")
    assert WorkdirFacts(work).git("remote_url") is None


def test_a_git_file_pointing_inside_the_work_directory_is_followed(work: Path) -> None:
    """A `gitdir:` that stays inside the work directory is fine."""
    git_repository(work / "meta", "https://github.com/o/r.git")
    (work / ".git").write_text("gitdir: meta/.git\n")
    assert WorkdirFacts(work).git("remote_url") == "https://github.com/o/r.git"


CREDENTIAL_URLS = [
    f"https://x-access-token:{TOKEN}@github.com/o/r.git",
    f"https://{TOKEN}@github.com/o/r.git",
    f"https://{TOKEN}:x-oauth-basic@github.com/o/r.git",
    "https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.com/o/r.git",
    "https://user:p%40ss-w0rd@example.com/r.git",
    "http://deploy:secretvalue@10.0.0.1:8080/r.git",
    "ssh://git:hunter2hunter2@host/r.git",
]


def plan_with_remote(workdir: Path) -> tuple[str, str]:
    """What a plan and a run's values show of a `git: remote_url` input, and the prompt."""
    task = task_from_mapping(
        {
            "name": "t",
            "phases": [{"name": "a", "instructions": "Push to {{ remote }}."}],
            "inputs": [
                {
                    "id": "remote",
                    "question": "Where?",
                    "header": "Remote",
                    "infer": [{"git": {"fact": "remote_url"}}],
                }
            ],
        }
    )
    plan = plan_task(task, workdir, environ={})
    values = resolve_inputs(task, workdir, plan, {}, environ={})
    prompt = phased_prompt(task_with_values(task, values.as_text()))
    return plan.model_dump_json() + repr(values.values), prompt


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_credentials_in_an_inferred_remote_url_never_reach_the_plan_or_the_prompt(
    work: Path, url: str
) -> None:
    """The value is redacted where it is read, so every output built from it is too."""
    git_repository(work, url)
    shown, prompt = plan_with_remote(work)
    secret = url.split("://", 1)[1].split("@", 1)[0]
    for text in (shown, prompt):
        assert secret not in text
        assert "[redacted]@" in text
