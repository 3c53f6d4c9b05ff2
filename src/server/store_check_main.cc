#include "server/store_check_main.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "api/codec.h"
#include "server/store/check.h"
#include "server/store/store_url.h"

namespace rota::server {

int RunStoreCheck(const StoreCheckFlags& flags) {
  std::string url = flags.store;
  if (url.empty()) {
    const char* env = std::getenv("ROTA_STORE");
    url = env == nullptr ? "" : env;
  }
  if (url.empty()) {
    std::cerr << "rota store check: needs --store sqlite:PATH or postgresql://... (or ROTA_STORE)\n";
    return 2;
  }
  auto report = store::CheckStore(url);
  if (!report.ok()) {
    std::cerr << "rota store check: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (flags.json) {
    api::Json problems = api::Json::array();
    for (const auto& p : report->problems) problems.push_back({{"check", p.check}, {"rows", p.rows}});
    api::Json counts = api::Json::object();
    for (const auto& [table, n] : report->counts) counts[table] = n;
    api::Json out{{"store", report->store},
                  {"schema_version", report->schema_version},
                  {"checks", report->checks},
                  {"ok", report->problems.empty()},
                  {"problems", problems},
                  {"counts", counts}};
    std::cout << out.dump(2) << std::endl;
  } else {
    std::printf("%-24s %12s\n", "TABLE", "ROWS");
    for (const auto& [table, n] : report->counts) {
      std::printf("%-24s %12lld\n", table.c_str(), static_cast<long long>(n));
    }
    for (const auto& p : report->problems) {
      std::printf("PROBLEM: %s: %lld rows\n", p.check.c_str(), static_cast<long long>(p.rows));
    }
  }
  std::cerr << "rota store check: " << report->store << " (schema " << report->schema_version << "): "
            << report->checks << " checks, "
            << (report->problems.empty() ? "no problem" : std::to_string(report->problems.size()) + " problems")
            << "\n";
  return report->problems.empty() ? 0 : 3;
}

}  // namespace rota::server
