import unittest

import geometry
from report import report


class ReportTest(unittest.TestCase):
    def test_renamed(self):
        self.assertTrue(hasattr(geometry, "area_of"))
        self.assertFalse(hasattr(geometry, "calc_area"))

    def test_report(self):
        self.assertEqual(report(), "rect=6 square=16")


if __name__ == "__main__":
    unittest.main()
