import unittest

from greeting import greet


class GreetTest(unittest.TestCase):
    def test_default(self):
        self.assertEqual(greet("Ann"), "Hello, Ann!")

    def test_custom(self):
        self.assertEqual(greet("Ann", "Hi"), "Hi, Ann!")


if __name__ == "__main__":
    unittest.main()
