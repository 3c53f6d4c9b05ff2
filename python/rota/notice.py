"""Whether rota asked this task to stop (stdlib only). See docs/design-jobs.md
("Early stopping") and docs/design-sched.md (preemption).

When rota stops a task (a trial stopped early, a preempted job, a cancel) it
writes a notice file, named by ROTA_PREEMPT_NOTICE, then sends SIGTERM, and
SIGKILL after the server's job_stop_grace. A training loop can look between
steps and save a checkpoint before it goes:

    import rota
    for step in range(steps):
        train_one_step()
        if rota.stop_notice():
            save_checkpoint()
            break
"""

import os


def stop_notice():
    """The notice's text (why, and when SIGKILL follows) once rota asked this
    task to stop; None while it has not, or outside rota."""
    path = os.environ.get("ROTA_PREEMPT_NOTICE")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "stop requested"
    except FileNotFoundError:
        return None
