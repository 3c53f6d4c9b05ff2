// rota violations [ID]: the enforcement audit log.

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "net/url.h"

namespace rota::cli {
namespace {


std::string Text(const api::Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>().empty() ? "-" : it->get<std::string>();
  return it->dump();
}

std::string Pids(const api::Json& list) {
  std::vector<std::string> out;
  for (const auto& p : list) out.push_back(std::to_string(p.value("pid", 0)));
  return out.empty() ? "-" : Join(out, ",");
}

std::string Offender(const api::Json& v) {
  std::string who = Text(v, "unix_user");
  if (who == "-") who = "uid " + Text(v, "uid");
  if (v.contains("user") && v["user"].is_string() && v["user"] != v["unix_user"]) {
    who += " (" + v["user"].get<std::string>() + ")";
  }
  return who;
}

std::string Reservation(const api::Json& v) {
  if (!v.contains("reservation_id") || v["reservation_id"].is_null())
    return "none (" + Text(v, "mode") + ")";
  return std::to_string(v["reservation_id"].get<int64_t>()) + " (" + Text(v, "reservation_owner") +
         ")";
}

int ShowOne(const ApiClient& client, const OutputOptions& out, const std::string& id) {
  auto body = client.Get("/api/v1/violations/" + net::PercentEncode(id));
  if (!body.ok()) return Fail(body.status());
  const api::Json& v = *body;
  if (out.format == "json") {
    std::cout << v.dump(2) << "\n";
    return 0;
  }
  std::cout << "Violation " << Text(v, "id") << (v.value("dry_run", false) ? " (dry run)" : "")
            << "\n"
            << "  State:       " << Text(v, "state")
            << (v.value("state", "") == "resolved" ? ": " + Text(v, "resolution") : "") << "\n"
            << "  Where:       " << Text(v, "node") << " GPU " << Text(v, "gpu") << " ("
            << Text(v, "gpu_uuid") << ")\n"
            << "  Offender:    " << Offender(v) << ", uid " << Text(v, "uid") << "\n"
            << "  Reservation: " << Reservation(v) << "\n"
            << "  Opened:      " << Text(v, "opened") << "\n"
            << "  Closed:      " << Text(v, "closed") << "\n"
            << "  Processes:\n";
  for (const auto& p : v["processes"]) {
    std::cout << "    " << p.value("pid", 0) << "  " << p.value("command", "") << "\n";
  }
  Table t({"TIME", "ACTION", "OUTCOME", "PIDS", "DETAIL"});
  for (const auto& e : v["events"]) {
    std::vector<std::string> pids;
    for (const auto& p : e["pids"]) {
      std::string s = std::to_string(p.value("pid", 0));
      if (p.contains("outcome")) s += ":" + p["outcome"].get<std::string>();
      pids.push_back(s);
    }
    t.Add({Text(e, "time"), Text(e, "action"), Text(e, "outcome"),
           pids.empty() ? "-" : Join(pids, ","), Text(e, "detail")});
  }
  std::cout << "\n" << t.Render();
  return 0;
}

}  // namespace

int RunViolations(const ClientOptions& options, const OutputOptions& out,
                  const ViolationsOptions& o) {
  if (!ValidOutput(out)) return 2;
  if (o.open && o.resolved) {
    std::cerr << "rota: --open and --resolved exclude each other\n";
    return 2;
  }
  if (o.limit < 0 || o.limit > 1000) {
    std::cerr << "rota: --limit must be in 1..1000\n";
    return 2;
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  if (!o.id.empty()) return ShowOne(*client, out, o.id);

  const int64_t now = RealClock::Get().NowMs();
  std::vector<std::string> params;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) params.push_back(std::string(key) + "=" + net::PercentEncode(value));
  };
  add("node", o.node);
  add("user", o.user);
  add("state", o.open ? "open" : o.resolved ? "resolved" : "");
  for (const auto& [flag, key, text] :
       {std::tuple{"--from", "from", o.from}, std::tuple{"--to", "to", o.to}}) {
    if (text.empty()) continue;
    auto t = CliTime(flag, text, now);
    if (!t.ok()) {
      std::cerr << "rota: " << t.status().message() << "\n";
      return 2;
    }
    add(key, *t);
  }
  if (o.limit > 0) add("limit", std::to_string(o.limit));
  std::string path = "/api/v1/violations";
  if (!params.empty()) path += "?" + Join(params, "&");
  auto body = client->Get(path);
  if (!body.ok()) return Fail(body.status());
  const api::Json& rows = (*body)["violations"];
  if (out.format == "json") {
    std::cout << rows.dump(2) << "\n";
    return 0;
  }
  Table t(
      {"ID", "STATE", "NODE", "GPU", "OFFENDER", "PIDS", "RESERVATION", "OPENED", "LAST ACTION"});
  for (const auto& v : rows) {
    std::string state = Text(v, "state");
    if (v.value("dry_run", false)) state += " (dry run)";
    std::string last = v.value("state", "") == "resolved" ? "resolved: " + Text(v, "resolution")
                                                          : Text(v, "last_action");
    t.Add({Text(v, "id"), state, Text(v, "node"), Text(v, "gpu"), Offender(v), Pids(v["processes"]),
           Reservation(v), Age(v["opened"], now), last});
  }
  std::cout << t.Render();
  if (body->contains("next_offset")) {
    std::cout << "(more: narrow with --node/--user/--from/--to or raise --limit)\n";
  }
  return 0;
}

}  // namespace rota::cli
