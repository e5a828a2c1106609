"""``phasegate serve`` refuses bad input with exit code 2 and a message saying what to do."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.helpers.cli import phasegate
from tests.helpers.service import running_service


def test_a_root_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    result = phasegate("serve", "--root", tmp_path / "missing", "--port", "0")
    assert result.returncode == 2
    assert "--root" in result.stderr and "is not a directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_token_file_that_cannot_be_read_is_refused_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "token"
    result = phasegate("serve", "--root", tmp_path, "--port", "0", "--token-file", missing)
    assert result.returncode == 2
    assert f"cannot read the token file {missing}" in result.stderr
    assert not missing.exists()


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("short\n")
    result = phasegate("serve", "--root", tmp_path, "--port", "0", "--token-file", token)
    assert result.returncode == 2
    assert "shorter than 16 characters" in result.stderr


def test_a_missing_model_script_is_refused(tmp_path: Path) -> None:
    result = phasegate("serve", "--root", tmp_path, "--model-script", tmp_path / "nope.yaml")
    assert result.returncode == 2
    assert "--model-script" in result.stderr


def test_a_given_token_file_is_used_as_it_is(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a-token-of-my-own-0123456789\n")
    with running_service(tmp_path, token_file=token) as service:
        mine = httpx.get(service.url + "/v1/runs", headers=service.auth)
    assert service.token == "a-token-of-my-own-0123456789"
    assert mine.status_code == 200
    assert not (tmp_path / ".phasegate" / "server-token").exists()


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        port = service.url.rsplit(":", 1)[1]
        result = phasegate("serve", "--root", tmp_path, "--port", port)
    assert result.returncode == 2
    assert "could not start listening" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("flag", ["--max-concurrent", "--port"])
def test_out_of_range_numbers_are_usage_errors(tmp_path: Path, flag: str) -> None:
    result = phasegate("serve", "--root", tmp_path, flag, "-1")
    assert result.returncode == 2


def test_a_token_file_others_can_read_is_used_with_a_warning(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a-token-of-my-own-0123456789\n")
    token.chmod(0o644)
    with running_service(tmp_path, token_file=token) as service:
        pass
    assert any("other users can read the token file" in line for line in service.said)
