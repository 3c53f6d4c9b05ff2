// The SQL of secrets (secrets.h), on SQLite and on PostgreSQL.
#include "server/store/secrets.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/store_test_backend.h"

namespace rota::store {
namespace {

using testing::Backend;

class StoreSecretsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto s = loc_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }

  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<Store> store_;
};
INSTANTIATE_TEST_SUITE_P(, StoreSecretsTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(StoreSecretsTest, ASecretIsStoredListedWithoutItsValueTouchedAndDeleted) {
  SecretRow a{"wandb", 7, "", 7, 1000, 0, 12, 1, "00aa11"};
  SecretRow b{"bucket", 0, "vision", 7, 2000, 0, 30, 2, "ffee"};
  ASSERT_TRUE(store_->Write([&](Db& db) -> Status {
    RETURN_IF_ERROR(InsertSecret(db, a));
    return InsertSecret(db, b);
  }).ok());
  // The name is the key: a second "wandb" is refused.
  EXPECT_FALSE(store_->Write([&](Db& db) { return InsertSecret(db, a); }).ok());

  std::vector<SecretRow> rows;
  std::optional<SecretRow> full, bare, none;
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, ListSecrets(db));
    ASSIGN_OR_RETURN(full, GetSecret(db, "wandb", true));
    ASSIGN_OR_RETURN(bare, GetSecret(db, "bucket", false));
    ASSIGN_OR_RETURN(none, GetSecret(db, "nope", true));
    return Status::Ok();
  }).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "bucket");
  EXPECT_EQ(rows[0].owner_group, "vision");
  EXPECT_EQ(rows[0].owner_user_id, 0);
  EXPECT_EQ(rows[0].key_id, 2);
  EXPECT_EQ(rows[0].sealed, "");  // lists never carry values
  EXPECT_EQ(rows[1].name, "wandb");
  EXPECT_EQ(rows[1].size, 12);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->sealed, "00aa11");
  EXPECT_EQ(full->owner_user_id, 7);
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->sealed, "");
  EXPECT_FALSE(none.has_value());

  ASSERT_TRUE(store_->Write([&](Db& db) { return TouchSecret(db, "wandb", 5000); }).ok());
  bool deleted = false, again = true;
  ASSERT_TRUE(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(deleted, DeleteSecret(db, "bucket"));
    ASSIGN_OR_RETURN(again, DeleteSecret(db, "bucket"));
    return Status::Ok();
  }).ok());
  EXPECT_TRUE(deleted);
  EXPECT_FALSE(again);
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, ListSecrets(db));
    return Status::Ok();
  }).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].last_used_ms, 5000);
}

}  // namespace
}  // namespace rota::store
