#include "server/store/store_url.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/store.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

TEST(StoreUrlTest, SqliteUrlsNameTheDatabaseFile) {
  auto u = ParseStoreUrl("sqlite:/var/lib/rota/rota.db");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->dialect, Dialect::kSqlite);
  EXPECT_EQ(u->sqlite_path, "/var/lib/rota/rota.db");
  EXPECT_EQ(u->display, "sqlite:/var/lib/rota/rota.db");
  u = ParseStoreUrl("sqlite:///srv/x.db");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->sqlite_path, "/srv/x.db");
  u = ParseStoreUrl("sqlite:rel/x.db");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->sqlite_path, "rel/x.db");
}

TEST(StoreUrlTest, PostgresUrlsKeepTheirTextAndShowNoPassword) {
  auto u = ParseStoreUrl(
      "postgresql://rota:pa55@db1,db2:5433/rota?target_session_attrs=read-write");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->dialect, Dialect::kPostgres);
  EXPECT_EQ(u->pg_url, "postgresql://rota:pa55@db1,db2:5433/rota?target_session_attrs=read-write");
  EXPECT_EQ(u->hosts, "db1,db2:5433");
  EXPECT_EQ(u->display, "postgresql://rota@db1,db2:5433/rota");
  u = ParseStoreUrl("postgres://db:5432,db2:5444/x?password=pa55");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->hosts, "db:5432,db2:5444");
  EXPECT_EQ(u->display.find("pa55"), std::string::npos) << u->display;
  u = ParseStoreUrl("postgresql:///rota?host=/var/run/postgresql");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->display, "postgresql:///var/run/postgresql/rota");
}

TEST(StoreUrlTest, RedactHidesPasswords) {
  EXPECT_EQ(RedactStoreUrl("postgresql://u:secret@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(RedactStoreUrl("postgresql://u@h/db?password=secret&x=1"),
            "postgresql://u@h/db?password=***&x=1");
  EXPECT_EQ(RedactStoreUrl("postgresql://h/db"), "postgresql://h/db");
  EXPECT_EQ(RedactStoreUrl("postgresql://u:p@ss@h/db"), "postgresql://u:***@h/db");
}

// Bad inputs: no scheme, another database, an empty path, a port that is not a
// number, an unknown parameter; none shows the password.
TEST(StoreUrlTest, BadUrlsAreInvalidArgumentsSayingWhy) {
  struct Case {
    const char* url;
    const char* says;
  };
  const Case cases[] = {
      {"/var/lib/rota/rota.db", "use sqlite:PATH or postgresql://"},
      {"mysql://u:secret@h/db", "use sqlite:PATH or postgresql://"},
      {"sqlite:", "name the database file"},
      {"sqlite:/var/lib/rota/", "name the database file"},
      {"postgresql://u:secret@[::1/db", "store URL postgresql://u:***@[::1/db: "},
      {"postgresql://u:secret@h/db?nosuch=1", "nosuch"},
  };
  for (const Case& c : cases) {
    auto u = ParseStoreUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << c.url;
    EXPECT_NE(u.status().message().find(c.says), std::string::npos) << u.status().message();
    EXPECT_EQ(u.status().message().find("secret"), std::string::npos) << u.status().message();
  }
}

// Bad inputs: a server that does not answer; a bad URL. Store::OpenUrl names
// the host, never the password.
TEST(StoreUrlTest, OpenUrlOfAnUnreachableServerIsUnavailableNamingTheHost) {
  FakeClock clock(1'700'000'000'000);
  auto s = Store::OpenUrl("postgresql://rota:s3cret@127.0.0.1:1/rota", {}, clock);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("postgresql://rota@127.0.0.1:1/rota"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("Connection refused"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(s.status().message().find("s3cret"), std::string::npos) << s.status().message();
  s = Store::OpenUrl("sqlite3:/tmp/x", {}, clock);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

TEST(StoreUrlTest, OpenUrlOfASqliteFileIsTheDataDirStore) {
  testing::TempDir dir;
  FakeClock clock(1'700'000'000'000);
  auto s = Store::OpenUrl("sqlite:" + dir.path() + "/d/rota.db", {}, clock);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->path(), dir.path() + "/d/rota.db");
  EXPECT_EQ((*s)->dialect(), Dialect::kSqlite);
  // Its directory is the data dir: locked like Store::Open's.
  auto again = Store::Open(dir.path() + "/d", {}, clock);
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rota::store
