"""Follow a malleable rota task's CPU allotment and apply it while the job runs.

rota gives a malleable task (``malleable: {min_cpus, max_cpus}`` in the job
spec, or ``rota run --malleable MIN:MAX``) the path of a JSON file in
``ROTA_RESOURCES_FILE``::

    {"cpus": 1.5, "cpuset": "0-1", "gpus": [], "generation": 3}

rota rewrites it atomically whenever the node's cores are divided again (a
malleable task started or ended there) and then sends the task's process group
the signal named by ``ROTA_RESIZE_SIGNAL`` (USR1 unless the job set another;
NONE: no signal, call ``Follower.poll()``).

Usage (PyTorch)::

    import torch
    from rota import malleable
    follower = malleable.follow(malleable.torch_hook(torch))
    for step in range(steps):
        ...                      # the handler already applied any change

What is applied on every change:
  * the CPU affinity of every thread of the process (``os.sched_setaffinity``
    per thread id in /proc/self/task) to the allotment's cpuset;
  * each hook with (resources, threads), threads = the allotment's whole cores
    (at least 1, at most the cpuset's CPUs). ``torch_hook`` calls
    ``torch.set_num_threads(threads)``, which PyTorch allows at any time.

TensorFlow fixes its intra-op and inter-op thread pools when its runtime
initialises (the first op or ``tf.config`` device query):
``tf.config.threading.set_intra_op_parallelism_threads`` and
``set_inter_op_parallelism_threads`` raise ``RuntimeError`` after that.
``tensorflow_hook`` therefore sets them only while that is still allowed (the
allotment at start) and afterwards changes only what can change: the CPU
affinity (the pools' threads share the allotted CPUs instead of the node's) and
``tf.data`` options for pipelines built after the change
(``Follower.tf_data_options(tf)``: ``threading.private_threadpool_size``).

The signal handler runs in the main thread between Python bytecodes (Python's
own signal machinery), so hooks never run in the middle of a PyTorch op.
Stdlib only; Python 3.8+.
"""

import json
import os
import signal
import threading

__all__ = ["Resources", "Follower", "follow", "read", "threads_for", "parse_cpuset", "torch_hook",
           "tensorflow_hook"]

_SIGNALS = {"USR1": signal.SIGUSR1, "USR2": signal.SIGUSR2, "HUP": signal.SIGHUP,
            "WINCH": signal.SIGWINCH, "URG": signal.SIGURG, "NONE": None}


class Resources:
    """One allotment: cpus (cores, may be fractional), cpuset (CPU ids), gpus, generation."""

    __slots__ = ("cpus", "cpuset", "gpus", "generation")

    def __init__(self, cpus, cpuset, gpus, generation):
        self.cpus = float(cpus)
        self.cpuset = list(cpuset)
        self.gpus = list(gpus)
        self.generation = int(generation)

    def __repr__(self):
        return "Resources(cpus=%g, cpuset=%r, gpus=%r, generation=%d)" % (
            self.cpus, self.cpuset, self.gpus, self.generation)


def parse_cpuset(text):
    """'0-2,5' -> [0, 1, 2, 5]; '' -> []. ValueError for anything else."""
    out = []
    if not text:
        return out
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        first, last = int(lo), int(hi) if sep else int(lo)
        if first < 0 or last < first:
            raise ValueError("bad CPU list %r" % text)
        out.extend(range(first, last + 1))
    return out


def read(path=None):
    """The allotment in `path` (default ROTA_RESOURCES_FILE); None when there is
    none or it cannot be read (rota replaces it atomically: never half written)."""
    path = path or os.environ.get("ROTA_RESOURCES_FILE")
    if not path:
        return None
    try:
        with open(path, "r", encoding="utf-8") as f:
            j = json.load(f)
        return Resources(j["cpus"], parse_cpuset(j.get("cpuset", "")), j.get("gpus", []), j.get("generation", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def threads_for(res):
    """Threads for an allotment: its whole cores, at least 1, at most its CPUs."""
    n = max(1, int(res.cpus + 1e-9))
    if res.cpuset:
        n = min(n, len(res.cpuset))
    return n


def _set_affinity(cpus):
    """Every thread of this process onto `cpus` (sched_setaffinity is per thread)."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        return
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            pass  # a thread that ended meanwhile, or CPUs outside this task's cgroup


def torch_hook(torch):
    """A hook that applies the thread count to PyTorch (torch.set_num_threads)."""
    def apply(res, threads):
        torch.set_num_threads(threads)
    return apply


def tensorflow_hook(tf):
    """A hook for TensorFlow: intra/inter-op threads while TensorFlow still
    allows it (before its runtime initialises), else nothing (see the module
    documentation: affinity and tf.data options are what can still change)."""
    def apply(res, threads):
        try:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(max(1, min(2, threads)))
        except RuntimeError:
            pass  # initialised: the pools keep their size; the affinity moved them
    return apply


class Follower:
    """Reads the resources file, applies it, and again on each resize signal.

    hooks: callables (resources, threads) run on each new generation.
    path, signal_name: default ROTA_RESOURCES_FILE and ROTA_RESIZE_SIGNAL.
    affinity: set every thread's CPU affinity to the cpuset (default True).
    """

    def __init__(self, hooks=(), path=None, signal_name=None, affinity=True):
        self.path = path or os.environ.get("ROTA_RESOURCES_FILE")
        name = signal_name or os.environ.get("ROTA_RESIZE_SIGNAL", "USR1")
        if name not in _SIGNALS:
            raise ValueError("ROTA_RESIZE_SIGNAL %r is not one of %s" % (name, ", ".join(_SIGNALS)))
        self.signum = _SIGNALS[name]
        self.hooks = list(hooks)
        self.affinity = affinity
        self.current = None  # the Resources last applied
        self.changes = 0     # how many generations were applied
        self._lock = threading.Lock()
        self._previous = None

    def start(self):
        """Applies the current allotment and installs the signal handler (main thread only)."""
        if self.signum is not None:
            self._previous = signal.signal(self.signum, self._on_signal)
        self.poll()
        return self

    def stop(self):
        """Puts the previous signal handler back."""
        if self.signum is not None and self._previous is not None:
            signal.signal(self.signum, self._previous)
            self._previous = None

    def _on_signal(self, signum, frame):
        self.poll()

    def poll(self):
        """Applies the file if it holds a newer generation; returns True when it did."""
        if not self.path:
            return False
        res = read(self.path)
        if res is None:
            return False
        with self._lock:
            if self.current is not None and res.generation <= self.current.generation:
                return False
            self.current = res
            self.changes += 1
        if self.affinity:
            _set_affinity(res.cpuset)
        threads = threads_for(res)
        for hook in self.hooks:
            hook(res, threads)
        return True

    def threads(self):
        """The thread count of the allotment last applied (None before any)."""
        return None if self.current is None else threads_for(self.current)

    def tf_data_options(self, tf):
        """tf.data.Options sized to the allotment, for pipelines built after a change
        (dataset.with_options(...)); TensorFlow cannot resize a running pipeline's pool."""
        options = tf.data.Options()
        if self.current is not None:
            options.threading.private_threadpool_size = threads_for(self.current)
        return options


def follow(*hooks, path=None, signal_name=None, affinity=True):
    """Follower(hooks).start(): applies the allotment now and on every resize."""
    return Follower(hooks, path=path, signal_name=signal_name, affinity=affinity).start()
