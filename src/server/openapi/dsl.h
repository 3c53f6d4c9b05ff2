#pragma once
// The small vocabulary the OpenAPI description is written in: schemas
// (Obj, Closed, Open, Arr, ...), operations (Op, Answers, WithBody) and
// parameters. Values only; see openapi.cc for how the spec is put together.

#include <initializer_list>
#include <string>

#include "api/codec.h"

namespace rota::server::openapi {

using api::Json;

inline Json Ref(const std::string& name) { return Json{{"$ref", "#/components/schemas/" + name}}; }

inline Json JsonContent(const Json& schema) {
  return Json{{"application/json", {{"schema", schema}}}};
}

inline Json ErrorResponses(std::initializer_list<int> codes) {
  Json out = Json::object();
  for (int c : codes) {
    const char* what = c == 400   ? "Bad request"
                       : c == 401 ? "Unauthenticated"
                       : c == 403 ? "Forbidden"
                       : c == 404 ? "Not found"
                       : c == 409 ? "Conflict"
                       : c == 426 ? "Upgrade required"
                       : c == 429 ? "Too many requests"
                       : c == 503 ? "Not ready"
                                  : "Error";
    out[std::to_string(c)] = {{"description", what}, {"content", JsonContent(Ref("Error"))}};
  }
  return out;
}

inline Json Op(const std::string& summary, const Json& ok_schema, std::initializer_list<int> errors,
        Json params = Json::array(), const char* ok_type = "application/json") {
  Json responses = ErrorResponses(errors);
  responses["200"] = {{"description", "OK"}, {"content", {{ok_type, {{"schema", ok_schema}}}}}};
  Json op{{"summary", summary}, {"responses", responses}};
  if (!params.empty()) op["parameters"] = params;
  return op;
}

inline Json PathParam(const char* name, const char* type, const char* desc) {
  return Json{{"name", name}, {"in", "path"}, {"required", true}, {"description", desc},
              {"schema", {{"type", type}}}};
}

inline Json QueryParam(const char* name, const char* type, const char* desc) {
  return Json{{"name", name}, {"in", "query"}, {"required", false}, {"description", desc},
              {"schema", {{"type", type}}}};
}

inline Json Obj(Json props) { return Json{{"type", "object"}, {"properties", std::move(props)}}; }
inline Json T(const char* type) { return Json{{"type", type}}; }
inline Json Arr(Json items) { return Json{{"type", "array"}, {"items", std::move(items)}}; }
inline Json Time() { return Json{{"type", "string"}, {"format", "date-time"}}; }
inline Json Nullable(Json schema) {
  schema["nullable"] = true;
  return schema;
}
// {name: value} with any names (labels, environment, metrics by name).
inline Json Map(Json values) { return Json{{"type", "object"}, {"additionalProperties", std::move(values)}}; }
// Any JSON object (kept as given, e.g. a reservation's enforcement settings).
inline Json AnyObject() { return Json{{"type", "object"}, {"additionalProperties", true}}; }
inline Json Enum(std::initializer_list<const char*> values) {
  Json e = Json::array();
  for (const char* v : values) e.push_back(v);
  return Json{{"type", "string"}, {"enum", std::move(e)}};
}
// Watts as a number (250) or text ("250W", "2.4 kW").
inline Json Watts() { return Json{{"oneOf", Json::array({T("number"), T("string")})}}; }

// An object as the server writes it: every property required but `optional` (written only when
// set); others may appear. Closed forbids them.
inline Json Open(Json props, std::initializer_list<const char*> optional = {}) {
  Json required = Json::array();
  for (const auto& [key, _] : props.items()) {
    bool opt = false;
    for (const char* o : optional) opt = opt || key == o;
    if (!opt) required.push_back(key);
  }
  Json o = Obj(std::move(props));
  if (!required.empty()) o["required"] = std::move(required);
  return o;
}
// An object the server always writes with exactly these properties.
inline Json Closed(Json props, std::initializer_list<const char*> optional = {}) {
  Json o = Open(std::move(props), optional);
  o["additionalProperties"] = false;
  return o;
}
// A request body: these properties, `required` among them, nothing else (the server refuses
// unknown fields).
inline Json Body(Json props, std::initializer_list<const char*> required = {}) {
  Json o = Obj(std::move(props));
  if (required.size() > 0) {
    o["required"] = Json::array();
    for (const char* r : required) o["required"].push_back(r);
  }
  o["additionalProperties"] = false;
  return o;
}

inline Json WithBody(Json op, const Json& schema) {
  op["requestBody"] = {{"required", true}, {"content", JsonContent(schema)}};
  return op;
}
// The operation answers 201 (same body as the 200 it replaces), 204 (no body) or 101 (a
// WebSocket).
inline Json Answers(int code, Json op) {
  Json ok = op["responses"]["200"];
  op["responses"].erase("200");
  if (code == 204) ok = {{"description", "No content"}};
  else if (code == 101) ok = {{"description", "Switching protocols: the WebSocket"}};
  else ok["description"] = "Created";
  op["responses"][std::to_string(code)] = std::move(ok);
  return op;
}

// The agents' WebSocket answers 101 (OpenAPI 3.0 cannot describe what follows); any failure is
// an Error ("default" stands in for the 2xx an operation must have).
inline Json AgentSocket(Json op) {
  op = Answers(101, std::move(op));
  op["responses"]["default"] = {{"description", "Any other failure"}, {"content", JsonContent(Ref("Error"))}};
  return op;
}

// Weekly windows as a request gives them (policies and power policies).
inline Json WindowsBody() {
  return Body({{"zone", T("string")},
               {"allow", Arr(Body({{"days", Arr(T("string"))}, {"from", T("string")}, {"to", T("string")}},
                                  {"days"}))}},
              {"allow"});
}

}  // namespace rota::server::openapi
