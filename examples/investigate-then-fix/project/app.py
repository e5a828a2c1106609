"""A tiny calculator service. It has a code-injection bug: find it and fix it."""


def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression a user typed, such as "2 * (3 + 4)"."""
    return eval(expression)  # runs any Python the user sends, not just arithmetic


if __name__ == "__main__":
    print(calculate(input("expression> ")))
