import unittest

from version import VERSION


class VersionTest(unittest.TestCase):
    def test_version(self):
        self.assertEqual(VERSION, "1.1")
        with open("CHANGES.txt") as f:
            self.assertIn("Version 1.1", f.read())


if __name__ == "__main__":
    unittest.main()
