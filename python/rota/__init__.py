"""rota's Python helpers for jobs (stdlib only): rota.malleable follows a malleable
task's CPU allotment (docs/design-malleable.md); rota.report reports a trial's
metrics (docs/design-jobs.md, "Metrics")."""

from rota.metrics import report  # noqa: F401
