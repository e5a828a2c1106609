"""The author's tests: the proof the fix is right (the task protects this folder)."""

# The gate runs these with `python3 -m unittest`, which needs no pytest: unittest's own
# assertions, whose failures print both values for the model to read.
# ruff: noqa: PT009

import unittest

from calc import add, multiply


class CalcTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)
        self.assertEqual(add(-1, 1), 0)

    def test_multiply(self) -> None:
        self.assertEqual(multiply(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
