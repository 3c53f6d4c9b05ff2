#pragma once
// A PostgreSQL server for tests (tests only): Debian's server programs run from
// a temporary directory on a free loopback port, nothing installed or configured
// by hand. As root the server runs as the `postgres` user (initdb refuses root).
//
//   initdb -D DIR/data -A trust -U rota -E UTF8 --locale=C
//   pg_ctl -D DIR/data -o "-p PORT -k DIR -c listen_addresses=127.0.0.1 -c fsync=off ..." -w start
//   ... one database per test: CREATE DATABASE t_<random> ...
//   pg_ctl -D DIR/data -m immediate stop; rm -rf DIR
//
// DIR is /tmp/rota_pg_XXXXXX (scripts/check-leftovers.sh reports processes
// left running there). Under ctest one server serves the whole run: the
// fixture test rota_postgres_start (pg_test_server.cc) starts it and writes a
// state file that ROTA_TEST_PG_STATE names, rota_postgres_stop stops it. A test
// binary run by hand starts a server of its own on first use and stops it at exit.
// When the programs are missing the tests skip, unless ROTA_REQUIRE_POSTGRES=1.

#include <memory>
#include <string>

#include "common/status.h"

namespace rota::store::testing {

class PgTestServer {
 public:
  // initdb and start a new server (about a second). Unavailable, saying why,
  // when PostgreSQL's programs are not installed or the server does not start.
  static Result<std::unique_ptr<PgTestServer>> Start();
  // The server a state file describes (written by WriteState); `owned`: stop it
  // when this object goes. Unavailable with the reason it records when the
  // fixture could not start one.
  static Result<std::unique_ptr<PgTestServer>> FromState(const std::string& state_file, bool owned);
  // Stops the server (immediate) and removes its directory, when owned.
  ~PgTestServer();
  PgTestServer(const PgTestServer&) = delete;
  PgTestServer& operator=(const PgTestServer&) = delete;

  Status WriteState(const std::string& state_file) const;
  // Leaves the server running when this object goes (the fixture's start).
  void Release() { owned_ = false; }

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // postgresql://rota@127.0.0.1:PORT/DATABASE
  std::string Url(const std::string& database) const;
  // A new empty database t_<random>; returns its name.
  Result<std::string> CreateDatabase();
  // Drops it, closing whatever connections it still has.
  Status DropDatabase(const std::string& name);

 private:
  PgTestServer(std::string dir, int port, bool owned) : dir_(std::move(dir)), port_(port), owned_(owned) {}
  std::string dir_;
  int port_;
  bool owned_;
};

// Writes "unavailable=<why>" into a state file.
Status WriteUnavailableState(const std::string& state_file, const std::string& why);

// The server this process's tests use (see above); Unavailable with the reason
// when there is none. Thread-safe; the server lives until the process exits.
Result<PgTestServer*> SharedPgServer();

// ROTA_REQUIRE_POSTGRES=1: a missing server fails the tests instead of skipping them.
bool PostgresRequired();

}  // namespace rota::store::testing
