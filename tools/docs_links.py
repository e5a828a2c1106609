"""MkDocs hooks: links to files outside docs/ point at the repository; docstring roles
name public homes.


The Markdown keeps relative links (``../examples/batch/``), which work where the files are
read on GitHub; in the built site those files are not pages, so each such link becomes a link
into ``repo_url`` (``tree/main/`` for a folder, ``blob/main/`` for a file). A link whose
target does not exist is left as it is, and MkDocs' --strict build reports it.

Docstrings cross-reference in Sphinx's roles (``:class:`~phasegate.errors.UsageError```),
which the Python handler leaves as text; each becomes the name as Sphinx shows it, linked to
its reference entry when the name is public (``phasegate.UsageError``), so the site names no
module a user should not import from.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|attr|mod|exc|data|obj):<code>(~?)([\w.]+)</code>")
_PUBLIC_PACKAGES = ("phasegate", "phasegate.testing", "phasegate.client")
_LINK = re.compile(r"\]\((\.\./[^)\s#]*)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"])
    root = docs.parent
    here = posixpath.dirname(page.file.src_uri)
    repo = str(config["repo_url"]).rstrip("/")

    def point(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        path = posixpath.normpath(posixpath.join("docs", here, target))
        if path.startswith(("docs/", "../")) or not (root / path).exists():
            return match.group(0)
        kind = "tree" if (root / path).is_dir() else "blob"
        return f"]({repo}/{kind}/main/{path}{anchor})"

    return _LINK.sub(point, markdown)


def _public_homes() -> dict[str, str]:
    """``Name`` -> ``package.Name`` for every public name, read from the packages' stubs."""
    from phasegate._lazy import public_names

    homes: dict[str, str] = {}
    for package in _PUBLIC_PACKAGES:
        init = (
            Path(__file__).resolve().parents[1] / "src" / Path(*package.split(".")) / "__init__.py"
        )
        homes |= {name: f"{package}.{name}" for name in public_names(str(init))}
    return homes


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    homes = _public_homes()

    def name(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        last = target.rsplit(".", 1)[-1]
        if last in homes and target.startswith("phasegate."):
            home = homes[last]
            return f'<code><autoref identifier="{home}">{last if short else home}</autoref></code>'
        return f"<code>{last if short or target.startswith('phasegate.') else target}</code>"

    return _ROLE.sub(name, html)
