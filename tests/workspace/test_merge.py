"""Three-way merges of one file, decided without disk: what git merge-file would do."""

from __future__ import annotations

from phasegate.workspace.merge import FileMerge, is_binary, merge_file, merge_lines

BASE = b"one\ntwo\nthree\nfour\nfive\n"


def _merge(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> FileMerge | None:
    return merge_file("f.txt", base, ours, theirs, ours_label="main", theirs_label="docs")


def test_a_file_only_the_branch_changed_is_taken_as_the_branch_left_it() -> None:
    assert _merge(BASE, BASE, b"new\n") == FileMerge("f.txt", b"new\n")
    assert _merge(None, None, b"added\n") == FileMerge("f.txt", b"added\n")
    assert _merge(BASE, BASE, None) == FileMerge("f.txt", None)


def test_nothing_to_do_when_the_branch_left_the_file_or_both_did_the_same() -> None:
    assert _merge(BASE, b"changed\n", BASE) is None
    assert _merge(BASE, b"same\n", b"same\n") is None


def test_changes_to_different_lines_merge_cleanly() -> None:
    ours = BASE.replace(b"one", b"ONE")
    theirs = BASE.replace(b"five", b"FIVE")
    merged = _merge(BASE, ours, theirs)
    assert merged == FileMerge("f.txt", b"ONE\ntwo\nthree\nfour\nFIVE\n")


def test_changes_to_the_same_lines_conflict_with_markers_and_a_hunk() -> None:
    ours = BASE.replace(b"three", b"THREE (main)")
    theirs = BASE.replace(b"three", b"three (docs)")
    merged = _merge(BASE, ours, theirs)
    assert merged is not None and merged.conflict is not None
    assert merged.content == (
        b"one\ntwo\n<<<<<<< main\nTHREE (main)\n=======\nthree (docs)\n>>>>>>> docs\nfour\nfive\n"
    )
    (hunk,) = merged.conflict.hunks
    assert (hunk.line, hunk.ours, hunk.theirs, hunk.base) == (
        3, ("THREE (main)\n",), ("three (docs)\n",), ("three\n",)
    )  # fmt: skip
    assert "1 conflicting hunk" in merged.conflict.reason


def test_a_file_added_on_both_sides_differently_conflicts_whole() -> None:
    merged = _merge(None, b"a\n", b"b")
    assert merged is not None and merged.conflict is not None
    assert merged.content == b"<<<<<<< main\na\n=======\nb\n>>>>>>> docs\n"
    assert merged.conflict.reason.startswith("added on both sides")


def test_a_delete_against_a_change_keeps_the_changed_version_as_a_conflict() -> None:
    kept = _merge(BASE, b"changed\n", None)
    assert kept is not None and kept.content == b"changed\n" and kept.conflict is not None
    assert "deleted in docs" in kept.conflict.reason and not kept.conflict.hunks
    back = _merge(BASE, None, b"changed\n")
    assert back is not None and back.content == b"changed\n" and back.conflict is not None


def test_a_binary_file_changed_on_both_sides_keeps_the_targets_version() -> None:
    merged = _merge(b"\0base", b"\0ours", b"\0theirs")
    assert merged is not None and merged.content == b"\0ours" and merged.conflict is not None
    assert "binary" in merged.conflict.reason
    assert is_binary(b"\xff\xfe") and not is_binary("é".encode())


def test_insertions_at_the_same_place_conflict_but_identical_ones_do_not() -> None:
    base = ["a\n", "b\n"]
    same, hunks = merge_lines(base, ["a\n", "x\n", "b\n"], ["a\n", "x\n", "b\n"],
                              ours_label="o", theirs_label="t")  # fmt: skip
    assert (same, hunks) == (["a\n", "x\n", "b\n"], [])
    merged, hunks = merge_lines(base, ["a\n", "x\n", "b\n"], ["a\n", "y\n", "b\n"],
                                ours_label="o", theirs_label="t")  # fmt: skip
    assert merged == ["a\n", "<<<<<<< o\n", "x\n", "=======\n", "y\n", ">>>>>>> t\n", "b\n"]
    assert len(hunks) == 1
