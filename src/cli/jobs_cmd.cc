// rota run, rota jobs, rota job show, rota cancel, rota logs, rota sweep.

#include <cctype>
#include <cmath>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/log_follow.h"
#include "cli/yaml_json.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "jobs/early_stop.h"
#include "jobs/sweep.h"

namespace rota::cli {
namespace {

using api::Json;

// The job spec from a file (JSON or YAML).
Result<Json> LoadSpecFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto json = api::ParseJson(text);
  if (json.ok()) return *json;
  if (json.status().message().find("nested deeper") != std::string::npos) return json.status().WithContext(path);
  try {
    auto j = YamlToJson(YAML::Load(text), YamlNumbers::kIntegers);
    if (!j.ok()) return j.status().WithContext(path);
    return j;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path + ": neither JSON nor YAML: " + e.what());
  }
}

Json Group(const std::string& role, int replicas, int gpus) {
  return Json{{"role", role}, {"replicas", replicas}, {"gpus_per_task", gpus}};
}

// --malleable MIN:MAX (CPU cores, fractions allowed) as the spec's malleable object.
Result<Json> MalleableFlag(const std::string& text) {
  const size_t colon = text.find(':');
  auto number = [](const std::string& t, double* out) {
    if (t.empty()) return false;
    char* end = nullptr;
    *out = std::strtod(t.c_str(), &end);
    return end == t.c_str() + t.size() && std::isfinite(*out);
  };
  double lo = 0, hi = 0;
  if (colon == std::string::npos || !number(text.substr(0, colon), &lo) || !number(text.substr(colon + 1), &hi)) {
    return Status::InvalidArgument("--malleable " + text + ": use MIN:MAX CPU cores, e.g. 1:8 or 0.5:4");
  }
  return Json{{"min_cpus", lo}, {"max_cpus", hi}};  // bounds checked by the server, with the spec
}

// The spec from `rota run` flags.
Result<Json> SpecFromFlags(const RunOptions& o) {
  if (o.command.empty()) return Status::InvalidArgument("give the command after --, e.g. rota run -- python train.py");
  Json spec{{"name", o.name.empty() ? "job" : o.name}, {"framework", o.framework}};
  Json groups = Json::array();
  const int gpus = o.gpus_per_task;
  if (o.framework == "tensorflow") {
    if (o.chief) groups.push_back(Group("chief", 1, gpus));
    if (o.ps > 0) groups.push_back(Group("ps", o.ps, 0));
    groups.push_back(Group("worker", o.workers > 0 ? o.workers : 1, gpus));
  } else if (o.framework == "pytorch") {
    const int nodes = o.nodes > 0 ? o.nodes : (o.workers > 0 ? o.workers : 1);
    groups.push_back(Group("worker", nodes, o.gpus_per_node > 0 ? o.gpus_per_node : gpus));
  } else if (o.framework == "mpi") {
    Json launcher = Group("launcher", 1, 0);
    launcher["command"] = o.command;
    groups.push_back(launcher);
    groups.push_back(Group("worker", o.workers > 0 ? o.workers : 1, gpus));
  } else {
    groups.push_back(Group("worker", o.workers > 0 ? o.workers : 1, gpus));
  }
  if (!o.malleable.empty()) {
    ASSIGN_OR_RETURN(Json bounds, MalleableFlag(o.malleable));
    // Every group that runs the job's command (not parameter servers or an MPI launcher).
    for (auto& g : groups) {
      const std::string role = g.value("role", "");
      if (role != "ps" && role != "launcher") g["malleable"] = bounds;
    }
  }
  for (auto& g : groups) {
    if (!o.nodes_list.empty()) g["nodes"] = o.nodes_list;
    if (!o.gpu_model.empty() && g.value("gpus_per_task", 0) > 0) g["gpu_model"] = o.gpu_model;
    if (!o.labels.empty()) {
      Json labels = Json::object();
      for (const auto& l : o.labels) {
        const size_t eq = l.find('=');
        if (eq == std::string::npos || eq == 0) return Status::InvalidArgument("--label " + l + ": use KEY=VALUE");
        labels[l.substr(0, eq)] = l.substr(eq + 1);
      }
      g["node_labels"] = labels;
    }
  }
  if (!o.gpu_model.empty() && std::none_of(groups.begin(), groups.end(), [](const Json& g) {
        return g.value("gpus_per_task", 0) > 0;
      })) {
    return Status::InvalidArgument("--gpu-model needs tasks with GPUs (--gpus-per-task or --gpus-per-node)");
  }
  spec["groups"] = groups;
  if (o.framework != "mpi") spec["command"] = o.command;
  if (o.shell) {
    spec["shell"] = true;
    std::string joined = Join(o.command, " ");
    if (o.framework == "mpi") spec["groups"][0]["command"] = Json::array({joined});
    else spec["command"] = Json::array({joined});
  }
  if (!o.env.empty()) {
    Json env = Json::object();
    for (const auto& e : o.env) {
      const size_t eq = e.find('=');
      if (eq == std::string::npos || eq == 0) return Status::InvalidArgument("--env " + e + ": use NAME=VALUE");
      env[e.substr(0, eq)] = e.substr(eq + 1);
    }
    spec["env"] = env;
  }
  if (!o.workdir.empty()) spec["workdir"] = o.workdir;
  if (!o.secrets.empty()) spec["secrets"] = o.secrets;  // NAME[:VAR]: the server checks them
  if (!o.restart.empty()) {
    spec["restart"] = Json{{"policy", o.restart}};
    if (o.max_restarts >= 0) spec["restart"]["max_restarts"] = o.max_restarts;
  }
  if (!o.time_limit.empty()) spec["time_limit"] = o.time_limit;
  if (!o.stop_after_disconnect.empty()) spec["stop_after_disconnect"] = o.stop_after_disconnect;
  if (o.process_per_node) spec["process_per_node"] = true;
  if (!o.queue.empty()) spec["queue"] = o.queue;
  if (o.priority) spec["priority"] = *o.priority;
  if (o.preemptible_given) spec["preemptible"] = o.preemptible;
  if (o.spread) spec["spread"] = true;
  return spec;
}

void PrintJob(const Json& j) {
  std::cout << "Job " << j.value("id", 0) << " (" << j.value("name", "") << ")\n"
            << "  Owner:     " << j.value("owner", "") << "\n"
            << "  State:     " << j.value("state", "") << (j.contains("stopping") ? " (stopping)" : "")
            << " — " << j.value("reason", "") << "\n"
            << "  Framework: " << j.value("framework", "") << ", restarts "
            << j.value("restart_count", 0) << "\n"
            << "  Queue:     " << j.value("queue", "default") << ", priority " << j.value("priority", 0)
            << (j.value("preemptible", false) ? ", preemptible" : "") << ", preempted "
            << j.value("preemptions", 0) << " time(s) (" << j.value("lost_gpu_seconds", 0)
            << " GPU-s lost)\n"
            << "  Created:   " << j.value("created", "") << "\n";
  if (j.contains("started")) {
    std::cout << "  Started:   " << Str(j, "started")
              << (j.contains("deadline") ? "; its time limit stops it at " + Str(j, "deadline") : "") << "\n";
  }
  // What it asks for: "2 worker x 4 GPUs, 1 ps x 0 GPUs; time limit 4h".
  const Json spec = j.value("spec", Json::object());
  std::string asks;
  for (const auto& g : spec.value("groups", Json::array())) {
    asks += (asks.empty() ? "" : ", ") + std::to_string(g.value("replicas", 1)) + " " + g.value("role", "task") +
            " x " + std::to_string(g.value("gpus_per_task", 0)) + " GPU" + (g.value("gpus_per_task", 0) == 1 ? "" : "s");
  }
  if (!asks.empty()) {
    std::cout << "  Asks:      " << asks << "; time limit " << spec.value("time_limit", std::string("none")) << "\n";
  }
  if (j.contains("position") || j.contains("estimated_start")) {
    std::cout << "  Waiting:   " << (j.contains("position") ? "#" + j["position"].dump() + " in line" : "")
              << (j.contains("estimated_start") ? ", estimated start " + Str(j, "estimated_start") : "")
              << "\n";
  }
  Table t({"TASK", "NODE", "GPUS", "PORT", "STATE", "PID", "EXIT", "ERROR"});
  for (const auto& task : j.value("tasks", Json::array())) {
    std::string gpus;
    for (const auto& g : task.value("gpus", Json::array())) gpus += (gpus.empty() ? "" : ",") + g.dump();
    std::string exit = task.contains("signal") ? "signal " + task["signal"].dump()
                       : task.contains("exit_code") ? task["exit_code"].dump() : "-";
    t.Add({task.value("name", ""), task.value("node", ""), gpus.empty() ? "-" : gpus,
           std::to_string(task.value("port", 0)), task.value("state", ""),
           std::to_string(task.value("pid", 0)), exit, Str(task, "error")});
  }
  std::cout << t.Render();
  if (j.contains("events")) {
    std::cout << "Events:\n";
    for (const auto& e : j["events"]) {
      std::cout << "  " << e.value("time", "") << "  " << e.value("state", "") << "  "
                << e.value("reason", "") << "\n";
    }
  }
}

bool FinalState(const std::string& s) { return s == "succeeded" || s == "failed" || s == "cancelled"; }

// "3 pending, 2 running, 5 succeeded": an array's counts in the order of a job's life.
std::string CountsText(const Json& counts) {
  std::string out;
  for (const char* state : {"pending", "starting", "running", "succeeded", "failed", "cancelled"}) {
    const int64_t n = counts.value(state, int64_t{0});
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  return out.empty() ? "no members" : out;
}

int64_t Unfinished(const Json& counts) {
  return counts.value("pending", int64_t{0}) + counts.value("starting", int64_t{0}) +
         counts.value("running", int64_t{0});
}

// After an array's submission: its id, and with `wait` its counts until every member ended.
int FollowArray(ApiClient& api, const OutputOptions& out, Json array, bool wait) {
  const std::string id = std::to_string(array.value("id", 0));
  if (out.format == "json" && !wait) {
    std::cout << array.dump(2) << "\n";
    return 0;
  }
  if (out.format != "json") {
    if (array.contains("sweep")) {
      std::cout << "Submitted sweep a" << id << " (" << array.value("size", 0) << " trials)\n" << std::flush;
    } else {
      std::cout << "Submitted array a" << id << " (" << array.value("size", 0) << " members, indices "
                << array.value("indices", "") << ")\n" << std::flush;
    }
  }
  if (!wait) return 0;
  std::string last;
  while (true) {
    const Json counts = array.value("counts", Json::object());
    const std::string line = CountsText(counts);
    if (line != last && out.format != "json") std::cout << "array a" << id << ": " << line << "\n" << std::flush;
    last = line;
    if (Unfinished(counts) == 0) {
      if (out.format == "json") std::cout << array.dump(2) << "\n";
      return counts.value("succeeded", int64_t{0}) == array.value("size", int64_t{0}) ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto again = api.Get("/api/v1/arrays/" + id + "?limit=1");
    if (!again.ok()) return Fail(again.status());
    array = std::move(*again);
  }
}

void PrintArray(const Json& a) {
  std::cout << "Array a" << a.value("id", 0) << " (" << a.value("name", "") << ")\n"
            << "  Owner:     " << a.value("owner", "") << "\n"
            << "  Indices:   " << a.value("indices", "") << " (" << a.value("size", 0) << " members"
            << (a.value("max_running", 0) > 0 ? ", at most " + std::to_string(a.value("max_running", 0)) + " at once"
                                              : std::string())
            << ")\n"
            << "  Members:   " << CountsText(a.value("counts", Json::object())) << "\n"
            << "  Created:   " << a.value("created", "") << "\n";
  Table t({"INDEX", "JOB", "STATE", "RESTARTS", "NODE", "REASON"});
  for (const auto& m : a.value("members", Json::array())) {
    std::string node;
    for (const auto& task : m.value("tasks", Json::array())) {
      const std::string n = task.value("node", "");
      if (!n.empty() && node.find(n) == std::string::npos) node += (node.empty() ? "" : ",") + n;
    }
    t.Add({std::to_string(m.value("array", Json::object()).value("index", int64_t{0})),
           std::to_string(m.value("id", 0)), m.value("state", ""), std::to_string(m.value("restart_count", 0)),
           node.empty() ? "-" : node, m.value("reason", "")});
  }
  std::cout << t.Render();
  if (a.value("truncated", false)) std::cout << "(more members follow: rota job show a" << a.value("id", 0) << " -o json)\n";
}

// "a12" -> "12"; "" when `id` names no array.
std::string ArrayIdOf(const std::string& id) {
  if (id.size() < 2 || id[0] != 'a' || id.find_first_not_of("0123456789", 1) != std::string::npos) return "";
  return id.substr(1);
}

}  // namespace

int RunRun(const ClientOptions& client, const OutputOptions& out, const RunOptions& o) {
  if (!ValidOutput(out)) return 2;
  Result<Json> spec = o.file.empty() ? SpecFromFlags(o) : LoadSpecFile(o.file);
  if (!spec.ok()) return Usage(spec.status().message());
  if (!o.file.empty() && !o.command.empty()) (*spec)["command"] = o.command;
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (!o.array.empty()) (*spec)["array"] = o.array;
  if (!o.sweep.empty()) {
    if (!o.array.empty()) return Usage("--array and --sweep: give one of them");
    jobs::SweepSpec sweep;
    for (const auto& flag : o.sweep) {
      auto p = jobs::ParseSweepFlag(flag);
      if (!p.ok()) return Usage(p.status().message());
      sweep.params.push_back(std::move(*p));
    }
    if (o.sweep_random > 0) {
      sweep.method = jobs::SweepSpec::Method::kRandom;
      sweep.count = static_cast<uint32_t>(o.sweep_random);
      sweep.seed = static_cast<uint64_t>(o.sweep_seed);
    }
    sweep.max_running = static_cast<uint32_t>(o.max_running);
    sweep.max_trials = static_cast<uint32_t>(o.max_trials);
    sweep.max_failures = static_cast<uint32_t>(o.max_failures);
    if (!o.early_stopping.empty()) {
      auto rule = jobs::ParseEarlyStopFlag(o.early_stopping);
      if (!rule.ok()) return Usage(rule.status().message());
      sweep.early_stopping = std::move(*rule);
    }
    if (Status st = jobs::CheckSweep(sweep); !st.ok()) return Usage(st.message());
    (*spec)["sweep"] = jobs::ToJson(sweep);
  } else if (o.sweep_random > 0 || o.max_trials > 0 || o.max_failures > 0 || o.max_running > 0 ||
             !o.early_stopping.empty()) {
    return Usage("--random, --max-trials, --max-failures, --max-running and --early-stopping go with --sweep");
  }
  auto job = api->Post("/api/v1/jobs", *spec);
  if (!job.ok()) return Fail(job.status());
  if (job->contains("array")) return FollowArray(*api, out, (*job)["array"], o.wait);
  const std::string id = std::to_string(job->value("id", 0));
  if (out.format == "json" && !o.wait) {
    std::cout << job->dump(2) << "\n";
    return 0;
  }
  if (out.format != "json") std::cout << "Submitted job " << id << "\n" << std::flush;
  if (!o.wait) return 0;
  std::string last;
  while (true) {
    auto j = api->Get("/api/v1/jobs/" + id);
    if (!j.ok()) return Fail(j.status());
    const std::string state = j->value("state", "");
    const std::string line = state + " — " + j->value("reason", "");
    if (line != last && out.format != "json") std::cout << "job " << id << ": " << line << "\n" << std::flush;
    last = line;
    if (FinalState(state)) {
      if (out.format == "json") std::cout << j->dump(2) << "\n";
      return state == "succeeded" ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

int RunJobs(const ClientOptions& client, const OutputOptions& out, const JobsListOptions& o) {
  if (!ValidOutput(out)) return 2;
  if (o.limit < 1 || o.limit > 1000) return Usage("--limit must be 1..1000");
  if (o.offset < 0) return Usage("--offset must be 0 or more");
  if ((o.before_given && o.before < 1) || o.before < 0 || o.before > 999'999'999'999'999'999) {
    return Usage("--before must be a job id (1 or more, at most 18 digits)");
  }
  if (o.before > 0 && o.offset > 0) return Usage("--before and --offset: give one of them");
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  std::string q = "/api/v1/jobs?limit=" + std::to_string(o.limit);
  if (o.offset > 0) q += "&offset=" + std::to_string(o.offset);
  if (o.before > 0) q += "&before=" + std::to_string(o.before);
  if (o.mine) q += "&mine=true";
  if (!o.state.empty()) q += "&state=" + o.state;
  // The table shows an array on one line (its members' counts) instead of its
  // members; -o json and --state list every job.
  const bool collapse = out.format != "json" && o.state.empty();
  if (collapse) q += "&members=false";
  auto list = api->Get(q);
  if (!list.ok()) return Fail(list.status());
  const auto& jobs = (*list)["jobs"];
  const bool more = list->value("truncated", false) && !jobs.empty();
  // The next page starts below the last job shown: exact while jobs are submitted.
  const std::string next =
      more ? "rota jobs --before " + std::to_string(jobs.back().value("id", int64_t{0})) +
                 (o.limit != 100 ? " --limit " + std::to_string(o.limit) : "") + (o.mine ? " --mine" : "") +
                 (o.state.empty() ? "" : " --state " + o.state)
           : "";
  if (out.format == "json") {
    std::cout << jobs.dump(2) << "\n";
    if (more) std::cerr << "more jobs follow: " << next << "\n";
    return 0;
  }
  // Arrays newer than the page's last job go with the first page, by creation time.
  Json arrays = Json::array();
  if (collapse && o.offset == 0 && o.before == 0) {
    auto a = api->Get("/api/v1/arrays?limit=" + std::to_string(o.limit) + (o.mine ? "&mine=true" : ""));
    if (!a.ok()) return Fail(a.status());
    for (const auto& x : (*a)["arrays"]) {
      if (!more || x.value("created", "") >= jobs.back().value("created", "")) arrays.push_back(x);
    }
  }
  Table t({"ID", "NAME", "OWNER", "QUEUE", "FRAMEWORK", "STATE", "TASKS", "RESTARTS", "REASON"});
  size_t next_array = 0;
  auto add_arrays_newer_than = [&](const std::string& created) {
    for (; next_array < arrays.size() && arrays[next_array].value("created", "") >= created; ++next_array) {
      const Json& a = arrays[next_array];
      const Json spec = a.value("spec", Json::object());
      const Json counts = a.value("counts", Json::object());
      t.Add({"a" + std::to_string(a.value("id", 0)), a.value("name", ""), a.value("owner", ""),
             spec.value("queue", std::string("default")), spec.value("framework", std::string("generic")),
             Unfinished(counts) > 0 ? "array" : "array (ended)",
             std::to_string(a.value("size", 0)) + " members", "-",
             "[" + a.value("indices", "") + "] " + CountsText(counts)});
    }
  };
  for (const auto& j : (*list)["jobs"]) {
    add_arrays_newer_than(j.value("created", ""));
    std::string reason = j.value("reason", "");
    if (j.contains("estimated_start")) reason += " (start ~" + Str(j, "estimated_start") + ")";
    t.Add({std::to_string(j.value("id", 0)), j.value("name", ""), j.value("owner", ""),
           j.value("queue", "default"), j.value("framework", ""), j.value("state", ""),
           std::to_string(j["tasks"].size()), std::to_string(j.value("restart_count", 0)), reason});
  }
  add_arrays_newer_than("");
  std::cout << t.Render();
  if (more) std::cout << "(more jobs follow: " << next << ")\n";
  return 0;
}

int RunJobCommand(const ClientOptions& client, const OutputOptions& out, const std::string& action,
                  const std::string& id) {
  if (!ValidOutput(out)) return 2;
  if (const std::string array = ArrayIdOf(id); !array.empty()) {
    if (action == "metrics") {
      return Usage("rota job metrics takes a job id (a member's); a sweep's trials: rota sweep show " + id);
    }
    auto api = ApiClient::Create(client);
    if (!api.ok()) return Fail(api.status());
    auto a = action == "cancel" ? api->Post("/api/v1/arrays/" + array + "/cancel", Json::object())
                                : api->Get("/api/v1/arrays/" + array + "?limit=1000");
    if (!a.ok()) return Fail(a.status());
    if (out.format == "json") {
      std::cout << a->dump(2) << "\n";
    } else if (action == "cancel") {
      std::cout << "Cancelling array a" << array << ": " << a->value("cancelled", 0) << " member(s) ("
                << CountsText(a->value("counts", Json::object())) << ")\n";
    } else {
      PrintArray(*a);
    }
    return 0;
  }
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return Usage("job id '" + id + "' must be a number (or aN for array N)");
  }
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (action == "metrics") {
    auto m = api->Get("/api/v1/jobs/" + id + "/metrics");
    if (!m.ok()) return Fail(m.status());
    if (out.format == "json") {
      std::cout << m->dump(2) << "\n";
      return 0;
    }
    Table t({"TIME", "TASK", "NAME", "STEP", "VALUE"});
    for (const auto& p : m->value("metrics", Json::array())) {
      t.Add({p.value("time", ""), p.value("task", ""), p.value("name", ""),
             p.contains("step") ? std::to_string(p.value("step", int64_t{0})) : "-", FormatMetric(p.value("value", 0.0))});
    }
    std::cout << t.Render();
    if (m->value("truncated", false)) std::cout << "(more points follow: -o json has the same first 10000)\n";
    return 0;
  }
  auto j = action == "cancel" ? api->Post("/api/v1/jobs/" + id + "/cancel", Json::object())
                              : api->Get("/api/v1/jobs/" + id);
  if (!j.ok()) return Fail(j.status());
  if (out.format == "json") {
    std::cout << j->dump(2) << "\n";
  } else if (action == "cancel") {
    std::cout << "Cancelling job " << id << " (" << j->value("state", "") << ")\n";
  } else {
    PrintJob(*j);
  }
  return 0;
}

int RunLogs(const ClientOptions& client, const LogsOptions& o) {
  if (o.id.empty() || o.id.find_first_not_of("0123456789") != std::string::npos) {
    return Usage("job id '" + o.id + "' must be a number");
  }
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  LogFollowIo io;
  io.read = [&](uint64_t offset) -> Result<LogChunk> {
    std::string q = "/api/v1/jobs/" + o.id + "/logs?stream=" + (o.use_stderr ? "stderr" : "stdout") +
                    "&offset=" + std::to_string(offset) + "&max_bytes=1048576";
    if (!o.task.empty()) q += "&task=" + o.task;
    auto chunk = api->Get(q);
    if (!chunk.ok()) return chunk.status();
    return LogChunk{.data = chunk->value("data", ""),
                    .offset = chunk->value("offset", uint64_t{0}),
                    .size = chunk->value("size", uint64_t{0})};
  };
  io.job_final = [&] {
    auto job = api->Get("/api/v1/jobs/" + o.id);
    return job.ok() && FinalState(job->value("state", ""));
  };
  io.write = [](const std::string& data) { std::cout << data << std::flush; };
  io.wait = [] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); };
  Status s = FollowLog(io, o.follow);
  return s.ok() ? 0 : Fail(s);
}

}  // namespace rota::cli

namespace rota::cli {
namespace {

// The trials of a sweep: index, job, state, restarts, one column per parameter,
// then the metric's last and best values (members' metrics: their summaries),
// sorted by the best value (trials without it last, by index).
void PrintSweep(const Json& a, std::string metric, bool maximize) {
  std::vector<std::string> names;
  const Json defs = a["sweep"].value("parameters", Json::object());
  for (auto it = defs.begin(); it != defs.end(); ++it) names.push_back(it.key());
  std::vector<Json> members;
  for (const auto& m : a.value("members", Json::array())) members.push_back(m);
  // The early-stopping rule's metric and goal, unless another metric is asked for.
  const Json rule = a["sweep"].value("early_stopping", Json::object());
  if (metric.empty() && rule.contains("metric")) {
    metric = rule.value("metric", "");
    maximize = maximize || rule.value("goal", "") == "max";
  }
  if (metric.empty()) {  // the first name, in name order, that any trial reported
    for (const auto& m : members) {
      const Json ms = m.value("metrics", Json::object());
      if (!ms.empty() && (metric.empty() || ms.begin().key() < metric)) metric = ms.begin().key();
    }
  }
  auto best = [&](const Json& m) -> std::optional<double> {
    const Json ms = m.value("metrics", Json::object());
    auto it = ms.find(metric);
    if (metric.empty() || it == ms.end()) return std::nullopt;
    return it->value(maximize ? "max" : "min", 0.0);
  };
  std::stable_sort(members.begin(), members.end(), [&](const Json& x, const Json& y) {
    const auto bx = best(x), by = best(y);
    if (bx.has_value() != by.has_value()) return bx.has_value();
    return bx && (maximize ? *bx > *by : *bx < *by);
  });
  std::cout << "Sweep a" << a.value("id", 0) << " (" << a.value("name", "") << "): "
            << a.value("size", 0) << " trials, " << CountsText(a.value("counts", Json::object())) << "\n";
  if (!metric.empty()) {
    std::cout << "Sorted by " << metric << ", " << (maximize ? "highest" : "lowest") << " first\n";
  }
  auto upper = [](std::string n) {
    for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return n;
  };
  std::vector<std::string> header{"TRIAL", "JOB", "STATE", "RESTARTS"};
  for (const auto& n : names) header.push_back(upper(n));
  if (!metric.empty()) {
    header.push_back("LAST " + metric);
    header.push_back("BEST " + metric);
    header.push_back("STEP");
  }
  header.push_back("REASON");
  Table t(header);
  for (const auto& m : members) {
    std::string state = m.value("state", "");
    if (state == "succeeded" && m.value("reason", "").rfind(jobs::kStoppedEarly, 0) == 0) state = "stopped early";
    std::vector<std::string> row{std::to_string(m.value("array", Json::object()).value("index", int64_t{0})),
                                 std::to_string(m.value("id", 0)), state,
                                 std::to_string(m.value("restart_count", 0))};
    const Json params = m.value("params", Json::object());
    for (const auto& n : names) row.push_back(params.value(n, "-"));
    if (!metric.empty()) {
      const Json ms = m.value("metrics", Json::object());
      if (auto it = ms.find(metric); it != ms.end()) {
        row.push_back(FormatMetric(it->value("last", 0.0)));
        row.push_back(FormatMetric(*best(m)));
        row.push_back(it->contains("last_step") ? std::to_string(it->value("last_step", int64_t{0})) : "-");
      } else {
        row.insert(row.end(), {"-", "-", "-"});
      }
    }
    row.push_back(m.value("reason", ""));
    t.Add(row);
  }
  std::cout << t.Render();
}

}  // namespace

int RunSweep(const ClientOptions& client, const OutputOptions& out, const SweepOptions& o) {
  if (!ValidOutput(out)) return 2;
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (o.show) {
    std::string id = o.id.size() > 1 && o.id[0] == 'a' ? o.id.substr(1) : o.id;
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
      return Usage("sweep id '" + o.id + "' must be a number (or aN)");
    }
    auto a = api->Get("/api/v1/arrays/" + id + "?limit=1000");
    if (!a.ok()) return Fail(a.status());
    if (!a->contains("sweep")) return Fail(Status::InvalidArgument("array a" + id + " is not a sweep"));
    if (out.format == "json") std::cout << a->dump(2) << "\n";
    else PrintSweep(*a, o.metric, o.maximize);
    return 0;
  }
  if (o.file.empty()) return Usage("give the sweep's file (-f sweep.yaml), or: rota sweep show ID");
  auto spec = LoadSpecFile(o.file);
  if (!spec.ok()) return Usage(spec.status().message());
  if (!spec->is_object() || !spec->contains("sweep")) return Usage(o.file + ": has no sweep section");
  auto job = api->Post("/api/v1/jobs", *spec);
  if (!job.ok()) return Fail(job.status());
  return FollowArray(*api, out, (*job)["array"], o.wait);
}

}  // namespace rota::cli
