#pragma once
// The store tests run on both backends (tests only): a test's store lives in a
// temporary data dir (SQLite) or in a database of its own on the test
// PostgreSQL server (pg_test_instance.h). Parameterize a fixture over Backend:
//
//   class FooTest : public ::testing::TestWithParam<Backend> { ... TestStoreLocation loc_{GetParam()}; };
//   void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(loc_); }
//   INSTANTIATE_TEST_SUITE_P(, FooTest, kBackends, BackendParamName);
//
// Tests are named Foo.Bar/sqlite and Foo.Bar/postgres.

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "server/store/options.h"
#include "server/store/pg_test_instance.h"
#include "server/store/sql.h"
#include "server/store/store.h"

namespace rota::store::testing {

enum class Backend { kSqlite, kPostgres };

inline const char* BackendName(Backend b) { return b == Backend::kSqlite ? "sqlite" : "postgres"; }

// For INSTANTIATE_TEST_SUITE_P: a ::testing::TestParamInfo<Backend>.
template <typename Info>
std::string BackendParamName(const Info& info) {
  return BackendName(info.param);
}

// Where one test's store lives.
class TestStoreLocation {
 public:
  explicit TestStoreLocation(Backend b);
  // Drops the test's PostgreSQL database; removes the temporary directory.
  ~TestStoreLocation();
  TestStoreLocation(const TestStoreLocation&) = delete;
  TestStoreLocation& operator=(const TestStoreLocation&) = delete;

  Backend backend() const { return backend_; }
  // Empty when the store can be opened; else why not (no PostgreSQL here).
  const std::string& unavailable() const { return unavailable_; }
  // A temporary directory (the SQLite data dir; scratch space on PostgreSQL).
  const std::string& dir() const { return dir_; }
  // sqlite:DIR/rota.db or postgresql://rota@127.0.0.1:PORT/t_...
  const std::string& url() const { return url_; }

  // Store::Open(dir) on SQLite (exactly as the server does), Store::OpenUrl on PostgreSQL.
  Result<std::unique_ptr<Store>> Open(const StoreOptions& options, Clock& clock) const;
  // A connection of its own to the store's database.
  Result<Db> Connect() const;

 private:
  Backend backend_;
  std::string dir_;
  std::string url_;
  std::string database_;  // PostgreSQL
  std::string unavailable_;
};

}  // namespace rota::store::testing

// In a fixture's SetUp (or a test): skips when the location's backend is not
// available, or fails when ROTA_REQUIRE_POSTGRES=1.
#define ROTA_SKIP_WITHOUT_BACKEND(loc)                                                   \
  do {                                                                                   \
    if (!(loc).unavailable().empty()) {                                                  \
      if (::rota::store::testing::PostgresRequired()) {                                  \
        FAIL() << "ROTA_REQUIRE_POSTGRES=1 but: " << (loc).unavailable();                \
      }                                                                                  \
      GTEST_SKIP() << (loc).unavailable();                                               \
    }                                                                                    \
  } while (0)
