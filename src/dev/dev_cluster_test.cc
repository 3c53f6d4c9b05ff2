#include "dev/dev_cluster.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace rota::dev {
namespace {

TEST(DevNodesTest, DefaultThenEightGpuNodesWithUniqueNames) {
  auto three = DevNodes(3);
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[0].name, "gpu-a");
  EXPECT_EQ((*three)[2].gpus, 2);

  auto one = DevNodes(1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_TRUE((*one)[0].default_node);

  auto hundred = DevNodes(100);
  ASSERT_TRUE(hundred.ok());
  ASSERT_EQ(hundred->size(), 100u);
  EXPECT_EQ((*hundred)[3].name, "gpu-004");
  EXPECT_EQ((*hundred)[99].name, "gpu-100");
  std::set<std::string> names;
  int gpus = 0, defaults = 0;
  for (const auto& n : *hundred) {
    names.insert(n.name);
    gpus += n.gpus;
    defaults += n.default_node;
  }
  EXPECT_EQ(names.size(), 100u);
  EXPECT_EQ(gpus, 8 + 4 + 2 + 97 * 8);
  EXPECT_EQ(defaults, 1);  // only one node claims hand-started processes
}

TEST(DevNodesTest, RefusesCountsOutOfRange) {
  for (int bad : {0, -1, kMaxDevNodes + 1}) {
    auto r = DevNodes(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--nodes"), std::string::npos);
  }
}

// rota dev reads the same settings as rota server: a config file, then ROTA_* variables,
// then its flags; its own demo defaults sit below all three.
TEST(DevServerConfigTest, MergesDemoDefaultsFileEnvAndFlags) {
  char tmpl[] = "/tmp/rota-dev-config-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::ofstream f(dir + "/server.yaml");
    f << "smtp_url: smtp://127.0.0.1:2525\ngrace_term: 2m\nlisten: 127.0.0.1:9000\n";
  }
  DevOptions options;
  auto demo = DevServerConfig(options, dir, {});
  ASSERT_TRUE(demo.ok()) << demo.status().ToString();
  EXPECT_EQ(demo->listen_port, 8080);
  EXPECT_EQ(demo->grace_term_ms, 45'000);  // the demo's short ladder
  EXPECT_EQ(demo->data_dir, dir + "/server");
  EXPECT_TRUE(demo->smtp_url.empty());

  options.config_file = dir + "/server.yaml";
  auto merged = DevServerConfig(options, dir,
                                {{"ROTA_GRACE_KILL", "5s"}, {"ROTA_LISTEN", "127.0.0.1:9100"},
                                 {"ROTA_DATA_DIR", "/elsewhere"}});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->smtp_url, "smtp://127.0.0.1:2525");  // file
  EXPECT_EQ(merged->grace_term_ms, 120'000);              // file over the demo's
  EXPECT_EQ(merged->grace_kill_ms, 5'000);                // env
  EXPECT_EQ(merged->listen_port, 9100);                   // env over file
  EXPECT_EQ(merged->grace_email_ms, 20'000);              // the demo's, untouched
  EXPECT_EQ(merged->data_dir, dir + "/server");           // always the dev data dir

  options.listen = "127.0.0.1:0";
  options.log_level = "debug";
  auto flagged = DevServerConfig(options, dir, {{"ROTA_LISTEN", "127.0.0.1:9100"}});
  ASSERT_TRUE(flagged.ok());
  EXPECT_EQ(flagged->listen_port, 0);  // the flag wins
  EXPECT_EQ(flagged->log_level, "debug");

  auto bad = DevServerConfig(options, dir, {{"ROTA_GRACE_TERM", "soon"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ROTA_GRACE_TERM"), std::string::npos)
      << bad.status().ToString();
  options.config_file = dir + "/missing.yaml";
  EXPECT_FALSE(DevServerConfig(options, dir, {}).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rota::dev
