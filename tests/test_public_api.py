"""The public surface: what users import, and what the README promises."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import phasegate
import phasegate.testing

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_api_is_exactly_what_all_lists_and_sorted() -> None:
    """__all__ is sorted and every name in it exists; nothing private leaks; the lazy name
    map (what resolves on first use) lists exactly the names of __all__, in both packages."""
    assert phasegate.__all__ == sorted(phasegate.__all__)
    for name in [*phasegate.__all__]:
        assert hasattr(phasegate, name), name
    assert not [n for n in phasegate.__all__ if n.startswith("_")]
    assert phasegate.testing.__all__ == sorted(phasegate.testing.__all__)
    for package in (phasegate, phasegate.testing):
        assert sorted(package._WHERE) == package.__all__, package.__name__


PUBLIC_API = {
    # tasks and pipelines: loading and their models
    "Task", "Phase", "Pipeline", "Stage", "load_task", "load_pipeline", "Mode", "Isolation",
    # running them
    "Runner", "PipelineRunner", "ClaudeAgent", "RetryPolicy",
    "Agent", "AgentRequest", "AgentObserver",
    # what a run gives back
    "RunReport", "PhaseReport", "PipelineReport", "Issue", "IssueCode",
    # events and their sinks
    "RunEvent", "EventSink", "EventLog", "OtelSink",
    # judging a saved transcript
    "judge_transcript", "read_transcript",
    # planning a task with inputs
    "plan_task", "Plan", "plan_with_agent", "AgentPlan",
    # batches
    "Batch", "load_batch", "BatchRunner", "BatchSummary", "Executor", "LocalExecutor",
    "RayExecutor",
    "AgentFactory", "UnitAgent", "Unit", "UnitOutcome",
    # errors
    "BatchFileError", "ExecutorError", "PhasegateError", "UsageError", "TaskFileError",
    "ScriptFileError", "PipelineFileError", "PipelineStateError", "PromptTemplateError",
    "RunError", "AgentError", "InputsInvalidError", "StalePlanError", "PlanFileError",
    # warnings (the run goes on)
    "PhasegateWarning", "ClaudeCodeVersionWarning",
}  # fmt: skip


def test_all_holds_the_deliberate_public_api_and_no_internals() -> None:
    """Gates, prompt builders, marker parsing and transcript models stay in their
    subpackages; a name joins the public API only on purpose (here and in __all__)."""
    assert set(phasegate.__all__) == PUBLIC_API


def test_every_name_the_readme_and_examples_import_is_public() -> None:
    """What a reader copies from the README resolves through __all__."""
    texts = [(ROOT / "README.md").read_text()]
    texts += [path.read_text() for path in (ROOT / "examples").rglob("*.py")]
    imported = {
        (package, name.strip())
        for text in texts
        for package, names in re.findall(
            r"^from (phasegate(?:\.testing)?) import ([^\n(]+)$", text, re.M
        )
        for name in names.split(",")
    }
    assert ("phasegate", "Runner") in imported, "the pattern is stale"
    exported = {"phasegate": phasegate.__all__, "phasegate.testing": phasegate.testing.__all__}
    assert {(p, n) for p, n in imported if n not in exported[p]} == set()


def test_the_readme_and_examples_import_only_from_the_public_packages() -> None:
    """Users copy these imports: they must not reach into subpackages that may move."""
    sources = {
        "README.md": "".join(
            re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
        )
    }
    sources |= {str(path): path.read_text() for path in (ROOT / "examples").rglob("*.py")}
    imported = {
        (where, module)
        for where, text in sources.items()
        for module in re.findall(r"^\s*(?:from|import) (phasegate[\w.]*)", text, re.M)
    }
    assert imported, "no phasegate import found: the pattern is stale"
    assert {(w, m) for w, m in imported if m not in ("phasegate", "phasegate.testing")} == set()


def test_importing_phasegate_does_not_import_claude_agent_sdk() -> None:
    """The SDK (0.6 s of imports) stays lazy so check/judge/report start fast; so do
    OpenTelemetry, jsonschema, structlog, YAML and pydantic, which only some commands need."""
    heavy = {"claude_agent_sdk", "opentelemetry", "jsonschema", "structlog", "yaml"}
    heavy |= {"pydantic", "pydantic_core"}
    code = (
        "import sys, phasegate, phasegate._cli.app\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    """The README's example, with its placeholder path pointed at a copy of the project."""
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S)
    assert code is not None
    work = tmp_path / "project"
    shutil.copytree(ROOT / "examples/fix-vulnerability/project", work)
    source = code.group(1).replace(
        '"path/to/a/copy/of/examples/fix-vulnerability/project"', repr(str(work))
    )
    assert repr(str(work)) in source, "the README example's path placeholder changed"
    output = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(output):
        exec(compile(source, "README.md", "exec"), {})
    assert "accepted 2" in output.getvalue().splitlines()
    assert "{'files_changed': ['app.py']" in output.getvalue()
