"""Unit tests of rota.report (stdlib only)."""

import io
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import rota  # noqa: E402
from rota import metrics  # noqa: E402


class ReportTest(unittest.TestCase):
    def test_the_line_rota_reads(self):
        self.assertEqual(metrics.format_line(step=3, loss=0.25, acc=1), "rota-metric acc=1 loss=0.25 step=3")
        self.assertEqual(metrics.format_line(**{"eval/acc": 0.5}), "rota-metric eval/acc=0.5")
        # Floats keep every digit (repr), large and small ones in exponent form.
        self.assertEqual(metrics.format_line(lr=1e-05), "rota-metric lr=1e-05")

    def test_what_rota_would_refuse_is_refused_here(self):
        for bad in [{}, {"9lives": 1}, {"a b": 1}, {"x" * 65: 1}, {"loss": float("nan")},
                    {"loss": float("inf")}, {"loss": "high"}, {"loss": True}]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                metrics.format_line(**bad)
        for step in [-1, 1.5, "3", True]:
            with self.assertRaises(ValueError, msg=repr(step)):
                metrics.format_line(step=step, loss=1)

    def test_written_to_the_metrics_file_or_stdout(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "metrics")
            with mock.patch.dict(os.environ, {"ROTA_METRICS_FILE": path}):
                rota.report(step=1, loss=2.0)
                rota.report(step=2, loss=1.5)
            with open(path) as f:
                self.assertEqual(f.read(), "rota-metric loss=2.0 step=1\nrota-metric loss=1.5 step=2\n")
        out = io.StringIO()
        with mock.patch.dict(os.environ, {}, clear=True), mock.patch.object(sys, "stdout", out):
            rota.report(acc=0.9)
        self.assertEqual(out.getvalue(), "rota-metric acc=0.9\n")


if __name__ == "__main__":
    unittest.main()
