"""rota.Client: the API from Python (stdlib only; docs/python.md).

    import rota
    c = rota.Client("https://rota.example.org:8443", token)   # or ROTA_SERVER / ROTA_TOKEN
    job = c.get_jobs_by_id(42)
    array = c.sweep({"name": "lr", "command": ["python3", "train.py", "--lr", "{lr}"],
                     "groups": [{"role": "worker", "gpus_per_task": 1}],
                     "sweep": {"parameters": {"lr": [0.1, 0.01]}}})
    done = c.wait_array(array["id"])
    for t in c.trials(array["id"]): print(t["params"], t.get("metrics"))

Every operation of the API is a method of rota.api.Api (generated from the server's
OpenAPI description by scripts/gen_python_client.py, named after its operationId in snake
case: get_jobs_by_id, post_reservations, get_usage, ...). This file adds the transport
(HTTPS with the system's or a given CA, a bearer token), errors as ApiError, and a few
conveniences: login, submit, sweep, wait_job, wait_array, trials, log_text.
"""
from __future__ import annotations

import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from rota.api import Api, ArrayMember, Job, JobArray, JobArrayMembers, JobSpec

FINAL_STATES = ("succeeded", "failed", "cancelled")


class ApiError(Exception):
    """An answer that is not a success: the HTTP status and the server's error code and message."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class Client(Api):
    """The API at `server` as the holder of `token` (a session or an API token).

    server: the base address (https://host:port); default $ROTA_SERVER.
    token: default $ROTA_TOKEN; None for the few operations that need no sign-in.
    ca_file: the CA that signed the server's certificate (default: the system's, or
    $ROTA_CA_FILE). timeout: seconds per request.
    """

    def __init__(self, server: str | None = None, token: str | None = None, *,
                 ca_file: str | None = None, timeout: float = 30.0):
        server = server or os.environ.get("ROTA_SERVER", "")
        if not server:
            raise ValueError("no server: pass one or set ROTA_SERVER (e.g. https://rota.example.org:8443)")
        parsed = urllib.parse.urlsplit(server)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"server {server!r}: give http(s)://host:port")
        self.server = server.rstrip("/")
        self.token = token if token is not None else os.environ.get("ROTA_TOKEN") or None
        self.timeout = timeout
        ca_file = ca_file or os.environ.get("ROTA_CA_FILE") or None
        self._ssl = ssl.create_default_context(cafile=ca_file) if parsed.scheme == "https" else None

    @classmethod
    def login(cls, server: str, username: str, password: str, **kwargs: Any) -> "Client":
        """A client signed in with a password (a session token)."""
        c = cls(server, token="", **kwargs)
        c.token = c.post_auth_login({"username": username, "password": password})["token"]
        return c

    # ---- transport (rota.api.Api calls this for every operation)

    def _call(self, method: str, path: str, query: dict[str, Any] | None, body: Any) -> Any:
        url = self.server + path
        q = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as r:
                raw = r.read()
                ctype = r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            raise _error(e) from None
        if not raw:
            return None
        if ctype.startswith("application/json"):
            return json.loads(raw)
        return raw.decode("utf-8", errors="replace")

    # ---- conveniences

    def submit(self, spec: JobSpec) -> Job:
        """Submits one job (not an array or sweep: see sweep)."""
        if "array" in spec or "sweep" in spec:
            raise ValueError("an array or a sweep: use sweep() (or post_jobs)")
        return self.post_jobs(spec)  # type: ignore[return-value]

    def sweep(self, spec: JobSpec) -> JobArray:
        """Submits an array or a sweep (the spec's `array` or `sweep`); returns the array."""
        if "array" not in spec and "sweep" not in spec:
            raise ValueError("the spec has neither `array` nor `sweep`")
        return self.post_jobs(spec)["array"]  # type: ignore[index,return-value]

    def wait_job(self, job_id: int, timeout: float | None = None, poll: float = 1.0) -> Job:
        """The job once it ended (succeeded, failed or cancelled); TimeoutError after `timeout` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.get_jobs_by_id(job_id)
            if job["state"] in FINAL_STATES:
                return job
            _sleep_until(deadline, poll, f"job {job_id} is {job['state']}")

    def wait_array(self, array_id: int, timeout: float | None = None, poll: float = 2.0) -> JobArrayMembers:
        """The array once every member ended; TimeoutError after `timeout` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            a = self.get_arrays_by_id(array_id, limit=1)
            left = sum(n for s, n in a["counts"].items() if s not in FINAL_STATES)
            if left == 0:
                return a
            _sleep_until(deadline, poll, f"array {array_id} has {left} members not ended")

    def trials(self, array_id: int, metric: str | None = None, maximize: bool | None = None) -> list[ArrayMember]:
        """Every member of an array, best first by `metric` as `rota sweep show` sorts them
        (default: the early-stopping rule's metric and goal, else the first metric name any
        member reported, lowest first); members without the metric last, by index."""
        members: list[ArrayMember] = []
        first = None
        while True:
            page = self.get_arrays_by_id(array_id, limit=1000, offset=len(members))
            first = first or page
            got = page.get("members", [])
            members += got
            if not page.get("truncated") or not got:
                break
        rule = (first.get("sweep") or {}).get("early_stopping") or {}
        if metric is None:
            metric = rule.get("metric")
            if maximize is None and metric:
                maximize = rule.get("goal") == "max"
        if metric is None:
            names = sorted({n for m in members for n in m.get("metrics", {})})
            metric = names[0] if names else None
        maximize = bool(maximize)

        def key(m: ArrayMember):
            s = m.get("metrics", {}).get(metric) if metric else None
            index = m.get("array", {}).get("index", 0)
            if s is None:
                return (1, 0.0, index)
            return (0, -s["max"] if maximize else s["min"], index)

        return sorted(members, key=key)

    def log_text(self, job_id: int, task: str | None = None, stream: str = "stdout") -> str:
        """A task's whole log (stdout or stderr) so far, read a chunk at a time."""
        out, offset = [], 0
        while True:
            chunk = self.get_jobs_by_id_logs(job_id, task=task, stream=stream, offset=offset, max_bytes=1 << 20)
            out.append(chunk["data"])
            if chunk["next_offset"] >= chunk["size"] or chunk["next_offset"] == offset:
                return "".join(out)
            offset = chunk["next_offset"]


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _error(e: urllib.error.HTTPError) -> ApiError:
    raw = e.read()
    code, message = "", raw.decode("utf-8", errors="replace").strip() or e.reason
    try:
        err = json.loads(raw)["error"]
        if isinstance(err, dict):
            code, message = err.get("code", ""), err.get("message", message)
    except (ValueError, KeyError, TypeError):
        pass
    retry = e.headers.get("Retry-After") if e.headers else None
    try:
        retry_after = float(retry) if retry is not None else None
    except ValueError:
        retry_after = None
    return ApiError(e.code, str(code), str(message), retry_after)


def _sleep_until(deadline: float | None, poll: float, what: str) -> None:
    if deadline is not None and time.monotonic() + poll > deadline:
        raise TimeoutError(what)
    time.sleep(poll)
