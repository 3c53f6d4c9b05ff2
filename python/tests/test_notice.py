"""Unit tests of rota.stop_notice (stdlib only)."""

import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import rota  # noqa: E402


class StopNoticeTest(unittest.TestCase):
    def test_none_until_the_file_appears_then_its_text(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "preempt-notice")
            with mock.patch.dict(os.environ, {"ROTA_PREEMPT_NOTICE": path}):
                self.assertIsNone(rota.stop_notice())
                with open(path, "w") as f:
                    f.write("stopped early: loss 9 > median 1.5\n")
                self.assertEqual(rota.stop_notice(), "stopped early: loss 9 > median 1.5")
                open(path, "w").close()  # empty: still a request to stop
                self.assertEqual(rota.stop_notice(), "stop requested")

    def test_outside_rota_never_asked(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertIsNone(rota.stop_notice())


if __name__ == "__main__":
    unittest.main()
