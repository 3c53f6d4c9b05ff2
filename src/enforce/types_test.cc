#include "enforce/types.h"

#include <gtest/gtest.h>

namespace rota::enforce {
namespace {

TEST(EnforcementSettingsTest, DefaultsRoundTrip) {
  EnforcementSettings s;
  EXPECT_EQ(s.grace_email_ms, 60'000);
  EXPECT_EQ(s.grace_term_ms, 300'000);
  EXPECT_EQ(s.grace_kill_ms, 30'000);
  auto back = ParseEnforcementSettings(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

TEST(EnforcementSettingsTest, ParsesFieldsOverBase) {
  EnforcementSettings base;
  base.exempt_users = {"root"};
  auto s = ParseEnforcementSettings(
      Json::parse(
          R"({"mode":"strict","dry_run":true,"grace_kill_ms":5000,"exempt_commands":["Xorg"]})"),
      base);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->mode, "strict");
  EXPECT_TRUE(s->dry_run);
  EXPECT_EQ(s->grace_kill_ms, 5000);
  EXPECT_EQ(s->grace_term_ms, 300'000);
  EXPECT_EQ(s->exempt_users, std::vector<std::string>{"root"});
  EXPECT_EQ(s->exempt_commands, std::vector<std::string>{"Xorg"});
}

// min_uid is server-wide: kept from the base, not a JSON key (a policy or an owner's
// override cannot lower it); exempt commands may name a user, and a path holds ':'.
TEST(EnforcementSettingsTest, MinUidComesFromTheBaseOnly) {
  EnforcementSettings base;
  EXPECT_EQ(base.min_uid, 1000u);
  base.min_uid = 500;
  auto s = ParseEnforcementSettings(
      Json::parse(R"({"exempt_commands":["alice:nvtop","/opt/a:b/tool","1001:/usr/bin/x"]})"), base);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->min_uid, 500u);
  auto applied = ApplyOwnerOverrides(base, Json::parse(R"({"grace_term_ms":300000})"), OwnerLimits{});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->min_uid, 500u);
  EXPECT_FALSE(ApplyOwnerOverrides(base, Json::parse(R"({"min_uid":0})"), OwnerLimits{}).ok());
}

struct BadCase {
  const char* name;
  const char* json;
  const char* error;  // substring of the message
};

class BadSettingsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSettingsTest, RejectedNamingTheField) {
  auto s = ParseEnforcementSettings(Json::parse(GetParam().json));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find(GetParam().error), std::string::npos) << s.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadSettingsTest,
    ::testing::ValuesIn(std::vector<BadCase>{
        {"NotObject", "[1]", "must be a JSON object"},
        {"UnknownKey", R"({"grace":1})", "grace: unknown enforcement setting"},
        {"BadMode", R"({"mode":"lenient"})", "mode: must be off, reserved or strict"},
        {"ModeType", R"({"mode":1})", "mode: must be a string"},
        {"DryRunType", R"({"dry_run":"yes"})", "dry_run: must be true or false"},
        {"GraceType", R"({"grace_term_ms":"5m"})", "grace_term_ms: must be an integer"},
        {"GraceFloat", R"({"grace_kill_ms":1.5})", "grace_kill_ms: must be an integer"},
        {"GraceNegative", R"({"grace_email_ms":-1})", "grace_email_ms: must be in [0, "},
        {"GraceTooLong", R"({"grace_kill_ms":999999999999})", "grace_kill_ms: must be in"},
        {"EmailAfterTerm", R"({"grace_email_ms":400000})",
         "grace_email_ms: (400000) must not exceed"},
        {"ExemptNotArray", R"({"exempt_users":"root"})", "exempt_users: must be an array"},
        {"ExemptNotString", R"({"exempt_users":["root",2]})", "exempt_users[1]: must be a string"},
        {"ExemptEmpty", R"({"exempt_commands":[""]})", "exempt_commands[0]: must be 1..256"},
        {"ExemptControl", R"({"exempt_commands":["a\nb"]})", "exempt_commands[0]: holds a control"},
        {"ExemptNoUser", R"({"exempt_commands":[":Xorg"]})", "exempt_commands[0]: ':Xorg' must be EXE or USER:EXE"},
        {"ExemptNoExe", R"({"exempt_commands":["Xorg","bob:"]})", "exempt_commands[1]: 'bob:' must be"},
        {"ExemptTwoUsers", R"({"exempt_commands":["a:b:c"]})", "exempt_commands[0]: 'a:b:c' must be"},
        {"MinUidIsNotASetting", R"({"min_uid":0})", "min_uid: unknown enforcement setting"},
    }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(EnforcementSettingsTest, TooManyExemptions) {
  Json users = Json::array();
  for (size_t i = 0; i <= kMaxExemptions; ++i) users.push_back("u" + std::to_string(i));
  auto s = ParseEnforcementSettings(Json{{"exempt_users", users}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("exempt_users: at most 256"), std::string::npos);
}

TEST(OwnerLimitsTest, RoundTripAndValidation) {
  OwnerLimits l;
  l.allow_disable = true;
  auto back = ParseOwnerLimits(ToJson(l));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, l);
  auto bad = ParseOwnerLimits(Json{{"min_grace_kill_ms", 10}, {"max_grace_kill_ms", 5}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("min_grace_kill_ms: (10) exceeds max_grace_kill_ms (5)"),
            std::string::npos);
  EXPECT_FALSE(ParseOwnerLimits(Json{{"allow", true}}).ok());
  EXPECT_FALSE(ParseOwnerLimits(Json{{"allow_disable", 1}}).ok());
}

struct OverrideCase {
  const char* name;
  const char* overrides;
  OwnerLimits limits;
  StatusCode code;    // kOk when accepted
  const char* error;  // substring of the message, or of nothing
};

OwnerLimits Limits(bool allow_disable, bool allow_exemptions = true) {
  OwnerLimits l;
  l.allow_disable = allow_disable;
  l.allow_exemptions = allow_exemptions;
  return l;
}

class OwnerOverrideTest : public ::testing::TestWithParam<OverrideCase> {};

TEST_P(OwnerOverrideTest, AppliesWithinLimits) {
  const OverrideCase& c = GetParam();
  EnforcementSettings policy;
  auto s = ApplyOwnerOverrides(policy, Json::parse(c.overrides), c.limits);
  if (c.code == StatusCode::kOk) {
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return;
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), c.code);
  EXPECT_NE(s.status().message().find(c.error), std::string::npos) << s.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OwnerOverrideTest,
    ::testing::ValuesIn(std::vector<OverrideCase>{
        {"None", "null", Limits(false), StatusCode::kOk, ""},
        {"Empty", "{}", Limits(false), StatusCode::kOk, ""},
        {"LongerGraceWithinMax", R"({"grace_term_ms":600000})", Limits(false), StatusCode::kOk, ""},
        {"AtMinimum", R"({"grace_term_ms":60000,"grace_email_ms":0})", Limits(false),
         StatusCode::kOk, ""},
        {"BelowMinimum", R"({"grace_term_ms":59999,"grace_email_ms":0})", Limits(false),
         StatusCode::kPermissionDenied,
         "grace_term_ms 59999 is below the minimum 60000 allowed to reservation owners"},
        {"AboveMaximum", R"({"grace_kill_ms":3600001})", Limits(false),
         StatusCode::kPermissionDenied, "grace_kill_ms 3600001 is above the maximum 3600000"},
        {"DisableRefused", R"({"mode":"off"})", Limits(false), StatusCode::kPermissionDenied,
         "mode off: reservation owners may not disable enforcement"},
        {"DisableAllowed", R"({"mode":"off"})", Limits(true), StatusCode::kOk, ""},
        {"DryRunRefused", R"({"dry_run":true})", Limits(false), StatusCode::kPermissionDenied,
         "dry_run: reservation owners may not"},
        {"StrictAllowed", R"({"mode":"strict"})", Limits(false), StatusCode::kOk, ""},
        {"ExemptionRefused", R"({"exempt_users":["carol"]})", Limits(false, false),
         StatusCode::kPermissionDenied, "exempt_users: reservation owners may not add exemptions"},
        {"Malformed", R"({"grace_term_ms":"x"})", Limits(true), StatusCode::kInvalidArgument,
         "enforcement overrides: grace_term_ms: must be an integer"},
        {"UnknownKey", R"({"kill":true})", Limits(true), StatusCode::kInvalidArgument,
         "enforcement overrides: kill: unknown"},
    }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OwnerOverrideTest, ExemptionsAddToThePolicys) {
  EnforcementSettings policy;
  policy.exempt_users = {"root"};
  policy.exempt_commands = {"Xorg"};
  auto s = ApplyOwnerOverrides(policy, Json{{"exempt_users", {"carol", "root"}}}, OwnerLimits{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->exempt_users, (std::vector<std::string>{"root", "carol"}));
  EXPECT_EQ(s->exempt_commands, std::vector<std::string>{"Xorg"});
}

TEST(OwnerOverrideTest, PolicyValuesOutsideLimitsStandWhenUnchanged) {
  EnforcementSettings policy;
  policy.grace_kill_ms = 1'000;  // below the owners' minimum, set by an admin
  auto s = ApplyOwnerOverrides(policy, Json{{"grace_email_ms", 120'000}}, OwnerLimits{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->grace_kill_ms, 1'000);
  EXPECT_EQ(s->grace_email_ms, 120'000);
}

}  // namespace
}  // namespace rota::enforce
