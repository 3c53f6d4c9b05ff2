#include "server/config.h"

#include <gtest/gtest.h>

#include "common/file_util.h"

namespace rota::server {
namespace {

TEST(ConfigTest, FileThenEnvOverride) {
  char tmpl[] = "/tmp/rota_config_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/server.yaml";
  ASSERT_TRUE(WriteFileAtomic(path, "listen: 0.0.0.0:9000\ndata_dir: /srv/rota\nraw_retention: 12h\n").ok());
  ServerConfig c;
  ASSERT_TRUE(LoadConfigFile(&c, path).ok());
  EXPECT_EQ(c.listen_address, "0.0.0.0");
  EXPECT_EQ(c.listen_port, 9000);
  EXPECT_EQ(c.raw_retention_ms, 12 * 3600 * 1000);
  ASSERT_TRUE(ApplyEnv(&c, {{"ROTA_LISTEN", "127.0.0.1:7000"}, {"UNRELATED", "x"}}).ok());
  EXPECT_EQ(c.listen_port, 7000);
  EXPECT_EQ(c.data_dir, "/srv/rota");
  std::string yaml = ConfigToYaml(c);
  EXPECT_NE(yaml.find("listen: 127.0.0.1:7000"), std::string::npos);
  EXPECT_NE(yaml.find("raw_retention: 12h"), std::string::npos);
}

TEST(ConfigTest, SecretsAreHiddenInPrintedConfig) {
  ServerConfig c;
  ASSERT_TRUE(ApplySetting(&c, "join_token", "0123456789abcdef0123", "test").ok());
  EXPECT_EQ(ConfigToYaml(c).find("0123456789abcdef0123"), std::string::npos);
  EXPECT_NE(ConfigToYaml(c, true).find("0123456789abcdef0123"), std::string::npos);
}

// The store URL (issue 42): from the environment, checked when set, printed without its
// password. Bad inputs: another scheme, a port that is not a number.
TEST(ConfigTest, StoreUrlIsCheckedAndPrintedWithoutPassword) {
  ServerConfig c;
  EXPECT_EQ(c.store, "");
  ASSERT_TRUE(ApplyEnv(&c, {{"ROTA_STORE", "postgresql://rota:pa55word@db1,db2/rota"}}).ok());
  EXPECT_EQ(c.store, "postgresql://rota:pa55word@db1,db2/rota");
  EXPECT_EQ(ConfigToYaml(c).find("pa55word"), std::string::npos) << ConfigToYaml(c);
  EXPECT_NE(ConfigToYaml(c).find("store: postgresql://rota:***@db1,db2/rota"), std::string::npos)
      << ConfigToYaml(c);
  ASSERT_TRUE(ApplySetting(&c, "store", "sqlite:/srv/rota/rota.db", "flag").ok());
  EXPECT_EQ(c.store, "sqlite:/srv/rota/rota.db");
  for (const char* bad : {"mysql://u@h/db", "postgresql://u:pa55word@[::1/db"}) {
    Status st = ApplySetting(&c, "store", bad, "flag");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("store (flag)"), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find("pa55word"), std::string::npos) << st.message();
  }
}

// Bad inputs tried: unknown key, port out of range, missing port, junk durations,
// too-short token, bad log level, non-map YAML, nested values, invalid YAML.
TEST(ConfigTest, BadSettingsAreRejectedNamingKeyAndSource) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"nope", "1"},          {"listen", "127.0.0.1:70000"}, {"listen", "localhost"},
      {"listen", ":80"},      {"raw_retention", "forever"},  {"raw_retention", "10s"},
      {"join_token", "short"}, {"log_level", "loud"},        {"http_threads", "0"},
      {"missed_heartbeats", "-1"}, {"session_ttl", "500ms"},     {"session_ttl", "400d"},
      {"accounting_flush", "10ms"}, {"accounting_flush", "2h"},  {"price_per_kwh", "-1"},
      {"price_per_kwh", "cheap"},  {"co2_g_per_kwh", "1e9"},     {"price_per_gpu_hour", "nan"},
      {"currency", "euro"},        {"area_labels", "rack,bad label"},
      {"max_connections", "8"},    {"max_connections", "lots"},
      {"fairshare_half_life", "30s"}, {"fairshare_half_life", "400d"},
      {"leader_lease_ttl", "500ms"}, {"leader_lease_ttl", "2m"},
  };
  for (const auto& [key, value] : bad) {
    ServerConfig c;
    Status st = ApplySetting(&c, key, value, "env X");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_NE(st.message().find("env X"), std::string::npos) << st.message();
  }
  char tmpl[] = "/tmp/rota_config_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  for (const char* text : {"- a\n- b\n", "listen: {a: 1}\n", "listen: [\n"}) {
    ASSERT_TRUE(WriteFileAtomic(dir + "/c.yaml", text).ok());
    ServerConfig c;
    EXPECT_EQ(LoadConfigFile(&c, dir + "/c.yaml").code(), StatusCode::kInvalidArgument) << text;
  }
  ServerConfig c;
  EXPECT_EQ(LoadConfigFile(&c, dir + "/missing.yaml").code(), StatusCode::kNotFound);
  ASSERT_TRUE(ApplySetting(&c, "fairshare_half_life", "1m", "env X").ok());
  EXPECT_EQ(c.fairshare_half_life_ms, 60'000);
  ASSERT_TRUE(ApplySetting(&c, "fairshare_half_life", "0s", "env X").ok());  // never decays
  EXPECT_EQ(c.fairshare_half_life_ms, 0);
}

TEST(ConfigTest, AccountingSettings) {
  ServerConfig c;
  ASSERT_TRUE(ApplyEnv(&c, {{"ROTA_ACCOUNTING_FLUSH", "5s"}, {"ROTA_AREA_LABELS", "room, row"},
                            {"ROTA_PRICE_PER_KWH", "0.25"}, {"ROTA_CO2_G_PER_KWH", "380"},
                            {"ROTA_CURRENCY", "USD"}})
                  .ok());
  EXPECT_EQ(c.accounting_flush_ms, 5000);
  EXPECT_EQ(c.area_labels, (std::vector<std::string>{"room", "row"}));
  EXPECT_DOUBLE_EQ(c.prices.price_per_kwh, 0.25);
  EXPECT_DOUBLE_EQ(c.prices.co2_g_per_kwh, 380);
  EXPECT_EQ(c.prices.currency, "USD");
  const std::string yaml = ConfigToYaml(c);
  EXPECT_NE(yaml.find("area_labels: room,row"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("price_per_kwh: 0.25"), std::string::npos) << yaml;
}

TEST(ConfigTest, LeaderLeaseTtl) {
  ServerConfig c;
  EXPECT_EQ(c.leader_lease_ttl_ms, 4'000);
  ASSERT_TRUE(ApplyEnv(&c, {{"ROTA_LEADER_LEASE_TTL", "1500ms"}}).ok());
  EXPECT_EQ(c.leader_lease_ttl_ms, 1'500);
  EXPECT_NE(ConfigToYaml(c).find("leader_lease_ttl: 1500ms"), std::string::npos) << ConfigToYaml(c);
}

TEST(ConfigTest, SessionTtlGoesDownToOneSecond) {
  ServerConfig c;
  ASSERT_TRUE(ApplySetting(&c, "session_ttl", "1s", "env X").ok());
  EXPECT_EQ(c.session_ttl_ms, 1000);
}

}  // namespace
}  // namespace rota::server
