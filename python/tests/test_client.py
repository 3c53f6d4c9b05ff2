"""rota.Client's transport against a real HTTP server on loopback (the standard library's),
and scripts/gen_python_client.py on a small description: names, signatures, types.
The client against a real rota: python/live_tests/test_client_live.py."""
import http.server
import importlib.util
import json
import sys
import threading
import types
import typing
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import rota  # noqa: E402


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_python_client", ROOT / "scripts" / "gen_python_client.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SPEC = {
    "openapi": "3.0.3",
    "info": {"version": "1"},
    "components": {"schemas": {
        "Thing": {"type": "object", "additionalProperties": False, "required": ["id", "kind"],
                  "properties": {"id": {"type": "integer"}, "kind": {"type": "string", "enum": ["a", "b"]},
                                 "note": {"type": "string"}, "tags": {"type": "object",
                                                                      "additionalProperties": {"type": "string"}}}},
        "Window": {"type": "object", "required": ["from"], "properties": {"from": {"type": "string"}}},
        "Either": {"oneOf": [{"type": "string"}, {"$ref": "#/components/schemas/Thing"}]},
    }},
    "paths": {
        "/api/v1/things/{name}/parts/{id}": {"get": {
            "operationId": "getThingsByNamePartsById", "summary": 'One part, "quoted"',
            "parameters": [{"in": "path", "name": "id", "required": True, "schema": {"type": "integer"}},
                           {"in": "path", "name": "name", "required": True, "schema": {"type": "string"}},
                           {"in": "query", "name": "from", "schema": {"type": "string"}, "description": "start"},
                           {"in": "query", "name": "all", "schema": {"type": "boolean"}},
                           {"in": "query", "name": "body", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {
                "type": "object", "required": ["things"],
                "properties": {"things": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}}}}}},
        "/api/v1/things": {"post": {
            "operationId": "postThings", "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Thing"}}}},
            "responses": {"201": {"description": "Created", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Thing"}}}}}}},
        "/api/v1/stream": {"get": {"operationId": "getStream", "responses": {
            "200": {"description": "events", "content": {"text/event-stream": {}}}}}},
        "/api/v1/ws": {"get": {"operationId": "getWs", "responses": {"101": {"description": "upgrade"}}}},
        "/metrics": {"get": {"operationId": "getMetrics", "responses": {
            "200": {"description": "text", "content": {"text/plain": {}}}}}},
    },
}


class GeneratorTest(unittest.TestCase):
    def setUp(self):
        self.text = load_generator().Generator(SPEC).render()
        self.mod = types.ModuleType("generated")
        exec(compile(self.text, "generated", "exec"), self.mod.__dict__)

    def test_one_method_per_operation_named_in_snake_case_streams_left_out(self):
        methods = sorted(m for m in vars(self.mod.Api) if not m.startswith("_"))
        self.assertEqual(methods, ["get_metrics", "get_things_by_name_parts_by_id", "post_things"])

    def test_path_parameters_in_path_order_then_query_keywords(self):
        import inspect
        sig = inspect.signature(self.mod.Api.get_things_by_name_parts_by_id)
        # `from` is a keyword, `body` the request body's name: both get an underscore
        self.assertEqual(list(sig.parameters), ["self", "name", "id", "from_", "all", "body_"])
        self.assertEqual(sig.parameters["from_"].kind, inspect.Parameter.KEYWORD_ONLY)
        self.assertIsNone(sig.parameters["all"].default)
        calls = []

        class Fake(self.mod.Api):
            def _call(self, method, path, query, body):
                calls.append((method, path, query, body))
                return {"things": []}

        Fake().get_things_by_name_parts_by_id("a b/c", 7, from_="x")
        self.assertEqual(calls, [("GET", "/api/v1/things/a%20b%2Fc/parts/7",
                                  {"from": "x", "all": None, "body": None}, None)])
        Fake().post_things({"id": 1, "kind": "a"})
        self.assertEqual(calls[-1], ("POST", "/api/v1/things", None, {"id": 1, "kind": "a"}))

    def test_types_follow_the_schemas(self):
        hints = typing.get_type_hints(self.mod.Thing, globalns=vars(self.mod), include_extras=True)
        self.assertEqual(hints["id"], int)
        self.assertEqual(hints["kind"], typing.Literal["a", "b"])
        self.assertEqual(hints["note"], typing.NotRequired[str])
        self.assertEqual(hints["tags"], typing.NotRequired[dict[str, str]])
        self.assertEqual(self.mod.Thing.__required_keys__, frozenset({"id", "kind"}))
        # a field that is a Python keyword: the functional form
        self.assertEqual(self.mod.Window.__required_keys__, frozenset({"from"}))
        # an inline answer object gets a name from its operation
        self.assertIn("class GetThingsByNamePartsByIdResponse(TypedDict):", self.text)
        self.assertEqual(self.mod.Either, str | self.mod.Thing)

    def test_the_checked_in_client_is_generated(self):
        api = (ROOT / "python" / "rota" / "api.py").read_text()
        self.assertIn("Generated by scripts/gen_python_client.py", api)


class Handler(http.server.BaseHTTPRequestHandler):
    seen = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Handler.seen.append(("GET", self.path, self.headers.get("Authorization"), None))
        if self.path.startswith("/api/v1/jobs/404"):
            self.answer(404, {"error": {"code": "not_found", "message": "job 404 not found"}})
        elif self.path.startswith("/api/v1/auth/whoami"):
            self.answer(429, {"error": {"code": "resource_exhausted", "message": "slow down"}}, {"Retry-After": "7"})
        elif self.path == "/metrics":
            body = b"rota_up 1\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.answer(200, {"jobs": [], "truncated": False})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n)) if n else None
        Handler.seen.append(("POST", self.path, self.headers.get("Authorization"), body))
        self.answer(201, {"id": 5, **(body or {})})

    def answer(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class ClientTransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.thread = threading.Thread(target=cls.httpd.serve_forever, daemon=True)
        cls.thread.start()
        cls.url = f"http://127.0.0.1:{cls.httpd.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def setUp(self):
        Handler.seen.clear()

    def test_bearer_token_query_values_and_json_bodies(self):
        c = rota.Client(self.url, "tok-1")
        self.assertEqual(c.get_jobs(mine=True, limit=5, before=None), {"jobs": [], "truncated": False})
        method, path, auth, _ = Handler.seen[-1]
        self.assertEqual((method, auth), ("GET", "Bearer tok-1"))
        self.assertEqual(path, "/api/v1/jobs?mine=true&limit=5")  # None: not sent
        job = c.submit({"name": "x", "command": ["true"], "groups": [{"role": "worker"}]})
        self.assertEqual(job["id"], 5)
        self.assertEqual(Handler.seen[-1][3]["name"], "x")

    def test_errors_carry_status_code_message_and_retry_after(self):
        c = rota.Client(self.url, "tok-1")
        with self.assertRaises(rota.ApiError) as e:
            c.get_jobs_by_id(404)
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        self.assertEqual(e.exception.message, "job 404 not found")
        with self.assertRaises(rota.ApiError) as e:
            c.get_auth_whoami()
        self.assertEqual((e.exception.status, e.exception.retry_after), (429, 7.0))

    def test_text_answers_and_bad_arguments(self):
        self.assertEqual(rota.Client(self.url, None).get_metrics(), "rota_up 1\n")
        with self.assertRaises(ValueError):
            rota.Client("ftp://host", "t")
        with self.assertRaises(ValueError):
            rota.Client(self.url, "t").sweep({"name": "x", "command": ["true"], "groups": []})
        with self.assertRaises(ValueError):
            rota.Client(self.url, "t").submit({"name": "x", "command": ["true"], "groups": [], "array": "0-3"})


if __name__ == "__main__":
    unittest.main()
