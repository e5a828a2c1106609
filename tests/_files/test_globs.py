"""Matching changed paths against globs (phasegate._files.globs): `changed` checks and the
inference rules of task inputs."""

from __future__ import annotations

import pytest

from phasegate._files.globs import glob_matches


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.md", "a.md", True),
        ("*.md", "docs/a.md", False),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/x/a.md", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "srcx/a.py", False),
        ("src/**/*.py", "src/a.pyc", False),
        ("**/*.md", "a.md", True),
        ("**/*.md", "docs/deep/a.md", True),
        ("**/*.md", "a.mdx", False),
        ("src/**", "src/a.py", True),
        ("src/**", "src/x/y/a.py", True),
        ("src/**", "lib/a.py", False),
        ("**", "anything/at/all.txt", True),
        ("a/**/b/*.txt", "a/b/c.txt", True),
        ("a/**/b/*.txt", "a/x/y/b/c.txt", True),
        ("a/**/b/*.txt", "a/xb/c.txt", False),
        ("?.py", "a.py", True),
        ("?.py", "ab.py", False),
        ("src?a.py", "src/a.py", False),
        ("src*", "src/a.py", False),
        ("test_[ab].py", "test_a.py", True),
        ("test_[ab].py", "test_c.py", False),
        ("test_[a-c].py", "test_b.py", True),
        ("test_[!a].py", "test_b.py", True),
        ("test_[!a].py", "test_a.py", False),
        ("x[!a]y", "x/y", False),
        ("[]]x", "]x", True),
        ("[^a]x", "^x", True),
        ("[^a]x", "bx", False),
        ("a[b", "a[b", True),
        ("a+b.(c)", "a+b.(c)", True),
        ("a.md", "aXmd", False),
        ("a**b.md", "axyzb.md", True),
        ("a**b.md", "a/b.md", False),
        ("*", ".hidden", True),
    ],
)
def test_glob_matching(glob: str, path: str, matches: bool) -> None:
    """``*``, ``?`` and ``[...]`` stay within a segment; ``**`` spans zero or more
    directories; regex characters are literal."""
    assert glob_matches(glob, path) is matches
