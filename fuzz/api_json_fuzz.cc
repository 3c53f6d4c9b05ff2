// What the HTTP handlers read from a request: JSON bodies (api::ParseStrictJson, then the
// decoders of the job, reservation, policy and power-policy routes) and query strings
// (net::ParseQuery, then server/request_params.h). Every input goes through all of them.
// Beyond "never crashes":
//  - a body a decoder accepts is stored as ToJson(...).dump() and read back after a restart
//    (jobs_rows.cc, store/reservations.cc, store/power.cc): that must succeed and give the
//    same value, or an accepted job or policy makes the server refuse to load its store.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/codec.h"
#include "jobs/spec.h"
#include "net/http_types.h"
#include "net/url.h"
#include "power/policy.h"
#include "reserve/policy.h"
#include "reserve/reservation.h"
#include "server/request_params.h"

namespace {

using rota::api::Json;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "api_json_fuzz: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

// As the store keeps a value: dumped (strict UTF-8: dump throws on anything else), parsed
// back with ParseJson, `name` put back beside the spec where the store keeps it apart.
Json Stored(const Json& spec, const std::string* name) {
  auto back = rota::api::ParseJson(spec.dump());
  if (!back.ok()) Fail("a stored value does not parse back", spec.dump(), back.status().ToString());
  if (name != nullptr) (*back)["name"] = *name;
  return *back;
}

void Bodies(const std::string& text) {
  auto body = rota::api::ParseStrictJson(text);
  if (!body.ok()) return;
  // A value the server accepted is written to logs, answers and rows: dump must not throw.
  (void)body->dump();

  if (auto spec = rota::jobs::JobSpecFromJson(*body); spec.ok()) {
    const Json stored = rota::jobs::ToJson(*spec);
    auto back = rota::jobs::JobSpecFromJson(Stored(stored, nullptr));
    if (!back.ok()) Fail("a stored job spec does not load", stored.dump(), back.status().ToString());
    if (!(*back == *spec)) Fail("a stored job spec loads differently", stored.dump(), rota::jobs::ToJson(*back).dump());
  }

  if (auto p = rota::reserve::PolicyFromJson(*body); p.ok()) {
    const Json stored = rota::reserve::PolicySpecJson(*p);
    auto back = rota::reserve::PolicyFromJson(Stored(stored, &p->name));
    if (!back.ok()) Fail("a stored policy does not load", stored.dump(), back.status().ToString());
    const std::string again = rota::reserve::PolicySpecJson(*back).dump();
    if (again != stored.dump()) Fail("a stored policy loads differently", stored.dump(), again);
    (void)rota::reserve::ToJson(*p).dump();
  }

  if (auto p = rota::power::PowerPolicyFromJson(*body); p.ok()) {
    const Json stored = rota::power::PowerPolicySpecJson(*p);
    auto back = rota::power::PowerPolicyFromJson(Stored(stored, &p->name));
    if (!back.ok()) Fail("a stored power policy does not load", stored.dump(), back.status().ToString());
    const std::string again = rota::power::PowerPolicySpecJson(*back).dump();
    if (again != stored.dump()) Fail("a stored power policy loads differently", stored.dump(), again);
    (void)rota::power::ToJson(*p).dump();
  }

  if (auto r = rota::reserve::CreateRequestFromJson(*body); r.ok()) (void)r->enforcement.dump();
  if (auto r = rota::reserve::PatchFromJson(*body); r.ok() && r->enforcement) (void)r->enforcement->dump();
  if (auto n = rota::api::NodeInfoFromJson(*body); n.ok()) (void)rota::api::ToJson(*n).dump();
}

void Query(const std::string& text) {
  auto query = rota::net::ParseQuery(text);
  if (!query.ok()) return;
  rota::net::HttpRequest req;
  req.query = *query;
  (void)rota::server::UintParam(req, "limit", 100, 10'000);
  (void)rota::server::TimeParam(req, "from", 0);
  (void)rota::server::OnlyQueryParams(req, {"limit", "from", "to"});
  for (const auto& [key, value] : req.query) (void)rota::server::ParsePositiveId(key, value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Bodies(text);
  Query(text);
  (void)rota::net::PercentDecode(text, true);
  return 0;
}
