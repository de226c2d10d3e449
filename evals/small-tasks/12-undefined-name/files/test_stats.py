import unittest

from stats import mean, variance


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)

    def test_variance(self):
        self.assertEqual(variance([1, 2, 3, 4]), 1.25)


if __name__ == "__main__":
    unittest.main()
