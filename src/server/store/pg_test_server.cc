// rota_pg_test_server: the ctest fixture around the PostgreSQL store tests.
//   rota_pg_test_server start STATE_FILE   starts a server (pg_test_instance.h) and
//                                          describes it in STATE_FILE, or records why
//                                          there is none (fails only with
//                                          ROTA_REQUIRE_POSTGRES=1)
//   rota_pg_test_server stop STATE_FILE    stops it and removes its directory
//   rota_pg_test_server createdb STATE_FILE creates an empty database on it and prints
//                                          its URL (benchmarks: bench/run_jobs.sh STORE=postgres)
// A server a previous run left behind in STATE_FILE is stopped first.

#include <cstdio>
#include <string>
#include <unistd.h>

#include "server/store/pg_test_instance.h"

using rota::store::testing::PgTestServer;

namespace {

void StopOld(const std::string& state) {
  if (::access(state.c_str(), F_OK) != 0) return;
  (void)PgTestServer::FromState(state, /*owned=*/true);  // destroyed at once: stopped
  ::unlink(state.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc == 3 ? argv[1] : "";
  if (cmd != "start" && cmd != "stop" && cmd != "createdb") {
    std::fprintf(stderr, "usage: %s start|stop|createdb STATE_FILE\n", argv[0]);
    return 2;
  }
  const std::string state = argv[2];
  if (cmd == "createdb") {
    auto server = PgTestServer::FromState(state, /*owned=*/false);
    if (!server.ok()) {
      std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto db = (*server)->CreateDatabase();
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
      return 1;
    }
    std::printf("%s\n", (*server)->Url(*db).c_str());
    return 0;
  }
  StopOld(state);
  if (std::string(argv[1]) == "stop") return 0;
  auto server = PgTestServer::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "no PostgreSQL for the tests: %s\n", server.status().ToString().c_str());
    if (rota::store::testing::PostgresRequired()) return 1;
    rota::Status st = rota::store::testing::WriteUnavailableState(state, server.status().message());
    return st.ok() ? 0 : 1;
  }
  if (rota::Status st = (*server)->WriteState(state); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("PostgreSQL for the tests on 127.0.0.1:%d in %s\n", (*server)->port(),
              (*server)->dir().c_str());
  (*server)->Release();
  return 0;
}
