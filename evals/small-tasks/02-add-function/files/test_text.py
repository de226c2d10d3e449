import unittest

from text import reverse_words, shout


class TextTest(unittest.TestCase):
    def test_shout(self):
        self.assertEqual(shout("hi"), "HI!")

    def test_reverse_words(self):
        self.assertEqual(reverse_words("one two three"), "three two one")
        self.assertEqual(reverse_words("solo"), "solo")


if __name__ == "__main__":
    unittest.main()
