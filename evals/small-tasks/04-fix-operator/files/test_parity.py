import unittest

from parity import evens, is_even


class ParityTest(unittest.TestCase):
    def test_is_even(self):
        self.assertTrue(is_even(4))
        self.assertFalse(is_even(7))

    def test_evens(self):
        self.assertEqual(evens([1, 2, 3, 4]), [2, 4])


if __name__ == "__main__":
    unittest.main()
