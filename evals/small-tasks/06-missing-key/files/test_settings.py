import unittest

from settings import setting


class SettingsTest(unittest.TestCase):
    def test_present(self):
        self.assertEqual(setting("color"), "blue")

    def test_missing(self):
        self.assertIsNone(setting("shape"))


if __name__ == "__main__":
    unittest.main()
