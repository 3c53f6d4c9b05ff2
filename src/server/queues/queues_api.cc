// Queues API:
//
//   GET    /api/v1/queues              every queue with its pending and running jobs   reader
//   POST   /api/v1/queues              a queue (queues.h)                   admin -> 201
//   GET    /api/v1/queues/{name}                                            reader
//   PUT    /api/v1/queues/{name}       the whole queue                      admin
//   DELETE /api/v1/queues/{name}       Conflict while jobs name it          admin -> 204
//   GET    /api/v1/queue               ?queue=NAME: pending jobs in the scheduler's order,
//                                      with why each waits                  reader

#include <algorithm>

#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/accounts.h"
#include "server/accounts/auth.h"
#include "server/jobs/jobs.h"
#include "server/queues/queues.h"
#include "server/request_params.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

api::Json WithCounts(ApiContext& ctx, const QueueDef& q) {
  api::Json j = ToJson(q);
  const JobService::QueueCounts n = ctx.jobs->CountsIn(q.queue.name);
  j["pending"] = n.pending;
  j["unfinished"] = n.unfinished;
  return j;
}

// The queue in a request body; a PUT's path names it (the body may omit it).
Result<QueueDef> BodyQueue(const HttpRequest& req, const std::string& path_name) {
  auto body = api::ParseStrictJson(req.body);
  if (!body.ok()) return body.status().WithContext("request body");
  if (!path_name.empty() && body->is_object()) {
    if (!body->contains("name")) (*body)["name"] = path_name;
    if ((*body)["name"] != path_name) {
      const api::Json& named = (*body)["name"];
      return Status::InvalidArgument("queue.name: the body names '" + (named.is_string() ? named.get<std::string>() : named.dump()) +
                                     "', the path '" + path_name + "'");
    }
  }
  return QueueFromJson(*body);
}

// A queue admits only existing users and groups: a name that is none is a
// typo that would lock out the members meant (InvalidArgument naming it).
// Names the stored queue `before` already has pass (a user deleted since, a
// queue stored by an older version): a change of something else must go through.
Status MembersExist(ApiContext& ctx, const QueueDef& q, const QueueDef* before = nullptr) {
  auto had = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (const auto& u : q.queue.users) {
    if (before && had(before->queue.users, u)) continue;
    auto found = ctx.accounts->FindUser(u);
    if (found.status().code() == StatusCode::kNotFound) {
      return Status::InvalidArgument("queue.users: no user '" + u + "'");
    }
    RETURN_IF_ERROR(found.status());
  }
  if (q.queue.groups.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<Group> groups, ctx.accounts->ListGroups());
  for (const auto& g : q.queue.groups) {
    if (before && had(before->queue.groups, g)) continue;
    const bool known = std::any_of(groups.begin(), groups.end(), [&](const Group& x) { return x.name == g; });
    if (!known) return Status::InvalidArgument("queue.groups: no group '" + g + "' (rota group add " + g + ")");
  }
  return Status::Ok();
}

}  // namespace

Status RegisterQueueRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.queues == nullptr || ctx.jobs == nullptr) return Status::Internal("queue routes need queues and jobs");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/queues", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    api::Json rows = api::Json::array();
    for (const auto& q : ctx.queues->List()) rows.push_back(WithCounts(ctx, q));
    return HttpResponse::Json(200, api::Json{{"queues", std::move(rows)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/queues", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto q = BodyQueue(req, "");
    if (!q.ok()) return Fail(q.status());
    if (Status st = MembersExist(ctx, *q); !st.ok()) return Fail(st);
    auto created = ctx.queues->Create(*q);
    if (!created.ok()) return Fail(created.status());
    return HttpResponse::Json(201, WithCounts(ctx, *created).dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/queues/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    auto q = ctx.queues->Get(req.Param("name"));
    if (!q.ok()) return Fail(q.status());
    return HttpResponse::Json(200, WithCounts(ctx, *q).dump());
  }));

  RETURN_IF_ERROR(http.Route("PUT", "/api/v1/queues/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto q = BodyQueue(req, req.Param("name"));
    if (!q.ok()) return Fail(q.status());
    auto before = ctx.queues->Get(q->queue.name);
    if (Status st = MembersExist(ctx, *q, before.ok() ? &*before : nullptr); !st.ok()) return Fail(st);
    auto replaced = ctx.queues->Replace(*q);
    if (!replaced.ok()) return Fail(replaced.status());
    return HttpResponse::Json(200, WithCounts(ctx, *replaced).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/queues/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    const std::string name = req.Param("name");
    if (auto q = ctx.queues->Get(name); !q.ok()) return Fail(q.status());
    if (name == "default") return Fail(Status::Conflict("the default queue is built in: it cannot be deleted"));
    if (int n = ctx.jobs->CountsIn(name).unfinished; n > 0) {
      return Fail(Status::Conflict("queue '" + name + "' still has " + std::to_string(n) + " unfinished job(s)"));
    }
    if (Status st = ctx.queues->Delete(name); !st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/queue", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {"queue", "offset", "limit"}); !st.ok()) return Fail(st);
    const std::string queue = req.Query("queue");
    if (!queue.empty()) {
      if (auto q = ctx.queues->Get(queue); !q.ok()) return Fail(q.status());
    }
    auto offset = UintParam(req, "offset", 0, 1'000'000'000);
    if (!offset.ok()) return Fail(offset.status());
    auto limit = UintParam(req, "limit", 1'000'000'000, 1'000'000'000);
    if (!limit.ok()) return Fail(limit.status());
    if (*limit == 0) return Fail(Status::InvalidArgument("limit: must be at least 1"));
    std::string body;
    api::JsonWriter w(&body);
    w.BeginObject();
    w.Key("jobs");
    w.BeginArray();
    // The rows are written under the jobs lock: no job is copied.
    const size_t total = ctx.jobs->VisitQueue(queue, *offset, *limit, [&w](const Job& j) { AppendQueueRow(w, j); });
    w.EndArray();
    w.Key("total");
    w.Int(total);
    w.EndObject();
    return HttpResponse::Json(200, std::move(body));
  }));
  return Status::Ok();
}

}  // namespace rota::server
