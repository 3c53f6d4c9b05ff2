#include "server/accounts/accounts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "server/store/jobs.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

class AccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    accounts_ = std::make_unique<Accounts>(store_.get(), std::string(64, 'k'), "min");
  }

  User Make(const std::string& name, Role role = Role::kUser) {
    UserPatch p;
    p.username = name;
    p.password = "password-" + name;
    p.role = role;
    p.email = name + "@example.test";
    auto u = accounts_->CreateUser(p, clock_.NowMs());
    EXPECT_TRUE(u.ok()) << u.status().ToString();
    return u.ok() ? *u : User{};
  }

  int64_t CountRows(const std::string& table) {
    int64_t n = -1;
    EXPECT_TRUE(store_->Read([&](store::Db& db) -> Status {
      auto v = db.QueryInt("SELECT count(*) FROM " + table);
      if (v.ok()) n = *v;
      return v.status();
    }).ok());
    return n;
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> accounts_;
};

TEST_F(AccountsTest, PasswordIsArgon2idAndChecked) {
  Make("alice");
  std::string hash;
  ASSERT_TRUE(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(hash, db.QueryText("SELECT password_hash FROM users"));
    return Status::Ok();
  }).ok());
  EXPECT_EQ(hash.rfind("$argon2id$", 0), 0u) << hash;
  EXPECT_EQ(hash.find("password-alice"), std::string::npos);
  EXPECT_TRUE(accounts_->CheckPassword("alice", "password-alice").ok());
  EXPECT_EQ(accounts_->CheckPassword("alice", "wrong").status().code(),
            StatusCode::kUnauthenticated);
  // An unknown user gets the same answer as a wrong password.
  auto ghost = accounts_->CheckPassword("ghost", "password-alice");
  EXPECT_EQ(ghost.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(ghost.status().message(), "invalid username or password");
}

// Bad inputs: malformed usernames, emails, Unix names, short passwords, duplicates.
TEST_F(AccountsTest, RefusesBadFieldsAndChangesNothing) {
  Make("alice");
  const int64_t before = CountRows("users");
  auto with = [](auto f) {
    UserPatch p;
    p.username = "bob";
    p.password = "long-enough";
    f(p);
    return p;
  };
  const std::vector<UserPatch> bad = {
      with([](UserPatch& p) { p.username = "Bob"; }),
      with([](UserPatch& p) { p.username = "1bob"; }),
      with([](UserPatch& p) { p.username = std::string(33, 'b'); }),
      with([](UserPatch& p) { p.username = "bo b"; }),
      with([](UserPatch& p) { p.username = "alice"; }),  // taken
      with([](UserPatch& p) { p.email = "no-at-sign"; }),
      with([](UserPatch& p) { p.email = "a@b\r\nBcc: x@y"; }),
      with([](UserPatch& p) { p.unix_user = "-rf"; }),
      with([](UserPatch& p) { p.unix_user = "a/b"; }),
      with([](UserPatch& p) { p.password = "short"; }),
      with([](UserPatch& p) { p.display_name = std::string(201, 'x'); }),
      with([](UserPatch& p) { p.groups = std::vector<std::string>{"no-such-group"}; }),
      with([](UserPatch& p) { p.unix_users = std::map<std::string, std::string>{{"n", "bad name"}}; }),
  };
  for (const auto& p : bad) {
    auto r = accounts_->CreateUser(p, clock_.NowMs());
    EXPECT_FALSE(r.ok()) << p.username.value_or("");
  }
  EXPECT_EQ(CountRows("users"), before);
}

TEST_F(AccountsTest, TokensExpireAndCanBeRevokedAndForgeriesFail) {
  User alice = Make("alice");
  auto session = accounts_->IssueToken(alice.id, "session", "s", 60'000, clock_.NowMs());
  ASSERT_TRUE(session.ok());
  const std::string token = session->first;
  EXPECT_EQ(accounts_->VerifyToken(token, clock_.NowMs())->username, "alice");

  // Forged: the right id with another secret; a flipped character; garbage.
  std::string forged = token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(accounts_->VerifyToken(forged, clock_.NowMs()).status().code(),
            StatusCode::kUnauthenticated);
  EXPECT_FALSE(accounts_->VerifyToken("rota_xyz", clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken("", clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(std::string(200, 'a'), clock_.NowMs()).ok());

  // The secret is stored only as a MAC.
  ASSERT_TRUE(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(std::string mac, db.QueryText("SELECT secret_mac FROM tokens"));
    EXPECT_EQ(token.find(mac), std::string::npos);
    return Status::Ok();
  }).ok());

  // A server with another key cannot verify it.
  Accounts other(store_.get(), std::string(64, 'z'), "min");
  EXPECT_FALSE(other.VerifyToken(token, clock_.NowMs()).ok());

  clock_.AdvanceMs(60'000);
  EXPECT_EQ(accounts_->VerifyToken(token, clock_.NowMs()).status().code(),
            StatusCode::kUnauthenticated);

  auto api = accounts_->IssueToken(alice.id, "api", "cli", 0, clock_.NowMs());
  ASSERT_TRUE(api.ok());
  clock_.AdvanceMs(89LL * 86'400'000);
  EXPECT_TRUE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
  User bob = Make("bob");
  EXPECT_EQ(accounts_->RevokeToken(bob.id, api->second.id).code(), StatusCode::kNotFound);
  ASSERT_TRUE(accounts_->RevokeToken(alice.id, api->second.id).ok());
  EXPECT_FALSE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
}

// Finding (issue 41): API tokens never expired by default.
TEST_F(AccountsTest, ApiTokensNeverExpireByDefaultFixed_AnApiTokenWithoutTtlLives90Days) {
  User alice = Make("alice");
  auto api = accounts_->IssueToken(alice.id, "api", "cli", 0, clock_.NowMs());
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  ASSERT_TRUE(api->second.expires_ms.has_value());
  EXPECT_EQ(*api->second.expires_ms, clock_.NowMs() + 90LL * 86'400'000);
  clock_.AdvanceMs(90LL * 86'400'000 - 1);
  EXPECT_TRUE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
  clock_.AdvanceMs(1);
  EXPECT_EQ(accounts_->VerifyToken(api->first, clock_.NowMs()).status().code(),
            StatusCode::kUnauthenticated);
  // A lifetime beyond the maximum is refused, naming the setting.
  auto longer = accounts_->IssueToken(alice.id, "api", "cli", 91LL * 86'400'000, clock_.NowMs());
  EXPECT_EQ(longer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(longer.status().message().find("api_token_max_ttl"), std::string::npos)
      << longer.status().message();
}

// Tokens stored before the maximum existed (no expiry), or when it was longer, expire at
// created + the maximum of their kind now: lowering the maximum shortens them.
TEST_F(AccountsTest, TokensIssuedBeforeALowerMaximumExpireAtIt) {
  User alice = Make("alice");
  Accounts lax(store_.get(), std::string(64, 'k'), "min",
               TokenLimits{3660LL * 86'400'000, 366LL * 86'400'000});
  auto api = lax.IssueToken(alice.id, "api", "old cli", 0, clock_.NowMs());
  auto session = lax.IssueToken(alice.id, "session", "old login", 30LL * 86'400'000, clock_.NowMs());
  ASSERT_TRUE(api.ok() && session.ok());
  // The same store under the defaults (90 days, 12 hours).
  clock_.AdvanceMs(12LL * 3'600'000);
  EXPECT_FALSE(accounts_->VerifyToken(session->first, clock_.NowMs()).ok());
  EXPECT_TRUE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
  auto listed = accounts_->ListTokens(alice.id);
  ASSERT_TRUE(listed.ok());
  for (const auto& t : *listed) {
    if (t.kind == "api") {
      EXPECT_EQ(t.expires_ms, t.created_ms + 90LL * 86'400'000);
    }
  }
  clock_.AdvanceMs(90LL * 86'400'000);
  EXPECT_FALSE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
}

// Finding (issue 41): a password change revoked only session tokens.
TEST_F(AccountsTest, PasswordChangeRevokesOnlySessionTokensFixed_EveryTokenEnds) {
  User alice = Make("alice");
  User bob = Make("bob");
  auto session = accounts_->IssueToken(alice.id, "session", "s", 60'000, clock_.NowMs());
  auto api = accounts_->IssueToken(alice.id, "api", "cli", 0, clock_.NowMs());
  auto bobs = accounts_->IssueToken(bob.id, "api", "cli", 0, clock_.NowMs());
  ASSERT_TRUE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());  // cached
  UserPatch pw;
  pw.password = "a-new-password";
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, pw, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(session->first, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
  EXPECT_TRUE(accounts_->ListTokens(alice.id)->empty());
  EXPECT_TRUE(accounts_->VerifyToken(bobs->first, clock_.NowMs()).ok());  // others keep theirs
  EXPECT_TRUE(accounts_->CheckPassword("alice", "a-new-password").ok());
}

TEST_F(AccountsTest, DisablingAUserEndsItsSessions) {
  Make("root-admin", Role::kAdmin);
  User alice = Make("alice");
  auto session = accounts_->IssueToken(alice.id, "session", "s", 60'000, clock_.NowMs());
  auto api = accounts_->IssueToken(alice.id, "api", "cli", 0, clock_.NowMs());
  UserPatch off;
  off.disabled = true;
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, off, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(session->first, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->CheckPassword("alice", "password-alice").ok());
  UserPatch on;
  on.disabled = false;
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, on, clock_.NowMs()).ok());
  EXPECT_TRUE(accounts_->VerifyToken(api->first, clock_.NowMs()).ok());  // API tokens survive
  EXPECT_FALSE(accounts_->VerifyToken(session->first, clock_.NowMs()).ok());
}

// Verified tokens are cached; every change through Accounts is seen at once.
TEST_F(AccountsTest, CachedTokensFollowChangesAtOnce) {
  Make("root-admin", Role::kAdmin);
  User alice = Make("alice");
  auto api = accounts_->IssueToken(alice.id, "api", "cli", 0, clock_.NowMs());
  ASSERT_TRUE(api.ok());
  const std::string token = api->first;
  ASSERT_TRUE(accounts_->VerifyToken(token, clock_.NowMs()).ok());  // now cached
  // A forged secret for the cached id is still refused.
  std::string forged = token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(accounts_->VerifyToken(forged, clock_.NowMs()).status().code(),
            StatusCode::kUnauthenticated);
  // A role change shows on the next request.
  UserPatch promote;
  promote.role = Role::kAdmin;
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, promote, clock_.NowMs()).ok());
  auto who = accounts_->VerifyToken(token, clock_.NowMs());
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->role, Role::kAdmin);
  // Disabled: refused at once.
  UserPatch off;
  off.disabled = true;
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, off, clock_.NowMs()).ok());
  EXPECT_FALSE(accounts_->VerifyToken(token, clock_.NowMs()).ok());
  UserPatch on;
  on.disabled = false;
  ASSERT_TRUE(accounts_->UpdateUser(alice.id, on, clock_.NowMs()).ok());
  ASSERT_TRUE(accounts_->VerifyToken(token, clock_.NowMs()).ok());
  // Use is recorded at most once a minute, cached or not.
  auto last_used = [&] {
    int64_t v = -1;
    EXPECT_TRUE(store_->Read([&](store::Db& db) -> Status {
      ASSIGN_OR_RETURN(v, db.QueryInt("SELECT last_used_ms FROM tokens WHERE id = '" +
                                      api->second.id + "'"));
      return Status::Ok();
    }).ok());
    return v;
  };
  const int64_t first_use = last_used();
  clock_.AdvanceMs(30'000);
  ASSERT_TRUE(accounts_->VerifyToken(token, clock_.NowMs()).ok());
  EXPECT_EQ(last_used(), first_use);
  clock_.AdvanceMs(31'000);
  ASSERT_TRUE(accounts_->VerifyToken(token, clock_.NowMs()).ok());
  EXPECT_EQ(last_used(), clock_.NowMs());
  // Deleted user: refused at once.
  ASSERT_TRUE(accounts_->DeleteUser(alice.id).ok());
  EXPECT_EQ(accounts_->VerifyToken(token, clock_.NowMs()).status().code(),
            StatusCode::kUnauthenticated);
}

TEST_F(AccountsTest, LastAdminCannotBeDemotedDisabledOrDeleted) {
  User admin = Make("boss", Role::kAdmin);
  UserPatch demote;
  demote.role = Role::kUser;
  EXPECT_EQ(accounts_->UpdateUser(admin.id, demote, clock_.NowMs()).status().code(),
            StatusCode::kConflict);
  EXPECT_EQ(accounts_->DeleteUser(admin.id).code(), StatusCode::kConflict);
  Make("boss2", Role::kAdmin);
  EXPECT_TRUE(accounts_->UpdateUser(admin.id, demote, clock_.NowMs()).ok());
}

TEST_F(AccountsTest, AUserWithJobsIsNotDeletedButMayBeDisabled) {
  User erin = Make("erin");
  ASSERT_TRUE(store_->Write([&](store::Db& db) -> Status {
    store::JobRow row;
    row.owner_id = erin.id;
    row.name = "train";
    row.spec_json = "{}";
    row.state = "pending";
    return store::InsertJob(db, row).status();
  }).ok());
  Status st = accounts_->DeleteUser(erin.id);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  EXPECT_EQ(st.message(), "user 'erin' owns 1 job (their history stays); disable the account instead");
  EXPECT_TRUE(accounts_->GetUser(erin.id).ok());  // nothing lost
  UserPatch disable;
  disable.disabled = true;
  EXPECT_TRUE(accounts_->UpdateUser(erin.id, disable, clock_.NowMs()).ok());
}

TEST_F(AccountsTest, GroupsAndUnixAccounts) {
  ASSERT_TRUE(accounts_->CreateGroup("vision", "CV team", clock_.NowMs()).ok());
  EXPECT_EQ(accounts_->CreateGroup("vision", "", clock_.NowMs()).status().code(),
            StatusCode::kConflict);
  EXPECT_FALSE(accounts_->CreateGroup("Bad Name", "", clock_.NowMs()).ok());
  UserPatch p;
  p.username = "carol";
  p.unix_user = "cwu";
  p.unix_users = std::map<std::string, std::string>{{"gpu-b", "carol2"}};
  p.groups = std::vector<std::string>{"vision"};
  auto carol = accounts_->CreateUser(p, clock_.NowMs());
  ASSERT_TRUE(carol.ok()) << carol.status().ToString();
  EXPECT_EQ(carol->groups, std::vector<std::string>{"vision"});
  EXPECT_EQ(carol->UnixUserOn("gpu-a"), "cwu");
  EXPECT_EQ(carol->UnixUserOn("gpu-b"), "carol2");
  EXPECT_EQ(accounts_->FindByUnixUser("gpu-a", "cwu")->username, "carol");
  EXPECT_EQ(accounts_->FindByUnixUser("gpu-b", "carol2")->username, "carol");
  EXPECT_FALSE(accounts_->FindByUnixUser("gpu-b", "cwu").ok());
  // A Unix account two users share names neither (neither is blamed for its processes).
  UserPatch dan;
  dan.username = "dan";
  dan.unix_user = "cwu";
  ASSERT_TRUE(accounts_->CreateUser(dan, clock_.NowMs()).ok());
  auto shared = accounts_->FindByUnixUser("gpu-a", "cwu");
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.status().message(), "Unix account 'cwu' on gpu-a is shared by carol, dan");
  EXPECT_EQ(accounts_->FindByUnixUser("gpu-b", "cwu")->username, "dan");
  auto groups = accounts_->ListGroups();
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].members, std::vector<std::string>{"carol"});
}

TEST(AuthKeyTest, GeneratedOnceWithPrivateMode) {
  store::testing::TempDir dir;
  auto a = LoadOrCreateAuthKey(dir.path());
  ASSERT_TRUE(a.ok());
  EXPECT_GE(a->size(), 64u);
  auto b = LoadOrCreateAuthKey(dir.path());
  EXPECT_EQ(*a, *b);
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/auth-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace rota::server
