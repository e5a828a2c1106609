"""Two small arithmetic functions, each with a bug for the loop to find."""


def add(a: int, b: int) -> int:
    """The sum of ``a`` and ``b``."""
    return a - b


def mul(a: int, b: int) -> int:
    """The product of ``a`` and ``b``."""
    return a + b
