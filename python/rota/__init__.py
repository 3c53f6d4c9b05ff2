"""rota's Python helpers for jobs (stdlib only): rota.malleable follows a malleable
task's CPU allotment (docs/design-malleable.md); rota.report reports a trial's
metrics (docs/design-jobs.md, "Metrics"); rota.stop_notice tells whether rota asked
the task to stop (a trial stopped early, a preemption)."""

from rota.metrics import report  # noqa: F401
from rota.notice import stop_notice  # noqa: F401
