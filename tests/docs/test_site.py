"""The documentation site: every public name has an entry in the API reference (and in the
built HTML), every page is in the nav, and the README stays a landing page."""

from __future__ import annotations

import html as htmllib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import phasegate
import phasegate.client
import phasegate.testing

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
PUBLIC_PACKAGES = (phasegate, phasegate.testing, phasegate.client)
ENTRY = re.compile(r"^::: (\S+)$", re.M)


def public_paths() -> set[str]:
    """``phasegate.Runner``, ``phasegate.testing.ScriptedAgent``, ...: each public name under
    the package users import it from."""
    return {f"{package.__name__}.{name}" for package in PUBLIC_PACKAGES for name in package.__all__}


def reference_entries() -> list[str]:
    """The ``::: identifier`` entries of the reference pages, in page order."""
    return [
        entry
        for page in sorted(REFERENCE.glob("*.md"))
        for entry in ENTRY.findall(page.read_text(encoding="utf-8"))
    ]


def nav_pages(nav: object) -> list[str]:
    """The page files mkdocs.yml's nav names, depth first."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def test_every_public_name_has_one_entry_in_the_reference_under_its_public_path() -> None:
    """Each name of the three ``__all__``s is documented once, as ``phasegate.Name`` (never
    by the module it lives in, which may move)."""
    entries = reference_entries()
    assert len(entries) == len(set(entries)), "a name is documented twice"
    assert set(entries) == public_paths()


def test_the_nav_lists_every_page_and_only_pages_that_exist() -> None:
    """A page left out of the nav is unreachable from the site; a nav entry without its file
    breaks the build."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    listed = nav_pages(config["nav"])
    pages = {str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md")}
    assert len(listed) == len(set(listed))
    assert set(listed) == pages
    assert "recordings.md" in listed


def test_the_readme_is_a_landing_page_of_at_most_300_lines() -> None:
    """What phasegate is, the two commands, one example each, links into the site."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    assert [line.split("#")[0].strip() for line in blocks[0].splitlines()] == [
        "make demo",
        "make test",
    ]
    assert "(docs/reference/index.md)" in readme


def test_the_readmes_links_into_the_docs_are_relative_and_lead_to_pages() -> None:
    """They are read on GitHub: each ``docs/...`` link names a file or folder that exists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = re.sub(r"<!--.*?-->", "", readme, flags=re.S)  # the screenshot's slot, for now
    links = re.findall(r"\]\(((?:docs|examples)/[^)#\s]*)", readme)
    assert links, "the pattern is stale"
    assert [link for link in links if not (ROOT / link).exists()] == []


@pytest.mark.skipif(shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
                    reason="mkdocs is not installed (the docs extra)")  # fmt: skip
def test_the_site_builds_strictly_with_an_entry_for_every_public_name(tmp_path: Path) -> None:
    """``mkdocs build --strict`` (as ``make docs``) passes, and each public name has its
    anchor in the built reference: mkdocstrings resolved it through the package's stub."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    html = "".join(
        page.read_text(encoding="utf-8")
        for page in (tmp_path / "site" / "reference").rglob("*.html")
    )
    anchors = set(re.findall(r'id="(phasegate\.[\w.]+)"', html))
    assert public_paths() - anchors == set()
    # The docstrings' Sphinx roles name public homes once rendered (tools/docs_links.py): the
    # reference's text names no internal module, as the guides do not.
    internal = {
        path.stem
        for path in (ROOT / "src" / "phasegate").iterdir()
        if path.name not in {"testing", "client", "__pycache__"} and path.suffix in {"", ".py"}
    }
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", html))
    named = set(re.findall(rf"\bphasegate\.(?:{'|'.join(internal)})\b[\w.]*", text))
    named |= set(re.findall(r"\bphasegate\.(?:testing|client)\.\w+", text)) - public_paths()
    assert named == set()
    assert ":class:" not in text
