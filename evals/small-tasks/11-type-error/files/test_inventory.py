import unittest

from inventory import report, restock, total


class InventoryTest(unittest.TestCase):
    def test_restock(self):
        self.assertEqual(restock({"a": 1}, "a", 2), {"a": 3})

    def test_total(self):
        self.assertEqual(total({"a": 2, "b": 3}), 5)

    def test_report(self):
        self.assertEqual(report({"a": 2, "b": 3}), "total: 5")


if __name__ == "__main__":
    unittest.main()
