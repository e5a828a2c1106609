"""The tests the fix must pass; the task protects them, so the agent cannot weaken them."""

import pytest
from app import calculate


def test_arithmetic_still_works() -> None:
    assert calculate("2 * (3 + 4)") == 14


def test_python_code_is_refused() -> None:
    with pytest.raises(ValueError, match="arithmetic"):
        calculate("__import__('os').getcwd()")
