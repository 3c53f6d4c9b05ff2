"""Unit tests of rota.malleable (stdlib only; a fake hook stands for PyTorch)."""

import json
import os
import signal
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rota import malleable  # noqa: E402


def write(path, cpus, cpuset, generation, gpus=()):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"cpus": cpus, "cpuset": cpuset, "gpus": list(gpus), "generation": generation}, f)
    os.replace(tmp, path)


class FakeTorch:
    def __init__(self):
        self.threads = []

    def set_num_threads(self, n):
        self.threads.append(n)


class MalleableTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="rota-malleable-test-")
        self.path = os.path.join(self.dir.name, "resources.json")
        self.affinity = os.sched_getaffinity(0)
        self.follower = None

    def tearDown(self):
        if self.follower is not None:
            self.follower.stop()
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), self.affinity)
            except OSError:
                pass
        self.dir.cleanup()

    def test_parse_cpuset(self):
        self.assertEqual(malleable.parse_cpuset("0-2,5"), [0, 1, 2, 5])
        self.assertEqual(malleable.parse_cpuset(""), [])
        for bad in ("3-1", "a", "1,", "-1"):
            with self.assertRaises(ValueError):
                malleable.parse_cpuset(bad)

    def test_threads_for(self):
        R = malleable.Resources
        self.assertEqual(malleable.threads_for(R(0.5, [0], [], 1)), 1)
        self.assertEqual(malleable.threads_for(R(2.999, [0, 1, 2], [], 1)), 2)
        self.assertEqual(malleable.threads_for(R(3, [0, 1, 2], [], 1)), 3)
        self.assertEqual(malleable.threads_for(R(4, [0, 1], [], 1)), 2)  # at most its CPUs
        self.assertEqual(malleable.threads_for(R(4, [], [], 1)), 4)

    def test_start_applies_the_file_and_the_signal_applies_each_new_generation(self):
        write(self.path, 2, "", 0, gpus=[1])
        torch = FakeTorch()
        seen = []
        self.follower = malleable.follow(malleable.torch_hook(torch), lambda r, n: seen.append(r.generation),
                                         path=self.path, signal_name="USR1")
        self.assertEqual(torch.threads, [2])
        self.assertEqual(self.follower.current.gpus, [1])
        write(self.path, 1, "0", 5)
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(torch.threads, [2, 1])
        self.assertEqual(seen, [0, 5])
        self.assertEqual(os.sched_getaffinity(0), {0})
        # A signal without a newer generation changes nothing.
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(torch.threads, [2, 1])
        self.assertEqual(self.follower.changes, 2)

    def test_every_thread_gets_the_cpuset(self):
        write(self.path, 1, "", 0)
        stop = threading.Event()
        worker = threading.Thread(target=stop.wait)
        worker.start()
        try:
            self.follower = malleable.follow(path=self.path, signal_name="USR2")
            write(self.path, 1, "0", 1)
            os.kill(os.getpid(), signal.SIGUSR2)
            self.assertEqual(os.sched_getaffinity(worker.native_id), {0})
        finally:
            stop.set()
            worker.join()

    def test_no_signal_means_polling(self):
        write(self.path, 1, "", 0)
        torch = FakeTorch()
        self.follower = malleable.follow(malleable.torch_hook(torch), path=self.path, signal_name="NONE")
        write(self.path, 3, "", 1)
        self.assertTrue(self.follower.poll())
        self.assertFalse(self.follower.poll())
        self.assertEqual(torch.threads, [1, 3])

    def test_a_missing_or_bad_file_keeps_the_last_allotment(self):
        torch = FakeTorch()
        self.follower = malleable.follow(malleable.torch_hook(torch), path=self.path, signal_name="USR1")
        self.assertIsNone(self.follower.current)  # no file yet: nothing applied, no crash
        with open(self.path, "w") as f:
            f.write("{not json")
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(torch.threads, [])
        write(self.path, 1, "", 2)
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(torch.threads, [1])
        with open(self.path, "w") as f:
            json.dump({"cpuset": "0"}, f)  # no cpus
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(self.follower.threads(), 1)

    def test_unknown_signal_name_is_refused(self):
        with self.assertRaises(ValueError):
            malleable.Follower(path=self.path, signal_name="KILL")

    def test_tensorflow_hook_sets_threads_only_while_allowed(self):
        calls = []

        class Threading:
            initialised = False

            def set_intra_op_parallelism_threads(self, n):
                if Threading.initialised:
                    raise RuntimeError("Intra op parallelism cannot be modified after initialization.")
                calls.append(("intra", n))

            def set_inter_op_parallelism_threads(self, n):
                calls.append(("inter", n))

        class Config:
            threading = Threading()

        class TF:
            config = Config()

        hook = malleable.tensorflow_hook(TF)
        hook(malleable.Resources(4, [], [], 0), 4)
        Threading.initialised = True
        hook(malleable.Resources(1, [], [], 1), 1)  # no exception escapes
        self.assertEqual(calls, [("intra", 4), ("inter", 2)])


if __name__ == "__main__":
    unittest.main()
