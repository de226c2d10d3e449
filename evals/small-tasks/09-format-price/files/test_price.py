import unittest

from price import format_price


class PriceTest(unittest.TestCase):
    def test_two_decimals(self):
        self.assertEqual(format_price(3.5), "$3.50")
        self.assertEqual(format_price(10), "$10.00")


if __name__ == "__main__":
    unittest.main()
