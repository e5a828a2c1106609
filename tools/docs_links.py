"""MkDocs hook: links from a page to a file outside docs/ point at the repository.

The Markdown keeps relative links (``../examples/batch/``), which work where the files are
read on GitHub; in the built site those files are not pages, so each such link becomes a link
into ``repo_url`` (``tree/main/`` for a folder, ``blob/main/`` for a file). A link whose
target does not exist is left as it is, and MkDocs' --strict build reports it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

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
