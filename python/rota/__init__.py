"""rota's Python package (stdlib only).

For jobs: rota.malleable follows a malleable task's CPU allotment
(docs/design-malleable.md); rota.report reports a trial's metrics (docs/design-jobs.md,
"Metrics"); rota.stop_notice tells whether rota asked the task to stop (a trial stopped
early, a preemption). For scripts and notebooks: rota.Client, the API (docs/python.md;
its methods are generated from the server's OpenAPI description into rota/api.py)."""

from rota.client import ApiError, Client  # noqa: F401
from rota.metrics import report  # noqa: F401
from rota.notice import stop_notice  # noqa: F401
