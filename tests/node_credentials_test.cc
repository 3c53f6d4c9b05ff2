// Per-node credentials end to end: a real agent enrols with the join token on its
// first connection and presents its own credential from then on; the join token
// cannot take an enrolled node's name, one node's credential cannot register as
// another, and a revoked credential is refused until the agent enrols again.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <variant>

#include "api/protocol.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "net/ws_client.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

std::string WsUrl(const ServerProcess& s) {
  return "ws://127.0.0.1:" + std::to_string(s.port()) + "/api/v1/agent/connect";
}

// Connects with `bearer`, registers `name` and returns the server's first answer
// (registered or error), or the connection's status when refused.
Result<api::ServerMessage> RegisterAs(const ServerProcess& server, const std::string& bearer,
                                      const std::string& name, bool enrol = false) {
  net::BlockingWsClient c;
  RETURN_IF_ERROR(c.Connect(WsUrl(server), {{"Authorization", "Bearer " + bearer}}));
  api::RegisterMsg reg;
  reg.node.name = name;
  reg.node.node_id = "forged-" + name;
  reg.enrol = enrol;
  if (!c.Send(api::Encode(reg))) return Status::Unavailable("send failed");
  ASSIGN_OR_RETURN(std::string reply, c.Receive(std::chrono::seconds(5)));
  return api::DecodeServerMessage(reply);
}

std::string ErrorOf(const Result<api::ServerMessage>& m) {
  if (!m.ok()) return "(connection: " + m.status().ToString() + ")";
  if (auto* e = std::get_if<api::ErrorMsg>(&*m)) return e->message;
  return "(not an error)";
}

class NodeCredentialsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok()) << server_.child().Log();
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = "gpu-a", .gpus = 2}, server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(server_, "gpu-a"); }, seconds(20))) << agent_->child().Log();
    ASSERT_TRUE(WaitFor([&] { return ReadFile(CredentialPath()).ok(); }, seconds(10)));
  }
  std::string CredentialPath() const { return agent_->state_dir() + "/credential"; }
  std::string Credential() const {
    auto text = ReadFile(CredentialPath());
    return text.ok() ? std::string(Trim(*text)) : "";
  }

  TempDir dir_;
  ServerProcess server_{dir_.path() + "/server"};
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(NodeCredentialsE2E, TheAgentEnrolsOnceAndKeepsItsCredentialOwnerOnly) {
  const std::string credential = Credential();
  EXPECT_EQ(credential.rfind("rotanode_", 0), 0u) << credential;
  struct stat st {};
  ASSERT_EQ(::stat(CredentialPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(server_.child().Log().find(server_.token()), std::string::npos) << "join token logged";
  EXPECT_EQ(server_.child().Log().find(credential), std::string::npos) << "credential logged";
}

// Regression: one shared join token authenticated every agent, so anyone holding it
// (or root on any node) could register as another node and be sent its users' jobs.
TEST_F(NodeCredentialsE2E, TheJoinTokenCannotRegisterAsAnEnrolledNode) {
  auto answer = RegisterAs(server_, server_.token(), "gpu-a", /*enrol=*/true);
  EXPECT_NE(ErrorOf(answer).find("gpu-a is enrolled"), std::string::npos) << ErrorOf(answer);
  // The real agent stays connected and ready.
  EXPECT_TRUE(NodeReady(server_, "gpu-a"));
}

TEST_F(NodeCredentialsE2E, ANodesCredentialCannotRegisterAsAnotherNode) {
  auto answer = RegisterAs(server_, Credential(), "gpu-b");
  EXPECT_NE(ErrorOf(answer).find("belongs to node gpu-a"), std::string::npos) << ErrorOf(answer);
  auto nodes = server_.GetJson("/api/v1/nodes/gpu-b");
  EXPECT_FALSE(nodes.ok()) << "a refused registration stored node gpu-b";
  // A made-up credential of the right form is refused at the handshake.
  auto forged = RegisterAs(server_, "rotanode_" + std::string(64, 'a'), "gpu-a");
  EXPECT_EQ(forged.status().code(), StatusCode::kUnauthenticated) << ErrorOf(forged);
}

TEST_F(NodeCredentialsE2E, ARevokedCredentialIsRefusedAndTheAgentEnrolsAgain) {
  const std::string old = Credential();
  EXPECT_EQ(server_.CallAs(server_.admin_token(), "DELETE", "/api/v1/nodes/gpu-z/credential")->status, 404);
  auto user = server_.CreateUser("carol");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(server_.CallAs(*user, "DELETE", "/api/v1/nodes/gpu-a/credential")->status, 403);
  CliResult revoked = RunCli({"nodes", "revoke", "gpu-a"}, server_.CliEnv());
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_NE(revoked.out.find("revoked the credential of gpu-a"), std::string::npos) << revoked.out;
  // The agent was disconnected, its credential is refused, and it enrols again.
  ASSERT_TRUE(WaitFor([&] { return !Credential().empty() && Credential() != old; }, seconds(20)))
      << agent_->child().Log();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server_, "gpu-a"); }, seconds(20)));
  auto again = RegisterAs(server_, old, "gpu-a");
  EXPECT_EQ(again.status().code(), StatusCode::kUnauthenticated) << ErrorOf(again);
}

// An agent from before credentials (it does not ask to enrol) still registers with
// the join token, so a cluster upgrades its server first without losing its nodes.
TEST_F(NodeCredentialsE2E, AnAgentThatCannotEnrolStillRegistersANewNode) {
  auto answer = RegisterAs(server_, server_.token(), "old-agent", /*enrol=*/false);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  auto* reg = std::get_if<api::RegisteredMsg>(&*answer);
  ASSERT_NE(reg, nullptr) << ErrorOf(answer);
  EXPECT_TRUE(reg->credential.empty());
}

}  // namespace
}  // namespace rota::testing
