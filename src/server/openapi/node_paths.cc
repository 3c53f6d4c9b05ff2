// Agentless (SSH) nodes.
// Part of the OpenAPI description (openapi.cc puts it together).

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

Json SshNodePaths(Json& schemas) {
  const Json fields = {{"name", T("string")}, {"url", T("string")}, {"gpus", T("integer")},
                       {"gpu_model", T("string")}, {"labels", Map(T("string"))}, {"created_ms", T("integer")}};
  Json node = fields;
  node["reachable"] = T("boolean");
  node["tasks"] = T("integer");
  node["error"] = T("string");
  schemas["SshNode"] = Closed(std::move(node), {"error"});
  return Json{
      {"/api/v1/ssh-nodes",
       {{"get", Op("Agentless nodes reached over SSH, reachable or why not",
                   Closed({{"ssh_nodes", Arr(Ref("SshNode"))}}), {400, 401})},
        {"post", WithBody(Answers(201, Op("Declare an agentless node (admin): {name, url: ssh://user@host[:port], "
                                          "gpus?, gpu_model?, labels?}; a root login runs tasks as each job's "
                                          "owner (setpriv), another login only that user's; 409 when the name "
                                          "is taken. The answer is the node as declared (not probed yet)",
                                          Closed(fields), {400, 401, 403, 409, 503})),
                          Body({{"name", T("string")}, {"url", T("string")}, {"gpus", T("integer")},
                                {"gpu_model", T("string")}, {"labels", Map(T("string"))}},
                               {"name", "url"}))}}},
      {"/api/v1/ssh-nodes/{name}",
       {{"delete", Answers(204, Op("Forget an agentless node (admin); 409 while tasks run there", T("object"),
                                   {401, 403, 404, 409},
                                   Json::array({PathParam("name", "string", "node name")})))}}},
      {"/api/v1/ssh-key",
       {{"get", Op("The server's SSH public key, to authorise on agentless nodes (admin)",
                   Closed({{"public_key", T("string")}}), {401, 403, 503})}}},
  };
}

}  // namespace rota::server::openapi
