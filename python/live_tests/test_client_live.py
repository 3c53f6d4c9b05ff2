"""rota.Client against a real `rota dev` ($ROTA_BIN; ctest's python_client_test): the
checked-in generated methods are what the served OpenAPI description makes, and a script
does what a user's notebook would: sign in, run a sweep whose trials report metrics, wait
for it, read its trials best first, a trial's metrics and log, book a reservation, read
usage; errors arrive as ApiError with the server's status and message."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import rota  # noqa: E402

ROTA_BIN = os.environ.get("ROTA_BIN", str(ROOT / "build" / "bin" / "rota"))

# loss = 10 lr + 1/step: lr 0.1 is the best trial at every step. No braces in the
# script: {lr} is the sweep's placeholder.
TRAINER = "\n".join([
    "import sys, time",
    "lr = float(sys.argv[1])",
    "print('training with lr', lr, flush=True)",
    "for s in range(1, 4):",
    "    print('rota-metric loss=%f step=%d' % (10 * lr + 1.0 / s, s), flush=True)",
    "    time.sleep(0.1)",
])


class LiveClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(ROTA_BIN, os.X_OK):
            raise unittest.SkipTest(f"no rota binary at {ROTA_BIN} (set ROTA_BIN)")
        cls.dir = tempfile.mkdtemp(prefix="rota-py-client-")
        os.chmod(cls.dir, 0o755)
        cls.out = open(os.path.join(cls.dir, "dev.out"), "w+")
        cls.dev = subprocess.Popen([ROTA_BIN, "dev", "--listen", "127.0.0.1:0", "--data-dir",
                                    os.path.join(cls.dir, "dev"), "--log-level", "warning"],
                                   stdout=cls.out, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        text = ""
        while time.monotonic() < deadline and len(re.findall(r"ROTA_TOKEN=(\S+)", text)) < 2:
            if cls.dev.poll() is not None:
                raise RuntimeError(f"rota dev exited with {cls.dev.returncode}")
            time.sleep(0.1)
            cls.out.seek(0)
            text = cls.out.read()
        tokens = re.findall(r"ROTA_TOKEN=(\S+)", text)
        cls.url = re.search(r"ROTA_SERVER=(\S+)", text).group(1)
        cls.admin = rota.Client(cls.url, tokens[1])
        deadline = time.monotonic() + 60
        while len(cls.admin.get_nodes().get("nodes", [])) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        # A user whose tasks run as nobody when the test is root (jobs never run as root).
        unix_user = "nobody" if os.getuid() == 0 else os.environ.get("USER", "nobody")
        cls.admin.post_users({"username": "pyuser", "role": "user", "password": "py-client-password",
                              "unix_user": unix_user})
        cls.user = rota.Client.login(cls.url, "pyuser", "py-client-password")

    @classmethod
    def tearDownClass(cls):
        cls.dev.terminate()
        try:
            cls.dev.wait(timeout=60)
        except subprocess.TimeoutExpired:
            cls.dev.kill()
            cls.dev.wait()
        cls.out.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_generated_methods_match_the_served_description(self):
        r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_python_client.py"), "--url", self.url,
                            "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_sweep_from_a_script(self):
        self.assertEqual(self.user.get_auth_whoami()["username"], "pyuser")
        array = self.user.sweep({
            "name": "py-sweep", "command": ["python3", "-c", TRAINER, "{lr}"], "workdir": "/tmp",
            "groups": [{"role": "worker", "replicas": 1, "gpus_per_task": 1}],
            "sweep": {"method": "grid", "parameters": {"lr": [0.3, 0.1, 0.2]}},
        })
        self.assertEqual(array["size"], 3)
        done = self.user.wait_array(array["id"], timeout=120, poll=0.5)
        self.assertEqual(done["counts"], {"succeeded": 3})
        # The metrics reach the server with the task's output; the trials, best first.
        deadline = time.monotonic() + 30
        while True:
            trials = self.user.trials(array["id"])
            if all(t.get("metrics", {}).get("loss", {}).get("last_step") == 3 for t in trials):
                break
            self.assertLess(time.monotonic(), deadline, trials)
            time.sleep(0.3)
        self.assertEqual([t["params"]["lr"] for t in trials], ["0.1", "0.2", "0.3"])
        self.assertAlmostEqual(trials[0]["metrics"]["loss"]["min"], 1 + 1 / 3, places=5)
        self.assertEqual([t["params"]["lr"] for t in self.user.trials(array["id"], "loss", maximize=True)],
                         ["0.3", "0.2", "0.1"])
        best = trials[0]["id"]
        points = self.user.get_jobs_by_id_metrics(best)["metrics"]
        self.assertEqual([p["step"] for p in points if p["name"] == "loss"], [1, 2, 3])
        self.assertIn("training with lr 0.1", self.user.log_text(best))
        self.assertEqual(self.user.wait_job(best, timeout=5)["state"], "succeeded")

    def test_reservations_usage_and_errors(self):
        start = time.time() + 7 * 86400
        iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
        r = self.user.post_reservations({"node": "gpu-c", "gpus": [1], "start": iso(start),
                                         "end": iso(start + 3600), "title": "from python"})
        self.assertEqual(r["title"], "from python")
        mine = self.user.get_reservations(mine=True, from_=iso(start - 60), to=iso(start + 7200))
        self.assertIn(r["id"], [x["id"] for x in mine["reservations"]])
        usage = self.admin.get_usage(from_=iso(time.time() - 3600), to=iso(time.time() + 60))
        self.assertIn("rows", usage)
        with self.assertRaises(rota.ApiError) as e:
            self.user.get_jobs_by_id(987654321)
        self.assertEqual(e.exception.status, 404)
        self.assertIn("987654321", e.exception.message)
        with self.assertRaises(rota.ApiError) as e:
            self.user.post_users({"username": "x", "role": "user", "password": "long-enough-password"})
        self.assertEqual(e.exception.status, 403)
        with self.assertRaises(rota.ApiError) as e:
            rota.Client(self.url, "not-a-token").get_jobs()
        self.assertEqual(e.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
