"""python3 -m unittest test_calc"""

import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        assert add(2, 3) == 5

    def test_mul(self):
        assert mul(2, 3) == 6


if __name__ == "__main__":
    unittest.main()
