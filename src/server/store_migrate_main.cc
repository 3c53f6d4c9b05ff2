#include "server/store_migrate_main.h"

#include <cstdio>
#include <iostream>

#include "common/clock.h"
#include "server/store/migrate.h"
#include "server/store/store_url.h"

namespace rota::server {

int RunStoreMigrate(const StoreMigrateFlags& flags) {
  if (flags.from.empty() || flags.to.empty()) {
    std::cerr << "rota store migrate: needs --from sqlite:PATH and --to postgresql://...\n";
    return 2;
  }
  store::MigrateOptions o;
  o.from = flags.from;
  o.to = flags.to;
  o.overwrite = flags.overwrite;
  std::cerr << "rota store migrate: " << store::RedactStoreUrl(flags.from) << " -> "
            << store::RedactStoreUrl(flags.to) << "\n";
  auto counts = store::MigrateStore(o, RealClock::Get().NowMs());
  if (!counts.ok()) {
    std::cerr << "rota store migrate: " << counts.status().message() << "\n";
    return counts.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  int64_t total = 0;
  std::printf("%-24s %12s\n", "TABLE", "ROWS");
  for (const store::TableCount& t : *counts) {
    std::printf("%-24s %12lld\n", t.table.c_str(), static_cast<long long>(t.rows));
    total += t.rows;
  }
  std::printf("%-24s %12lld\n", "(all tables)", static_cast<long long>(total));
  std::cerr << "rota store migrate: " << counts->size() << " tables, " << total
            << " rows copied; the counts match on both sides. Start rota server with --store "
            << store::RedactStoreUrl(flags.to) << "\n";
  return 0;
}

}  // namespace rota::server
