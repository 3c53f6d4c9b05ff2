#include "jobs/secret_ref.h"

#include <gtest/gtest.h>

#include "jobs/spec.h"

namespace rota::jobs {
namespace {

TEST(SecretRefTest, ParsesTheThreeForms) {
  auto a = ParseSecretRef("wandb-key");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, (SecretRef{"wandb-key", "", ""}));
  auto b = ParseSecretRef("wandb-key:WANDB_API_KEY");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (SecretRef{"wandb-key", "WANDB_API_KEY", ""}));
  auto c = ParseSecretRef("s3:/run/creds/s3.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, (SecretRef{"s3", "", "/run/creds/s3.json"}));
  for (const auto* text : {"wandb-key", "wandb-key:WANDB_API_KEY", "s3:/run/creds/s3.json"}) {
    EXPECT_EQ(ParseSecretRef(text)->ToString(), text);
  }
}

TEST(SecretRefTest, RefusesBadNamesVariablesAndPaths) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "secret name ''"},
      {"-x", "must be 1..64"},
      {"a/b", "must be 1..64"},
      {"a b", "must be 1..64"},
      {"x:", "neither an environment variable"},
      {"x:1VAR", "neither an environment variable"},
      {"x:A-B", "neither an environment variable"},
      {"x:/", "normalised absolute"},
      {"x:/a/../etc/passwd", "normalised absolute"},
      {"x:/a//b", "normalised absolute"},
      {"x:/a/", "normalised absolute"},
  };
  for (const auto& c : cases) {
    auto r = ParseSecretRef(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << c.text << ": " << r.status().message();
  }
  EXPECT_FALSE(ParseSecretRef(std::string(65, 'a')).ok());
  EXPECT_TRUE(ParseSecretRef(std::string(64, 'a')).ok());
}

TEST(SecretRefTest, AJobsListIsCheckedAsAWhole) {
  EXPECT_TRUE(ValidateSecretRefs({{"a", "", ""}, {"b", "B", ""}}).ok());
  EXPECT_NE(ValidateSecretRefs({{"a", "", ""}, {"a", "B", ""}}).message().find("named twice"), std::string::npos);
  EXPECT_NE(ValidateSecretRefs({{"a", "V", ""}, {"b", "V", ""}}).message().find("two secrets"), std::string::npos);
  EXPECT_NE(ValidateSecretRefs({{"a", "ROTA_SECRETS_DIR", ""}}).message().find("rota's own"), std::string::npos);
  EXPECT_NE(ValidateSecretRefs({{"a", "", "/run/a"}}).message().find("container tasks"), std::string::npos);
  std::vector<SecretRef> many;
  for (size_t i = 0; i <= kMaxJobSecrets; ++i) many.push_back({"s" + std::to_string(i), "", ""});
  EXPECT_FALSE(ValidateSecretRefs(many).ok());
}

TEST(SecretRefTest, AJobSpecCarriesNamesOnlyAndRoundTrips) {
  auto j = api::Json::parse(R"({"name": "t", "command": ["true"], "groups": [{"role": "worker",
      "replicas": 1, "gpus_per_task": 0}], "secrets": ["tok", "key:API_KEY"]})");
  auto spec = JobSpecFromJson(j);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->secrets.size(), 2u);
  EXPECT_EQ(spec->secrets[1].env, "API_KEY");
  api::Json out = ToJson(*spec);
  EXPECT_EQ(out["secrets"], api::Json::parse(R"(["tok", "key:API_KEY"])"));
  auto back = JobSpecFromJson(out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *spec);
  j["secrets"] = api::Json::parse(R"(["bad name"])");
  EXPECT_FALSE(JobSpecFromJson(j).ok());
}

}  // namespace
}  // namespace rota::jobs
