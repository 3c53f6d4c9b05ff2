// Jobs API:
//
//   POST /api/v1/jobs                 a job spec (jobs/spec.h)          user -> 201 Job
//     with "array": "0-99%10" (or {indices, max_running}) -> 201 {array: Array}
//     (its members are ordinary jobs; see jobs_arrays_api.cc); with "sweep":
//     {method, parameters, count, ...} (jobs/sweep.h) -> 201 {array: Array} of its trials
//   POST /api/v1/jobs/preview         a job spec -> its processes' argv and env (no job made)
//   GET  /api/v1/jobs                 ?mine=&state=&limit=&offset=&members=false  reader
//   GET  /api/v1/jobs/{id}            with its state changes           reader
//     (a job's environment values are its owner's and admins' only: others see
//      the variables' names, each value "(hidden)")
//   POST /api/v1/jobs/{id}/cancel                                      owner or admin
//   GET  /api/v1/jobs/{id}/logs       ?task=worker-0&stream=stdout|stderr&offset=&max_bytes=
//                                                                      owner or admin

#include "api/codec.h"
#include "net/http_server.h"
#include "jobs/launch_env.h"
#include "jobs/placement.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/request_params.h"
#include "server/jobs/jobs.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

// The job as `who` may see it: environment values (API keys, tokens) hidden
// from all but its owner and admins, as its logs are.
api::Json Visible(const Job& job, const Principal& who, const std::vector<JobEvent>* events = nullptr) {
  api::Json out = ToJson(job, events);
  if (who.CanModify(job.owner_id)) return out;
  if (auto spec = out.find("spec"); spec != out.end()) {
    if (auto env = spec->find("env"); env != spec->end() && env->is_object()) {
      for (auto& [name, value] : env->items()) value = "(hidden)";
    }
  }
  return out;
}

HttpResponse LogAnswer(const Result<api::TaskLogMsg>& log, const std::string& task,
                       const std::string& stream) {
  if (!log.ok()) return Fail(log.status());
  // Where the next read starts, counted in the file's bytes (data is text: invalid UTF-8
  // in it is replaced, so its length may differ).
  const uint64_t next = log->next_offset != 0 ? log->next_offset : log->offset + log->data.size();
  api::Json out{{"task", task},       {"stream", stream}, {"offset", log->offset},
                {"next_offset", next}, {"size", log->size}, {"data", log->data}};
  return HttpResponse::Json(200, out.dump(-1, ' ', false, api::Json::error_handler_t::replace));
}

// GET /api/v1/jobs/{id}/logs: the checks, then the read sent to the task's node; an answer
// now for a refused request, std::nullopt when `respond` gets it later.
std::optional<HttpResponse> LogsRequest(ApiContext& ctx, const HttpRequest& req,
                                        const net::Responder& respond) {
  auto who = RequireUser(ctx, req);
  if (!who.ok()) return Fail(who.status());
  if (Status st = OnlyQueryParams(req, {"task", "stream", "offset", "max_bytes"}); !st.ok()) return Fail(st);
  auto id = ParsePositiveId("job", req.Param("id"));
  if (!id.ok()) return Fail(id.status());
  auto job = ctx.jobs->Get(*id);
  if (!job.ok()) return Fail(job.status());
  if (!who->CanModify(job->owner_id)) {
    return Fail(Status::PermissionDenied("the logs of job " + std::to_string(*id) + " are " +
                                         job->owner + "'s"));
  }
  std::string task = req.Query("task");
  if (task.empty()) {
    for (const auto& t : job->tasks) {
      if (t.runs) {
        task = t.name;
        break;
      }
    }
  }
  const std::string stream = req.Query("stream").empty() ? "stdout" : req.Query("stream");
  if (stream != "stdout" && stream != "stderr") {
    return Fail(Status::InvalidArgument("stream: must be stdout or stderr"));
  }
  auto offset = UintParam(req, "offset", 0, UINT64_MAX / 2);
  auto max = UintParam(req, "max_bytes", 65536, api::kMaxLogChunk);
  if (!offset.ok()) return Fail(offset.status());
  if (!max.ok()) return Fail(max.status());
  if (*max == 0) return Fail(Status::InvalidArgument("max_bytes: must be at least 1"));
  if (Status st = api::ValidateTaskId(task); !st.ok()) return Fail(st.WithContext("task"));
  ctx.jobs->Logs(*id, task, stream, *offset, *max,
                 [respond, task, stream](Result<api::TaskLogMsg> log) {
                   respond(LogAnswer(log, task, stream));
                 });
  return std::nullopt;
}

}  // namespace

Status RegisterJobRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.jobs == nullptr) return Status::Internal("job routes need ctx.jobs");

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/jobs", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = api::ParseStrictJson(req.body);
    if (!body.ok()) return Fail(body.status().WithContext("request body"));
    // With "array": an array job, its members ordinary jobs (jobs_arrays.cc).
    // With "sweep": an array of one member per trial.
    std::optional<jobs::ArraySpec> array;
    std::optional<jobs::SweepSpec> sweep;
    if (body->is_object()) {
      if (auto a = body->find("array"); a != body->end()) {
        auto parsed = ArrayFromJson(*a);
        if (!parsed.ok()) return Fail(parsed.status());
        array = std::move(*parsed);
        body->erase("array");
      }
      if (auto w = body->find("sweep"); w != body->end()) {
        if (array) return Fail(Status::InvalidArgument("array and sweep: give one of them"));
        auto parsed = jobs::SweepSpecFromJson(*w);
        if (!parsed.ok()) return Fail(parsed.status());
        sweep = std::move(*parsed);
        body->erase("sweep");
      }
    }
    auto spec = jobs::JobSpecFromJson(*body);
    if (!spec.ok()) return Fail(spec.status());
    if (sweep) {
      auto submitted = ctx.jobs->SubmitSweep(who->user_id, who->username, *spec, *sweep);
      if (!submitted.ok()) return Fail(submitted.status());
      return HttpResponse::Json(201, api::Json{{"array", ArrayToJson(*submitted)}}.dump());
    }
    if (array) {
      auto submitted = ctx.jobs->SubmitArray(who->user_id, who->username, *spec, *array);
      if (!submitted.ok()) return Fail(submitted.status());
      return HttpResponse::Json(201, api::Json{{"array", ArrayToJson(*submitted)}}.dump());
    }
    auto job = ctx.jobs->Submit(who->user_id, who->username, *spec);
    if (!job.ok()) return Fail(job.status());
    return HttpResponse::Json(201, ToJson(*job).dump());
  }));

  // What the job's processes would run and see, on an illustrative placement (no job is
  // made): the submit form shows it before submitting.
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/jobs/preview", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = api::ParseStrictJson(req.body);
    if (!body.ok()) return Fail(body.status().WithContext("request body"));
    auto parsed = jobs::JobSpecFromJson(*body);
    if (!parsed.ok()) return Fail(parsed.status());
    // What submitting it would answer (queue, quotas, the cluster), nothing stored.
    auto spec = ctx.jobs->CheckSubmission(who->user_id, who->username, *parsed);
    if (!spec.ok()) return Fail(spec.status());
    auto processes = jobs::BuildLaunch(*spec, jobs::ExamplePlacement(*spec), {"0", 0});
    if (!processes.ok()) return Fail(processes.status());
    api::Json rows = api::Json::array();
    for (const auto& p : *processes) {
      api::Json files = api::Json::array();
      for (const auto& [name, content] : p.files) files.push_back(name);
      rows.push_back({{"task", p.task}, {"name", p.name}, {"role", p.role}, {"node", p.node},
                      {"gpus", p.gpus}, {"runs", p.runs}, {"argv", p.argv}, {"env", p.env},
                      {"files", std::move(files)}});
    }
    return HttpResponse::Json(
        200, api::Json{{"processes", std::move(rows)},
                       {"note", "nodes (node-1, node-2, ...), GPU indices and ports are "
                                "examples: the scheduler decides them at start"}}
                 .dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/jobs", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {"mine", "state", "limit", "offset", "before", "after", "members"});
        !st.ok()) {
      return Fail(st);
    }
    const std::string mine = req.Query("mine");
    if (!mine.empty() && mine != "true" && mine != "false") {
      return Fail(Status::InvalidArgument("mine: must be true or false"));
    }
    if (mine == "true" && !who->authenticated()) return Fail(Status::Unauthenticated("mine: sign in first"));
    // members=false: array members left out (GET /api/v1/arrays lists their arrays).
    const std::string members = req.Query("members");
    if (!members.empty() && members != "true" && members != "false") {
      return Fail(Status::InvalidArgument("members: must be true or false"));
    }
    auto limit = UintParam(req, "limit", 100, 1000);
    if (!limit.ok()) return Fail(limit.status());
    auto offset = UintParam(req, "offset", 0, 1'000'000'000);
    if (!offset.ok()) return Fail(offset.status());
    int64_t bounds[2] = {0, 0};  // before, after
    for (int k = 0; k < 2; ++k) {
      const char* name = k == 0 ? "before" : "after";
      if (req.Query(name).empty()) continue;
      auto id = ParsePositiveId(name, req.Query(name));
      if (!id.ok()) return Fail(id.status());
      bounds[k] = *id;
    }
    std::optional<jobs::JobState> state;
    if (const std::string s = req.Query("state"); !s.empty()) {
      state = jobs::ParseJobState(s);
      if (!state) {
        return Fail(Status::InvalidArgument("state '" + s +
                                            "': use pending, starting, running, succeeded, failed or cancelled"));
      }
    }
    bool more = false;
    auto list = ctx.jobs->List({.owner_id = mine == "true" ? who->user_id : 0,
                                .state = state,
                                .limit = static_cast<int>(*limit),
                                .offset = static_cast<int64_t>(*offset),
                                .before = bounds[0],
                                .after = bounds[1],
                                .array_id = members == "false" ? -1 : 0},
                               &more);
    if (!list.ok()) return Fail(list.status());
    api::Json rows = api::Json::array();
    for (const auto& j : *list) rows.push_back(Visible(j, *who));
    api::Json out{{"jobs", std::move(rows)}};
    if (more) out["truncated"] = true;  // more follow: ask again before the last id (after the first)
    return HttpResponse::Json(200, out.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/jobs/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("job", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    std::vector<JobEvent> events;
    auto job = ctx.jobs->Get(*id, &events);
    if (!job.ok()) return Fail(job.status());
    return HttpResponse::Json(200, Visible(*job, *who, &events).dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/jobs/{id}/cancel", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("job", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto job = ctx.jobs->Cancel(who->user_id, who->admin(), *id);
    if (!job.ok()) return Fail(job.status());
    return HttpResponse::Json(200, ToJson(*job).dump());
  }));

  // Answered when the task's node sends the log (LogFetcher): no io thread waits for it.
  RETURN_IF_ERROR(http.RouteAsync("GET", "/api/v1/jobs/{id}/logs", [&ctx](const HttpRequest& req,
                                                                         net::Responder respond) {
    if (auto refused = LogsRequest(ctx, req, respond)) respond(std::move(*refused));
  }));

  return Status::Ok();
}

}  // namespace rota::server
