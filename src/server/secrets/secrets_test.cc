// The secret service over a real (SQLite) store: ownership, who uses and sees
// what, admins, bad input, the values sealed at rest, the trail.
#include "server/secrets/secrets.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/audit.h"
#include "server/store/accounts.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

class SecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->Write([](store::Db& db) -> Status {
      RETURN_IF_ERROR(db.Exec("INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                              "(1, 'alice', 'user', 0, 0), (2, 'bob', 'user', 0, 0), "
                              "(3, 'root', 'admin', 0, 0)"));
      RETURN_IF_ERROR(store::InsertGroup(db, "vision", "", 0).status());
      return store::SetUserGroups(db, 1, {"vision"});
    }).ok());
    audit_ = std::make_unique<AuditLog>(store_.get());
    auto box = SecretBox::FromText("1 " + std::string(64, 'c') + "\n");
    ASSERT_TRUE(box.ok());
    secrets_ = std::make_unique<Secrets>(store_.get(), std::move(*box), audit_.get(), &clock_);
  }

  std::vector<std::string> Names(const Principal& p) {
    std::vector<std::string> out;
    auto l = secrets_->List(p);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    if (l.ok()) {
      for (const auto& s : *l) out.push_back(s.name);
    }
    return out;
  }

  std::vector<AuthEvent> Trail() {
    EXPECT_TRUE(store_->Flush().ok());
    auto e = audit_->ListAuthEvents(0, 100);
    EXPECT_TRUE(e.ok());
    return e.ok() ? *e : std::vector<AuthEvent>{};
  }

  store::testing::TempDir dir_;
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<Secrets> secrets_;
  Principal alice_{1, "alice", Role::kUser, {"vision"}};
  Principal bob_{2, "bob", Role::kUser, {}};
  Principal admin_{3, "root", Role::kAdmin, {}};
};

TEST_F(SecretsTest, OwnersAndGroupMembersUseAndListTheirsAndNobodyElse) {
  auto own = secrets_->Create(alice_, "alice-token", "t0ken", "", "10.0.0.1");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->owner, "alice");
  EXPECT_EQ(own->size, 5);
  ASSERT_TRUE(secrets_->Create(alice_, "vision-bucket", "b", "vision", "").ok());
  ASSERT_TRUE(secrets_->Create(bob_, "bob-key", "k", "", "").ok());

  EXPECT_EQ(Names(alice_), (std::vector<std::string>{"alice-token", "vision-bucket"}));
  EXPECT_EQ(Names(bob_), (std::vector<std::string>{"bob-key"}));
  EXPECT_EQ(Names(admin_), (std::vector<std::string>{"alice-token", "bob-key", "vision-bucket"}));

  SecretUser alice{1, "alice", {"vision"}}, bob{2, "bob", {}}, root{3, "root", {}};
  EXPECT_TRUE(secrets_->CheckUse(alice, {{"alice-token", "", ""}, {"vision-bucket", "B", ""}}).ok());
  Status theirs = secrets_->CheckUse(bob, {{"alice-token", "", ""}});
  EXPECT_EQ(theirs.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(theirs.message().find("'alice-token' is not bob's"), std::string::npos);
  EXPECT_EQ(secrets_->CheckUse(bob, {{"nope", "", ""}}).code(), StatusCode::kNotFound);
  // Admins see metadata, but do not use others' secrets.
  EXPECT_EQ(secrets_->CheckUse(root, {{"bob-key", "", ""}}).code(), StatusCode::kPermissionDenied);

  // A task gets the values; the use is recorded.
  auto values = secrets_->ForTask(1, {{"alice-token", "TOKEN", ""}, {"vision-bucket", "", ""}}, "job-1.r0.w-0", "n1");
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0], (api::TaskSecret{"alice-token", "t0ken", "TOKEN"}));
  EXPECT_EQ((*values)[1].value, "b");
  EXPECT_EQ(secrets_->ForTask(2, {{"alice-token", "", ""}}, "job-2.r0.w-0", "n1").status().code(),
            StatusCode::kPermissionDenied);
  // Out of the group: alice's next task does not get the group's secret.
  ASSERT_TRUE(store_->Write([](store::Db& db) { return store::SetUserGroups(db, 1, {}); }).ok());
  EXPECT_EQ(secrets_->ForTask(1, {{"vision-bucket", "", ""}}, "job-1.r1.w-0", "n1").status().code(),
            StatusCode::kPermissionDenied);

  int used = 0, created = 0;
  for (const auto& e : Trail()) {
    if (e.action == "secret_used") ++used;
    if (e.action == "secret_created") ++created;
    EXPECT_EQ(e.detail.find("t0ken"), std::string::npos);
  }
  EXPECT_EQ(used, 2);
  EXPECT_EQ(created, 3);
  auto listed = secrets_->List(admin_);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].name, "alice-token");
  EXPECT_EQ((*listed)[0].last_used_ms, clock_.NowMs());
}

TEST_F(SecretsTest, ValuesAreSealedAtRestAndNeverListed) {
  ASSERT_TRUE(secrets_->Create(alice_, "plain", "very-recognisable-value", "", "").ok());
  std::string sealed;
  ASSERT_TRUE(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, db.QueryText("SELECT sealed FROM secrets WHERE name = 'plain'"));
    sealed = rows;
    return Status::Ok();
  }).ok());
  EXPECT_FALSE(sealed.empty());
  EXPECT_EQ(sealed.find("very-recognisable-value"), std::string::npos);
  EXPECT_EQ(ToJson((*secrets_->List(alice_))[0]).dump().find("very-recognisable"), std::string::npos);
}

TEST_F(SecretsTest, AdminsDeleteAnySecretOthersOnlyTheirs) {
  ASSERT_TRUE(secrets_->Create(alice_, "a", "1", "", "").ok());
  ASSERT_TRUE(secrets_->Create(alice_, "g", "1", "vision", "").ok());
  // bob cannot see it: the same answer as for no secret at all.
  EXPECT_EQ(secrets_->Remove(bob_, "a", "").code(), StatusCode::kNotFound);
  EXPECT_TRUE(secrets_->Remove(admin_, "a", "").ok());
  EXPECT_EQ(secrets_->Remove(admin_, "a", "").code(), StatusCode::kNotFound);
  Principal carol{4, "carol", Role::kUser, {"vision"}};
  EXPECT_TRUE(secrets_->Remove(carol, "g", "").ok());
  EXPECT_TRUE(Names(admin_).empty());
}

TEST_F(SecretsTest, BadInputIsRefusedNamingWhy) {
  EXPECT_EQ(secrets_->Create(alice_, "bad name", "v", "", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(secrets_->Create(alice_, "", "v", "", "").status().code(), StatusCode::kInvalidArgument);
  auto empty = secrets_->Create(alice_, "e", "", "", "");
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  auto big = secrets_->Create(alice_, "big", std::string(jobs::kMaxSecretBytes + 1, 'x'), "", "");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("65537 bytes"), std::string::npos);
  EXPECT_TRUE(secrets_->Create(alice_, "max", std::string(jobs::kMaxSecretBytes, 'x'), "", "").ok());
  EXPECT_EQ(secrets_->Create(bob_, "g", "v", "vision", "").status().code(), StatusCode::kPermissionDenied);
  Principal ghost_member{1, "alice", Role::kUser, {"vision", "ghosts"}};
  EXPECT_EQ(secrets_->Create(ghost_member, "g", "v", "ghosts", "").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(secrets_->Create(alice_, "taken", "v", "", "").ok());
  EXPECT_EQ(secrets_->Create(bob_, "taken", "v", "", "").status().code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace rota::server
