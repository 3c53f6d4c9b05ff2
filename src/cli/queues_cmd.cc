// rota queue (pending jobs in the scheduler's order, with why they wait) and
// rota queues (list, create, set, delete).
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "common/clock.h"
#include "common/strings.h"

namespace rota::cli {
namespace {

using api::Json;

std::string Names(const Json& a) {
  std::string out;
  for (const auto& x : a) out += (out.empty() ? "" : ",") + x.get<std::string>();
  return out.empty() ? "*" : out;
}

// "a, b,,c" -> a, b, c.
std::vector<std::string> Names(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& part : Split(s, ',', true)) {
    const std::string_view name = Trim(part);
    if (!name.empty()) out.emplace_back(name);
  }
  return out;
}

// "2h", "2h (max 24h)", "- (max 24h)" or "-".
std::string TimeLimits(const Json& q) {
  std::string out = q.value("default_time_limit", "-");
  if (q.contains("max_time_limit")) out += " (max " + q.value("max_time_limit", "") + ")";
  return out;
}

// Applies the flags that were given onto a queue's JSON.
void Apply(const QueueEdit& e, Json* q) {
  if (e.priority) (*q)["priority"] = *e.priority;
  if (e.min_priority) (*q)["min_priority"] = *e.min_priority;
  if (e.max_priority) (*q)["max_priority"] = *e.max_priority;
  if (e.users) (*q)["users"] = Names(*e.users);
  if (e.groups) (*q)["groups"] = Names(*e.groups);
  if (e.max_gpus) (*q)["max_gpus"] = *e.max_gpus;
  // "0": none (the key goes).
  for (const auto& [flag, key] : {std::pair{&e.default_time_limit, "default_time_limit"},
                                  std::pair{&e.max_time_limit, "max_time_limit"}}) {
    if (!*flag) continue;
    if (**flag == "0") q->erase(key);
    else (*q)[key] = **flag;
  }
  if (e.preemptible) (*q)["preemptible"] = *e.preemptible;
  if (e.description) (*q)["description"] = *e.description;
}

}  // namespace

int RunQueue(const ClientOptions& client, const OutputOptions& out, const std::string& queue) {
  if (!ValidOutput(out)) return 2;
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  auto list = api->Get("/api/v1/queue" + (queue.empty() ? std::string() : "?queue=" + queue));
  if (!list.ok()) return Fail(list.status());
  if (out.format == "json") {
    std::cout << (*list)["jobs"].dump(2) << "\n";
    return 0;
  }
  const int64_t now = RealClock::Get().NowMs();
  Table t({"POS", "ID", "NAME", "OWNER", "QUEUE", "PRIO", "WAITED", "EST. START", "REASON"});
  for (const auto& j : (*list)["jobs"]) {
    // Waited since it last became pending (a requeued job: since its requeue).
    const Json& since = j.contains("queued") ? j["queued"] : j["created"];
    t.Add({j.contains("position") ? j["position"].dump() : "-", std::to_string(j.value("id", 0)),
           Str(j, "name"), Str(j, "owner"), Str(j, "queue"), std::to_string(j.value("priority", 0)),
           Since(since, now), j.contains("estimated_start") ? Str(j, "estimated_start") : "-", Str(j, "reason")});
  }
  std::cout << t.Render();
  return 0;
}

int RunQueues(const ClientOptions& client, const OutputOptions& out, const QueueEdit& e) {
  if (!ValidOutput(out)) return 2;
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (e.action == "list") {
    auto list = api->Get("/api/v1/queues");
    if (!list.ok()) return Fail(list.status());
    if (out.format == "json") {
      std::cout << (*list)["queues"].dump(2) << "\n";
      return 0;
    }
    Table t({"NAME", "PRIORITY", "JOB PRIORITY", "USERS", "GROUPS", "MAX GPUS", "TIME LIMIT",
             "PREEMPTIBLE", "PENDING", "UNFINISHED"});
    for (const auto& q : (*list)["queues"]) {
      t.Add({Str(q, "name"), std::to_string(q.value("priority", 0)),
             std::to_string(q.value("min_priority", 0)) + ".." + std::to_string(q.value("max_priority", 0)),
             Names(q["users"]), Names(q["groups"]),
             q.value("max_gpus", 0) == 0 ? "-" : q["max_gpus"].dump(), TimeLimits(q),
             q.value("preemptible", false) ? "yes" : "no", std::to_string(q.value("pending", 0)),
             std::to_string(q.value("unfinished", 0))});
    }
    std::cout << t.Render();
    return 0;
  }
  if (e.name.empty()) return Usage("a queue name is required");
  const std::string path = "/api/v1/queues/" + e.name;
  Result<Json> result = Json();
  if (e.action == "delete") {
    result = api->Delete(path);
    if (!result.ok()) return Fail(result.status());
    if (out.format != "json") std::cout << "Deleted queue " << e.name << "\n";
    return 0;
  }
  if (e.action == "create") {
    Json q{{"name", e.name}};
    Apply(e, &q);
    result = api->Post("/api/v1/queues", q);
  } else {  // set: the stored queue with the given flags changed
    auto current = api->Get(path);
    if (!current.ok()) return Fail(current.status());
    Json q = *current;
    for (const char* derived : {"built_in", "pending", "unfinished"}) q.erase(derived);
    Apply(e, &q);
    result = api->Call("PUT", path, q.dump());
  }
  if (!result.ok()) return Fail(result.status());
  if (out.format == "json") std::cout << result->dump(2) << "\n";
  else std::cout << (e.action == "create" ? "Created" : "Updated") << " queue " << e.name << "\n";
  return 0;
}

}  // namespace rota::cli
