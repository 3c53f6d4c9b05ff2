// Reservations and reservation policies.
// Part of the OpenAPI description (openapi.cc puts it together).

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

// Reservations and policies (reservations_api.cc, policies_api.cc).
Json ReservationPaths(Json& schemas) {
  schemas["ReservationLive"] = Closed({{"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
                                       {"samples", T("integer")}, {"idle_since", Time()}},
                                      {"idle_since"});
  schemas["Reservation"] = Closed(
      {{"id", T("integer")}, {"owner", T("string")}, {"owner_id", T("integer")},
       {"node", T("string")}, {"gpus", Arr(T("integer"))}, {"gpu_uuids", Arr(T("string"))},
       {"title", T("string")}, {"description", T("string")}, {"start", Time()},
       {"end", Time()}, {"start_ms", T("integer")}, {"end_ms", T("integer")},
       {"state", Enum({"upcoming", "running", "ended", "cancelled"})},
       {"created", Time()}, {"updated", Time()}, {"cancelled", Time()},
       {"enforcement", AnyObject()}, {"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
       {"idle_notified", Time()}, {"live", Ref("ReservationLive")}},
      {"cancelled", "avg_util_gpu", "avg_util_mem", "idle_notified", "live"});
  schemas["ReservationRequest"] = Body(
      {{"node", T("string")}, {"gpus", Arr(T("integer"))}, {"gpu_uuids", Arr(T("string"))},
       {"count", T("integer")}, {"whole_node", T("boolean")}, {"start", Time()}, {"end", Time()},
       {"title", T("string")}, {"description", T("string")}, {"enforcement", AnyObject()}},
      {"node", "start", "end", "title"});
  schemas["PolicyWindow"] = Closed({{"days", Arr(T("string"))}, {"from", T("string")}, {"to", T("string")}});
  schemas["WeeklyWindows"] = Closed({{"zone", T("string")}, {"allow", Arr(Ref("PolicyWindow"))}});
  schemas["Policy"] = Closed(
      {{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
       {"subjects", Closed({{"users", Arr(T("string"))}, {"groups", Arr(T("string"))}})},
       {"targets", Closed({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}})},
       {"windows", Ref("WeeklyWindows")},
       {"max_duration", T("string")}, {"max_ahead", T("string")}, {"max_gpus", T("integer")},
       {"weekly_gpu_hours", T("number")}, {"enforcement", AnyObject()},
       {"idle", Closed({{"threshold_pct", T("number")}, {"after", T("string")}, {"release", T("boolean")}})},
       {"created", Time()}, {"updated", Time()}},
      {"windows", "max_duration", "max_ahead", "max_gpus", "weekly_gpu_hours", "idle"});
  schemas["PolicySpec"] = Body(
      {{"name", T("string")}, {"description", T("string")},
       {"subjects", Body({{"users", Arr(T("string"))}, {"groups", Arr(T("string"))}})},
       {"targets", Body({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}})},
       {"windows", WindowsBody()}, {"max_duration", T("string")}, {"max_ahead", T("string")},
       {"max_gpus", T("integer")}, {"weekly_gpu_hours", T("number")}, {"enforcement", AnyObject()},
       {"idle", Body({{"threshold_pct", T("number")}, {"after", T("string")}, {"release", T("boolean")}},
                     {"after"})},
       {"id", T("integer")}, {"created", T("string")}, {"updated", T("string")}},
      {"name"});
  const Json reservation = Ref("Reservation");
  const Json policy = Ref("Policy");
  Json id = Json::array({PathParam("id", "integer", "reservation id")});
  Json pid = Json::array({PathParam("id", "integer", "policy id")});
  Json list_params = Json::array(
      {QueryParam("mine", "boolean", "only the caller's"), QueryParam("user", "string", "only this user's"),
       QueryParam("node", "string", "only on this node"),
       QueryParam("from", "string", "RFC 3339: overlapping [from, to)"),
       QueryParam("to", "string", "RFC 3339"),
       QueryParam("state", "string", "upcoming, running, ended or cancelled"),
       QueryParam("limit", "integer", "1..1000 (default 100): the latest-starting, in start order")});
  return Json{
      {"/api/v1/reservations",
       {{"get", Op("Reservations: the `limit` latest-starting that match, in start order; "
                   "truncated when more matched",
                   Closed({{"reservations", Arr(reservation)}, {"truncated", T("boolean")}}),
                   {400, 401}, list_params)},
        {"post", WithBody(Answers(201, Op("Reserve GPUs of one node: {node, gpus | gpu_uuids | count | "
                                          "whole_node: true, start, end (RFC 3339), title, description?, "
                                          "enforcement?}; 409 names the conflicting reservations, 403 the "
                                          "refusing policy and rule",
                                          reservation, {400, 401, 403, 404, 409})),
                          Ref("ReservationRequest"))}}},
      {"/api/v1/reservations/held",
       {{"get", Op("The caller's GPUs on a node now (rota exec)",
                   Closed({{"node", T("string")}, {"user", T("string")}, {"gpus", Arr(T("integer"))},
                           {"gpu_uuids", Arr(T("string"))}, {"reservations", Arr(reservation)}}),
                   {400, 401, 404}, Json::array({QueryParam("node", "string", "node name (required)")}))}}},
      {"/api/v1/reservations/{id}",
       {{"get", Op("A reservation (live utilisation while running)", reservation, {400, 401, 404}, id)},
        {"patch", WithBody(Op("Edit {start?, end?, title?, description?, enforcement?} (owner or admin)",
                              reservation, {400, 401, 403, 404, 409}, id),
                           Body({{"start", Time()}, {"end", Time()}, {"title", T("string")},
                                 {"description", T("string")}, {"enforcement", AnyObject()}}))},
        {"delete", Op("Cancel (upcoming) or end now (running) (owner or admin)", reservation,
                      {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/policies",
       {{"get", Op("Reservation policies", Closed({{"policies", Arr(policy)}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a policy (admin)", policy, {400, 401, 403, 409})),
                          Ref("PolicySpec"))}}},
      {"/api/v1/policies/{id}",
       {{"get", Op("A policy", policy, {400, 401, 404}, pid)},
        {"put", WithBody(Op("Replace a policy (admin)", policy, {400, 401, 403, 404, 409}, pid),
                         Ref("PolicySpec"))},
        {"delete", Answers(204, Op("Delete a policy (admin)", T("object"), {400, 401, 403, 404}, pid))}}},
  };
}

}  // namespace rota::server::openapi
