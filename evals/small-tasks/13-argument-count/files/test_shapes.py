import unittest

from shapes import area, total_area


class ShapesTest(unittest.TestCase):
    def test_area(self):
        self.assertEqual(area(2, 3), 6)

    def test_total_area(self):
        self.assertEqual(total_area([(2, 3), (4, 5)]), 26)


if __name__ == "__main__":
    unittest.main()
