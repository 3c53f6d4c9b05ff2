// TLS end to end: `rota server` serving HTTPS and WSS with its generated private CA, a real
// agent trusting it by pin, the CLI by CA file, and what a client that trusts something else
// (or speaks plain HTTP) gets. Also the choice of plain HTTP versus TLS by listen address.

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>

#include "common/file_util.h"
#include "common/strings.h"
#include "net/http_client.h"
#include "net/tls.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

class TlsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // The server keeps this CA and key (it reissues the certificate for its own names with
    // the same key), so the test knows the pin before the server starts.
    auto tls = net::EnsureGeneratedTls(dir_.path() + "/data/tls", {"localhost", "127.0.0.1"},
                                       std::time(nullptr));
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    tls_ = *tls;
    net::SetClientTls({.ca_file = "", .pin = tls_.pin});
    server_.SetEnv("ROTA_TLS", "on");
    ASSERT_TRUE(server_.Start().ok()) << server_.child().Log();
  }
  void TearDown() override { net::SetClientTls({}); }

  TempDir dir_;
  ServerProcess server_{dir_.path() + "/data"};
  net::GeneratedTls tls_;
};

TEST_F(TlsE2E, ServerServesHttpsAndSaysHowToTrustIt) {
  EXPECT_EQ(server_.url().rfind("https://127.0.0.1:", 0), 0u) << server_.url();
  auto health = server_.Call("GET", "/healthz");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(health->status, 200);
  const std::string log = server_.child().Log();
  EXPECT_NE(log.find(tls_.pin), std::string::npos) << log;
  EXPECT_NE(log.find(tls_.fingerprint), std::string::npos) << log;
  // Plain HTTP on the TLS port gets nothing.
  net::SetClientTls({});
  std::string plain = "http://127.0.0.1:" + std::to_string(server_.port()) + "/healthz";
  auto r = net::HttpCall("GET", plain, "", {}, 3000);
  EXPECT_FALSE(r.ok() && r->status == 200);
}

TEST_F(TlsE2E, AnAgentTrustingThePinJoinsOverWssAndOneWithAnotherPinNever) {
  AgentProcess good(dir_.path(), SimGpuNode{.name = "gpu-a", .gpus = 2}, server_,
                    {"--server-pin", tls_.pin});
  ASSERT_TRUE(good.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server_, "gpu-a"); }, seconds(20)))
      << good.child().Log();
  // An impostor server's pin (another key): the agent refuses to talk, so it never sends
  // the join token.
  auto other = net::EnsureGeneratedTls(dir_.path() + "/other", {"127.0.0.1"}, std::time(nullptr));
  ASSERT_TRUE(other.ok());
  AgentProcess wrong(dir_.path(), SimGpuNode{.name = "gpu-b", .gpus = 2}, server_,
                     {"--server-pin", other->pin});
  ASSERT_TRUE(wrong.Start().ok());
  EXPECT_TRUE(WaitFor([&] { return wrong.child().Log().find("not the pinned") != std::string::npos; },
                      seconds(15)))
      << wrong.child().Log();
  EXPECT_TRUE(NodeJson(server_, "gpu-b").is_null());
}

TEST_F(TlsE2E, TheCliTrustsTheServerByCaFileOrPinAndRefusesOtherwise) {
  std::map<std::string, std::string> env = server_.CliEnv();
  env["ROTA_CA_FILE"] = tls_.ca_file;
  CliResult ok = RunCli({"whoami"}, env);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("admin"), std::string::npos) << ok.out;

  env.erase("ROTA_CA_FILE");
  CliResult pinned = RunCli({"whoami", "--server-pin", tls_.pin}, env);
  EXPECT_EQ(pinned.exit_code, 0) << pinned.out << pinned.err;

  CliResult untrusted = RunCli({"whoami"}, env);  // the system's CAs do not know rota's CA
  EXPECT_NE(untrusted.exit_code, 0);
  EXPECT_NE(untrusted.err.find("cannot reach the rota server"), std::string::npos) << untrusted.err;

  CliResult bad_pin = RunCli({"whoami", "--server-pin", "sha256//nope"}, env);
  EXPECT_NE(bad_pin.exit_code, 0);
  EXPECT_NE(bad_pin.err.find("sha256//nope"), std::string::npos) << bad_pin.err;
}

TEST(TlsChoiceE2E, TlsAutoServesHttpsOnANetworkAddressAndOffWarns) {
  TempDir dir;
  {
    ServerProcess server(dir.path() + "/auto");
    server.SetListenHost("0.0.0.0");
    // The CA is generated at start: trust by the server's own CA file once it exists.
    net::SetClientTls({.ca_file = dir.path() + "/auto/tls/ca.pem", .pin = ""});
    ASSERT_TRUE(server.Start().ok()) << server.child().Log();
    EXPECT_EQ(server.url().rfind("https://", 0), 0u) << server.url();
    EXPECT_TRUE(server.Call("GET", "/healthz").ok());
    EXPECT_TRUE(ReadFile(dir.path() + "/auto/tls/server.key").ok());
  }
  net::SetClientTls({});
  {
    ServerProcess server(dir.path() + "/off");
    server.SetListenHost("0.0.0.0");
    server.SetEnv("ROTA_TLS", "off");
    ASSERT_TRUE(server.Start().ok()) << server.child().Log();
    EXPECT_EQ(server.url().rfind("http://", 0), 0u) << server.url();
    EXPECT_NE(server.child().Log().find("clear text"), std::string::npos) << server.child().Log();
  }
  {
    ServerProcess server(dir.path() + "/loopback");
    ASSERT_TRUE(server.Start().ok()) << server.child().Log();
    EXPECT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0u) << server.url();
    EXPECT_EQ(server.child().Log().find("clear text"), std::string::npos) << server.child().Log();
  }
}

}  // namespace
}  // namespace rota::testing
