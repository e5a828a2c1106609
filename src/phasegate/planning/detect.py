"""The built-in detector: languages and tools, from the files a project keeps at its root.

Only marker files are looked at (``pyproject.toml``, ``package.json``, ``go.mod``,
``Cargo.toml``, lock files, CI files, ...), plus the ``[tool.*]`` tables of
``pyproject.toml``; nothing is executed and nothing is guessed from file contents beyond
that. Languages and tools come in the order of the tables below, so the same project always
gives the same lists; the first language is the project's main one.
"""

from __future__ import annotations

from dataclasses import dataclass

from phasegate.planning.facts import WorkdirFacts

LANGUAGE_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Python", ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")),
    ("TypeScript", ("tsconfig.json",)),
    ("JavaScript", ("package.json",)),
    ("Go", ("go.mod",)),
    ("Rust", ("Cargo.toml",)),
    ("Java", ("pom.xml", "build.gradle", "build.gradle.kts")),
    ("Ruby", ("Gemfile",)),
    ("PHP", ("composer.json",)),
    ("Elixir", ("mix.exs",)),
    ("C#", ("global.json", "Directory.Build.props")),
    ("Swift", ("Package.swift",)),
)
"""Each language with the files that reveal it, in the order languages are reported."""

TOOL_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("uv", ("uv.lock",)),
    ("Poetry", ("poetry.lock",)),
    ("pip", ("requirements.txt",)),
    ("pytest", ("pytest.ini", "conftest.py", "tests/conftest.py")),
    ("tox", ("tox.ini",)),
    ("npm", ("package-lock.json",)),
    ("Yarn", ("yarn.lock",)),
    ("pnpm", ("pnpm-lock.yaml",)),
    ("ESLint", ("eslint.config.js", ".eslintrc.json", ".eslintrc.js", ".eslintrc.yml")),
    ("Prettier", (".prettierrc", ".prettierrc.json", "prettier.config.js")),
    ("Cargo", ("Cargo.toml",)),
    ("Go modules", ("go.mod",)),
    ("Maven", ("pom.xml",)),
    ("Gradle", ("build.gradle", "build.gradle.kts")),
    ("Bundler", ("Gemfile",)),
    ("Make", ("Makefile",)),
    ("Docker", ("Dockerfile", "compose.yaml", "docker-compose.yml")),
    ("pre-commit", (".pre-commit-config.yaml",)),
    ("GitHub Actions", (".github/workflows",)),
    ("GitLab CI", (".gitlab-ci.yml",)),
)
"""Each tool with the files that reveal it, in the order tools are reported."""

PYPROJECT_TOOLS = ("pytest", "ruff", "mypy", "black", "isort", "coverage", "hatch", "poetry")
"""Tools recognised from a ``[tool.<name>]`` table in ``pyproject.toml``."""
_PYPROJECT_NAMES = {
    "pytest": "pytest",
    "ruff": "Ruff",
    "mypy": "mypy",
    "black": "Black",
    "isort": "isort",
    "coverage": "coverage",
    "hatch": "Hatch",
    "poetry": "Poetry",
}


@dataclass(frozen=True, slots=True)
class Detected:
    """What the detector found, with the marker files that show each finding."""

    languages: tuple[str, ...]
    tools: tuple[str, ...]
    evidence: dict[str, str]
    """Each language or tool → the file that revealed it."""


def detect(facts: WorkdirFacts) -> Detected:
    """Languages and tools of the project in ``facts``' work directory."""
    evidence: dict[str, str] = {}
    languages = _found(facts, LANGUAGE_MARKERS, evidence)
    tools = _found(facts, TOOL_MARKERS, evidence)
    if "Python" in languages:
        for name in _pyproject_tools(facts):
            if name not in tools:
                tools.append(name)
                evidence[name] = "pyproject.toml"
    facts.record("detect", {"languages": languages, "tools": tools})
    return Detected(tuple(languages), tuple(tools), evidence)


def _found(
    facts: WorkdirFacts, table: tuple[tuple[str, tuple[str, ...]], ...], evidence: dict[str, str]
) -> list[str]:
    found: list[str] = []
    for name, markers in table:
        for marker in markers:
            if facts.exists(marker):
                found.append(name)
                evidence[name] = marker
                break
    return found


def _pyproject_tools(facts: WorkdirFacts) -> list[str]:
    data = facts.data("pyproject.toml") if facts.exists("pyproject.toml") else None
    tables = data.get("tool") if isinstance(data, dict) else None
    if not isinstance(tables, dict):
        return []
    return [_PYPROJECT_NAMES[name] for name in PYPROJECT_TOOLS if name in tables]
