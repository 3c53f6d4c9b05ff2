"""Report a trial's metrics to rota (stdlib only). See docs/design-jobs.md ("Metrics").

    import rota
    rota.report(step=100, loss=0.31, acc=0.9)

writes the line ``rota-metric acc=0.9 loss=0.31 step=100`` to the file named by
ROTA_METRICS_FILE (every rota task has one), or to stdout outside rota. rota keeps
the points per job: ``rota job metrics ID``, ``rota sweep show ID --metric loss``.
"""

import math
import os
import re
import sys

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,63}\Z")


def format_line(step=None, **metrics):
    """The rota-metric line (without its newline) for `metrics` at `step`.

    Raises ValueError for no metric, a name rota refuses (letters, digits and
    _ . : / - only, starting with a letter or _, at most 64 bytes, not "step"),
    a value that is not a finite number, or a step that is not a whole number >= 0.
    """
    if not metrics:
        raise ValueError("report at least one metric, e.g. report(loss=0.3)")
    parts = []
    for name in sorted(metrics):
        value = metrics[name]
        if not _NAME.match(name):
            raise ValueError("metric name %r: letters, digits and _ . : / - only, "
                             "starting with a letter or _, at most 64 bytes" % name)
        if isinstance(value, bool):
            raise ValueError("metric %s: %r is not a number" % (name, value))
        if not isinstance(value, (int, float)):
            try:
                value = float(value)  # numpy scalars, torch tensors with .item() semantics
            except (TypeError, ValueError):
                raise ValueError("metric %s: %r is not a number" % (name, value)) from None
        if not math.isfinite(value):
            raise ValueError("metric %s: %r is not finite" % (name, value))
        parts.append("%s=%s" % (name, repr(float(value)) if isinstance(value, float) else value))
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError("step %r: must be a whole number >= 0" % (step,))
        parts.append("step=%d" % step)
    return "rota-metric " + " ".join(parts)


def report(step=None, **metrics):
    """Reports `metrics` (name=value) at `step` to rota; see format_line for what is refused."""
    line = format_line(step, **metrics) + "\n"
    path = os.environ.get("ROTA_METRICS_FILE")
    if path:
        with open(path, "a", encoding="ascii") as f:
            f.write(line)
    else:
        sys.stdout.write(line)
        sys.stdout.flush()
