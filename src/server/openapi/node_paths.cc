// Agentless (SSH) nodes.
// Part of the OpenAPI description (openapi.cc puts it together).

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

Json SshNodePaths(Json& schemas) {
  const Json fields = {{"name", T("string")},
                       {"url", T("string")},
                       {"gpus", T("integer")},
                       {"gpu_model", T("string")},
                       {"labels", Map(T("string"))},
                       {"created_ms", T("integer")},
                       {"host_key", T("string")},
                       {"host_key_fingerprint", T("string")},
                       {"host_key_source", Enum({"", "given", "fingerprint", "scanned"})},
                       {"host_key_ms", T("integer")}};
  Json node = fields;
  node["reachable"] = T("boolean");
  node["tasks"] = T("integer");
  node["error"] = T("string");
  schemas["SshNode"] = Closed(std::move(node), {"error"});
  return Json{
      {"/api/v1/ssh-nodes",
       {{"get", Op("Agentless nodes reached over SSH, reachable or why not",
                   Closed({{"ssh_nodes", Arr(Ref("SshNode"))}}), {400, 401})},
        {"post",
         WithBody(
             Answers(201,
                     Op("Declare an agentless node (admin): {name, url: ssh://user@host[:port], "
                        "gpus?, gpu_model?, labels?, host_key?}; a root login runs tasks as "
                        "each job's owner (setpriv), another login only that user's. The node "
                        "is pinned to one host key: host_key (an OpenSSH public key line or a "
                        "SHA256:... fingerprint) must match a key it presents (409 naming both "
                        "fingerprints otherwise, nothing stored); without it the key it "
                        "presents now is pinned, its fingerprint in the answer to compare. "
                        "400 for a malformed host_key; 409 when the name is taken; 503 when "
                        "the node's keys cannot be read (unless a whole key was given). The "
                        "answer is the node as declared (not probed yet)",
                        Closed(fields), {400, 401, 403, 409, 503})),
             Body({{"name", T("string")},
                   {"url", T("string")},
                   {"gpus", T("integer")},
                   {"gpu_model", T("string")},
                   {"labels", Map(T("string"))},
                   {"host_key", T("string")}},
                  {"name", "url"}))}}},
      {"/api/v1/ssh-nodes/{name}/host-key",
       {{"post",
         WithBody(
             Op("Pin an agentless node to a new host key (admin), after a change on purpose or "
                "for a node declared before pins: host_key as for the declaration (checked "
                "against what the node presents), or none for the key it presents now",
                Closed(fields), {400, 401, 403, 404, 409, 503},
                Json::array({PathParam("name", "string", "node name")})),
             Body({{"host_key", T("string")}}))}}},
      {"/api/v1/ssh-nodes/{name}",
       {{"delete", Answers(204, Op("Forget an agentless node (admin); 409 while tasks run there",
                                   T("object"), {401, 403, 404, 409},
                                   Json::array({PathParam("name", "string", "node name")})))}}},
      {"/api/v1/ssh-key",
       {{"get", Op("The server's SSH public key, to authorise on agentless nodes (admin)",
                   Closed({{"public_key", T("string")}}), {401, 403, 503})}}},
  };
}

Json SecretPaths(Json& schemas) {
  schemas["Secret"] = Closed({{"name", T("string")},
                              {"owner", T("string")},
                              {"group", T("string")},
                              {"created_by", T("string")},
                              {"created_ms", T("integer")},
                              {"last_used_ms", Nullable(T("integer"))},
                              {"size", T("integer")},
                              {"key_id", T("integer")}});
  return Json{
      {"/api/v1/secrets",
       {{"get", Op("The secrets the caller may use (its own and its groups'); admins: every secret. "
                   "Metadata only: no route ever returns a value",
                   Closed({{"secrets", Arr(Ref("Secret"))}}), {400, 401})},
        {"post",
         WithBody(Answers(201, Op("Create a secret owned by the caller, or by `group` (the caller must be in "
                                  "it): exactly one of value (text) and value_hex (any bytes), 1..65536 "
                                  "bytes; the name is [A-Za-z0-9][A-Za-z0-9._-]{0,63}, unique in the "
                                  "cluster. 400 for a bad name or value, 403 outside the group, 404 for "
                                  "an unknown group, 409 for a taken name",
                                  Ref("Secret"), {400, 401, 403, 404, 409})),
                  Body({{"name", T("string")},
                        {"value", T("string")},
                        {"value_hex", T("string")},
                        {"group", T("string")}},
                       {"name"}))}}},
      {"/api/v1/secrets/{name}",
       {{"delete", Answers(204, Op("Delete a secret: its owner, a member of its group, or an admin (who "
                                   "cannot read or use it); 404 for one the caller cannot see",
                                   T("object"), {400, 401, 404},
                                   Json::array({PathParam("name", "string", "secret name")})))}}},
  };
}

}  // namespace rota::server::openapi
