#!/usr/bin/env python3
"""Writes python/rota/api.py, the typed methods of rota's Python API client, from rota's
OpenAPI description (GET /api/v1/openapi.json). Standard library only.

    scripts/gen_python_client.py --spec spec.json [--out python/rota/api.py]
    scripts/gen_python_client.py --url http://127.0.0.1:8080     (a running rota)
    scripts/gen_python_client.py --rota build/bin/rota           (starts `rota dev`)
    ... --check                                                   exit 1 if OUT differs

What it writes (docs/python.md):
- one TypedDict per component schema (fields the server may leave out are NotRequired;
  string enums are Literal types), and one per object written inline in an operation
  (named after the operation: GetJobsResponse);
- class Api with one method per operation, named after its operationId in snake case
  (getJobsById -> get_jobs_by_id): path parameters first (positional), then the
  request body, then the query parameters as keywords (None: not sent; `from` is
  from_). Each method calls self._call(method, path, query, body), which
  rota.client.Client implements. The event stream and the agents' WebSocket are left out.
"""
from __future__ import annotations

import argparse
import json
import keyword
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent / "python" / "rota" / "api.py"
SKIPPED_CONTENT = {"text/event-stream"}  # streams: not a request/answer method


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"[^0-9a-zA-Z_]", "_", s).lower()


def pascal(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^0-9a-zA-Z]+", name) if p)


def ident(name: str) -> str:
    """A Python parameter name for an API name (keywords get a trailing underscore)."""
    n = re.sub(r"[^0-9a-zA-Z_]", "_", name)
    if not n or n[0].isdigit():
        n = "_" + n
    return n + "_" if keyword.iskeyword(n) else n


class Generator:
    def __init__(self, spec: dict):
        self.spec = spec
        self.schemas = spec.get("components", {}).get("schemas", {})
        self.defs: list[tuple[str, dict]] = []  # (name, object schema) in order of definition
        self.names: set[str] = set(self.schemas)

    # ---- types

    def new_name(self, base: str) -> str:
        name, n = base, 2
        while name in self.names:
            name, n = f"{base}{n}", n + 1
        self.names.add(name)
        return name

    def type_of(self, s: dict | None, hint: str) -> str:
        """The annotation for schema `s`; inline objects become TypedDicts named from `hint`."""
        if not s:
            return "Any"
        if "$ref" in s:
            return s["$ref"].rsplit("/", 1)[-1]
        for key in ("oneOf", "anyOf"):
            if key in s:
                parts = []
                for i, sub in enumerate(s[key]):
                    t = self.type_of(sub, f"{hint}{i + 1}")
                    if t not in parts:
                        parts.append(t)
                t = " | ".join(parts)
                return f"{t} | None" if s.get("nullable") else t
        t = s.get("type")
        if t == "string":
            out = "Literal[" + ", ".join(repr(v) for v in s["enum"]) + "]" if "enum" in s else "str"
        elif t == "integer":
            out = "int"
        elif t == "number":
            out = "float"
        elif t == "boolean":
            out = "bool"
        elif t == "array":
            out = f"list[{self.type_of(s.get('items'), hint + 'Item')}]"
        elif t == "object" or "properties" in s:
            if s.get("properties"):
                name = self.new_name(hint)
                self.defs.append((name, s))
                out = name
            elif isinstance(s.get("additionalProperties"), dict) and s["additionalProperties"]:
                out = f"dict[str, {self.type_of(s['additionalProperties'], hint + 'Value')}]"
            else:
                out = "dict[str, Any]"
        else:
            out = "Any"
        return f"{out} | None" if s.get("nullable") else out

    def typed_dict(self, name: str, s: dict) -> list[str]:
        required = set(s.get("required", []))
        fields = []
        for prop, sub in s.get("properties", {}).items():
            t = self.type_of(sub, name + pascal(prop))
            # Quoted (forward references resolve lazily); NotRequired outside the quotes, so
            # that the class knows its optional keys (__optional_keys__) at run time too.
            fields.append((prop, repr(t) if prop in required else f"NotRequired[{t!r}]", sub.get("description")))
        doc = s.get("description")
        if all(p.isidentifier() and not keyword.iskeyword(p) for p, _, _ in fields):
            lines = [f"class {name}(TypedDict):"]
            if doc:
                lines.append(f"    {docstring(doc, 4)}")
            for prop, t, d in fields:
                lines.append(f"    {prop}: {t}" + (f"  # {one_line(d)}" if d else ""))
            if not fields:
                lines.append("    pass")
            return lines
        # A field that is no Python name (`from`): the functional form.
        lines = [f"{name} = TypedDict({name!r}, {{"]
        for prop, t, _ in fields:
            lines.append(f"    {prop!r}: {t},")
        lines.append("})")
        return lines

    # ---- operations

    def operations(self):
        for path, item in self.spec.get("paths", {}).items():
            for method, op in item.items():
                if method not in ("get", "put", "post", "patch", "delete"):
                    continue
                ok = {c: r for c, r in op.get("responses", {}).items() if c.startswith("2")}
                if not ok:  # only 101 (the agents' WebSocket)
                    continue
                if any(ct in SKIPPED_CONTENT for r in ok.values() for ct in r.get("content", {})):
                    continue
                yield path, method, op, ok

    def method(self, path: str, method: str, op: dict, ok: dict) -> list[str]:
        op_id = op.get("operationId") or snake(method + "_" + path)
        name = snake(op_id)
        params = op.get("parameters", [])
        path_params = [p for p in params if p.get("in") == "path"]
        # in the order they appear in the path
        path_params.sort(key=lambda p: path.find("{" + p["name"] + "}"))
        query = [p for p in params if p.get("in") == "query"]
        sig = ["self"]
        # Python names of the parameters: one each (a query parameter named like a path
        # parameter, or `body`, gets a trailing underscore).
        taken = {"self", "body"}
        names: dict[int, str] = {}
        for p in path_params + [q for q in params if q.get("in") == "query"]:
            n = ident(p["name"])
            while n in taken:
                n += "_"
            taken.add(n)
            names[id(p)] = n
        for p in path_params:
            sig.append(f"{names[id(p)]}: {self.type_of(p.get('schema'), pascal(op_id) + pascal(p['name']))}")
        body = op.get("requestBody")
        if body:
            schema = body.get("content", {}).get("application/json", {}).get("schema")
            t = self.type_of(schema, pascal(op_id) + "Request")
            sig.append(f"body: {t}" if body.get("required") else f"body: {t} | None = None")
        if query:
            sig.append("*")
            for p in query:
                t = self.type_of(p.get("schema"), pascal(op_id) + pascal(p["name"]))
                sig.append(f"{names[id(p)]}: {t} | None = None")
        code = min(ok)  # the first success answer
        content = ok[code].get("content", {})
        if "application/json" in content:
            ret = self.type_of(content["application/json"].get("schema"), pascal(op_id) + "Response")
        elif content:
            ret = "str"
        else:
            ret = "None"
        doc = [f"{method.upper()} {path}: {op.get('summary', '')}".rstrip(": ")]
        for p in path_params + query:
            if p.get("description"):
                doc.append(f"{names[id(p)]}: {one_line(p['description'])}")
        lines = [f"    def {name}({', '.join(sig)}) -> {ret}:", f"        {docstring(chr(10).join(doc), 8)}"]
        fpath = path
        for p in path_params:
            fpath = fpath.replace("{" + p["name"] + "}", "{_seg(" + names[id(p)] + ")}")
        path_expr = f'f"{fpath}"' if path_params else repr(path)
        q = "{" + ", ".join(f"{p['name']!r}: {names[id(p)]}" for p in query) + "}" if query else "None"
        args = [repr(method.upper()), path_expr, q, "body" if body else "None"]
        lines.append(f"        return self._call({', '.join(args)})")
        return lines

    def render(self) -> str:
        methods = [self.method(*o) for o in self.operations()]
        # component schemas first, in the spec's order; then the inline ones methods named
        # Aliases (enums, unions) are evaluated when the module loads: after every class.
        body: list[str] = []
        aliases: list[str] = []
        for name, s in self.schemas.items():
            if s.get("type") == "object" or "properties" in s:
                body += self.typed_dict(name, s) + ["", ""]
            else:
                alias = f"{name} = {self.type_of(s, name + 'Value')}"
                if s.get("description"):
                    alias += f"  # {one_line(s['description'])}"
                aliases.append(alias)
        done = 0
        while done < len(self.defs):  # nested objects may add more
            name, s = self.defs[done]
            done += 1
            body += self.typed_dict(name, s) + ["", ""]
        if aliases:
            body += aliases + ["", ""]
        info = self.spec.get("info", {})
        head = [
            f'"""rota API {info.get("version", "")}: typed methods and the types of their bodies.',
            "",
            "Generated by scripts/gen_python_client.py from rota's OpenAPI description; do not",
            'edit (rota.client.Client is the part written by hand)."""',
            "# fmt: off",
            "from typing import Any, Literal, NotRequired, TypedDict",
            "from urllib.parse import quote",
            "",
            "",
            "def _seg(v: object) -> str:",
            '    """A path parameter, escaped."""',
            "    return quote(str(v), safe='')",
            "",
            "",
        ]
        api = [
            "class Api:",
            '    """Every operation of the API; _call sends it (rota.client.Client)."""',
            "",
            "    def _call(self, method: str, path: str, query: dict[str, Any] | None,",
            "              body: Any) -> Any:",
            "        raise NotImplementedError",
        ]
        for m in methods:
            api += [""] + m
        return "\n".join(head + body + api) + "\n"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def docstring(text: str, indent: int) -> str:
    text = text.replace("\\", "\\\\").replace('"""', "'''")
    lines = [" ".join(line.split()) for line in text.split("\n")]
    if lines[-1].endswith('"'):
        lines[-1] += " "  # not four quotes in a row
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    pad = " " * indent
    return '"""' + lines[0] + "\n\n" + "\n".join(pad + line for line in lines[1:]) + "\n" + pad + '"""'


def fetch(url: str) -> dict:
    with urllib.request.urlopen(url.rstrip("/") + "/api/v1/openapi.json", timeout=30) as r:
        return json.load(r)


def spec_from_rota(binary: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="rota-gen-py-") as d:
        out = open(os.path.join(d, "out"), "w+")
        p = subprocess.Popen([binary, "dev", "--listen", "127.0.0.1:0", "--data-dir", os.path.join(d, "dev"),
                              "--log-level", "warning"], stdout=out, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                out.seek(0)
                m = re.search(r"ROTA_SERVER=(\S+)", out.read())
                if m:
                    return fetch(m.group(1))
                if p.poll() is not None:
                    raise SystemExit(f"rota dev exited with {p.returncode}")
                time.sleep(0.1)
            raise SystemExit("rota dev did not start in 60 s")
        finally:
            p.terminate()
            p.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--spec", help="an OpenAPI description (JSON file)")
    src.add_argument("--url", help="a running rota's address")
    src.add_argument("--rota", help="the rota binary (starts `rota dev`)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--check", action="store_true", help="exit 1 when OUT is not what the spec makes")
    a = ap.parse_args()
    if a.spec:
        spec = json.loads(Path(a.spec).read_text())
    elif a.url:
        spec = fetch(a.url)
    else:
        spec = spec_from_rota(a.rota)
    text = Generator(spec).render()
    out = Path(a.out)
    if a.check:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is not what the served API makes: run scripts/gen_python_client.py --rota build/bin/rota",
                  file=sys.stderr)
            return 1
        return 0
    out.write_text(text)
    print(f"wrote {out} ({len(spec.get('components', {}).get('schemas', {}))} schemas, "
          f"{sum(1 for _ in Generator(spec).operations())} operations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
