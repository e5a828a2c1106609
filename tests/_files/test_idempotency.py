"""The idempotency store: the same key and request give the kept answer, another request is
refused, and what is on disk is always a whole answer or none."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate._files.digests import json_digest
from phasegate._files.idempotency import IdempotencyStore
from phasegate.errors import IdempotencyKeyError, IdempotencyKeyReusedError


def test_a_new_key_has_no_answer_and_a_kept_one_comes_back_for_the_same_request(
    tmp_path: Path,
) -> None:
    store = IdempotencyStore(tmp_path / "keys")
    digest = json_digest({"task": "t.yaml", "responses": {"ci": "GitHub Actions"}})
    assert store.find("k-1", digest) is None
    store.remember("k-1", digest, {"exit_code": 0, "result": {"success": True}})
    again = IdempotencyStore(tmp_path / "keys")  # another process, the same folder
    assert again.find("k-1", digest) == {"exit_code": 0, "result": {"success": True}}


def test_the_same_key_with_another_request_is_refused_with_what_to_do(tmp_path: Path) -> None:
    store = IdempotencyStore(tmp_path)
    store.remember("k", json_digest({"a": 1}), {"x": 1})
    with pytest.raises(IdempotencyKeyReusedError, match="use a new key") as raised:
        store.find("k", json_digest({"a": 2}))
    assert raised.value.exit_code == 2


def test_the_digest_ignores_key_order_and_sees_every_value() -> None:
    assert json_digest({"a": 1, "b": [1, 2]}) == json_digest({"b": [1, 2], "a": 1})
    assert json_digest({"a": 1, "b": [1, 2]}) != json_digest({"a": 1, "b": [2, 1]})


@pytest.mark.parametrize("key", ["", "x" * 256, "naïve", "line\nbreak"])
def test_a_key_that_cannot_be_one_is_refused_before_any_file_is_touched(
    tmp_path: Path, key: str
) -> None:
    store = IdempotencyStore(tmp_path / "keys")
    with pytest.raises(IdempotencyKeyError, match="printable ASCII"):
        store.remember(key, "d", {})
    assert not (tmp_path / "keys").exists()


def test_a_damaged_key_file_counts_as_a_key_never_seen(tmp_path: Path) -> None:
    store = IdempotencyStore(tmp_path)
    store.remember("k", "d", {"x": 1})
    (kept,) = tmp_path.glob("*.json")
    kept.write_text('{"request_digest": "d", "answ')
    assert store.find("k", "d") is None


def test_the_key_itself_never_names_a_file(tmp_path: Path) -> None:
    """A key is data: ``../../etc`` is hashed, not followed."""
    store = IdempotencyStore(tmp_path / "keys")
    store.remember("../../escape", "d", {"x": 1})
    (kept,) = (tmp_path / "keys").iterdir()
    assert kept.parent == tmp_path / "keys" and "escape" not in kept.name


def test_a_second_holder_of_a_key_waits_until_the_first_is_done(tmp_path: Path) -> None:
    """Two executions with one key never run at once: while another process holds the key,
    its lock cannot be taken; once that process is done, it can."""
    holder = (
        "import sys, pathlib\n"
        "from phasegate._files.idempotency import IdempotencyStore\n"
        f"store = IdempotencyStore(pathlib.Path({str(tmp_path)!r}))\n"
        "with store.holding('k'):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.readline()\n"
    )
    with subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as child:  # fmt: skip
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "held\n"
        (lock,) = tmp_path.glob("*.lock")
        with lock.open("a") as handle, pytest.raises(BlockingIOError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    assert not lock.exists()  # removed by its holder
    with IdempotencyStore(tmp_path).holding("k"):
        pass  # free again


def test_a_refused_request_leaves_no_lock_file(tmp_path: Path) -> None:
    store = IdempotencyStore(tmp_path)
    store.remember("k", "first", {"x": 1})
    with pytest.raises(IdempotencyKeyReusedError), store.holding("k"):
        store.find("k", "another")
    assert list(tmp_path.glob("*.lock")) == []


def test_a_key_kept_before_answers_were_nested_still_answers(tmp_path: Path) -> None:
    """The service's first version kept ``{"run_id", "request_digest"}``: after an upgrade
    the same key and request must find the same run, not start a second one."""
    store = IdempotencyStore(tmp_path)
    store.remember("k", "d", {"run_id": "abc"})
    (kept,) = tmp_path.glob("*.json")
    kept.write_text(json.dumps({"run_id": "abc", "request_digest": "d"}))
    assert store.find("k", "d") == {"run_id": "abc"}
    with pytest.raises(IdempotencyKeyReusedError):
        store.find("k", "other")
