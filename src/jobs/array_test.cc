#include "jobs/array.h"

#include <gtest/gtest.h>

namespace rota::jobs {
namespace {

TEST(ArraySpecTest, ParsesRangesListsStepsAndCap) {
  struct Case {
    std::string text;
    std::vector<int64_t> indices;
    uint32_t cap;
  };
  for (const Case& c : std::vector<Case>{{"0-4", {0, 1, 2, 3, 4}, 0},
                                         {"0-4%2", {0, 1, 2, 3, 4}, 2},
                                         {"0,3,7-9", {0, 3, 7, 8, 9}, 0},
                                         {"9,1-2%1", {1, 2, 9}, 1},
                                         {"1-10:4", {1, 5, 9}, 0},
                                         {"42", {42}, 0}}) {
    auto a = ParseArraySpec(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.status().ToString();
    EXPECT_EQ(a->indices, c.indices) << c.text;
    EXPECT_EQ(a->max_running, c.cap) << c.text;
  }
  auto big = ParseArraySpec("0-99999%10");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->indices.size(), kMaxArrayMembers);
}

TEST(ArraySpecTest, RefusesJunkWithTheReason) {
  struct Case {
    std::string text, why;
  };
  for (const Case& c : std::vector<Case>{{"", "give indices"},
                                         {"5-2", "runs backwards"},
                                         {"0-9%0", "N must be 1.."},
                                         {"0-9%", "N must be 1.."},
                                         {"0-9%x", "N must be 1.."},
                                         {"a-b", "not a range"},
                                         {"-3", "not a range"},
                                         {"1,,2", "not an index"},
                                         {"1,2,1", "given twice"},
                                         {"0-100000", "more than 100000 members"},
                                         {"0-10:0", "at least 1"},
                                         {"3:2", "a step needs a range"},
                                         {"0-1000000000", "indices go up to"},
                                         {"99999999999999999999", "not an index"}}) {
    auto a = ParseArraySpec(c.text);
    ASSERT_FALSE(a.ok()) << c.text;
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find(c.why), std::string::npos) << c.text << ": " << a.status().message();
  }
}

TEST(ArraySpecTest, TextIsCanonical) {
  auto a = ParseArraySpec("7-9,0,3%4");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(ArraySpecText(*a), "0,3,7-9%4");
  auto b = ParseArraySpec(ArraySpecText(*a));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, *a);
}

TEST(SubstituteTest, ReplacesKnownPlaceholdersOnly) {
  const std::map<std::string, std::string> v{{"index", "7"}, {"lr", "1e-3"}};
  EXPECT_EQ(Substitute("--seed={index}", v), "--seed=7");
  EXPECT_EQ(Substitute("{index}{index}", v), "77");
  EXPECT_EQ(Substitute("{\"a\": {lr}}", v), "{\"a\": 1e-3}");
  EXPECT_EQ(Substitute("{other} {", v), "{other} {");
  EXPECT_EQ(Substitute("}{index", v), "}{index");
  // One pass: a value is not expanded again.
  EXPECT_EQ(Substitute("{x}", {{"x", "{x}"}}), "{x}");
  EXPECT_TRUE(HasPlaceholder("a{lr}b", v));
  EXPECT_FALSE(HasPlaceholder("a{b}", v));
}

JobSpec Template() {
  JobSpec s;
  s.name = "train";
  s.command = {"python", "train.py", "--seed", "{index}", "--out=/runs/{index}"};
  s.groups.push_back(TaskGroup{});
  return s;
}

TEST(MemberSpecTest, SubstitutesArgvAndSetsEnv) {
  JobSpec t = Template();
  t.groups[0].command = {"serve", "{index}"};
  ASSERT_TRUE(CheckArrayTemplate(t, {{"index", "0"}}).ok());
  JobSpec m = MemberSpec(t, 12, 3, {{"index", "3"}});
  EXPECT_EQ(m.command, (std::vector<std::string>{"python", "train.py", "--seed", "3", "--out=/runs/3"}));
  EXPECT_EQ(m.groups[0].command, (std::vector<std::string>{"serve", "3"}));
  EXPECT_EQ(m.env.at(kArrayIndexVar), "3");
  EXPECT_EQ(m.env.at(kArrayIdVar), "12");
  EXPECT_TRUE(Validate(m).ok());
}

TEST(MemberSpecTest, ShellCommandsAndOwnArrayVariablesAreRefused) {
  JobSpec t = Template();
  t.shell = true;
  t.command = {"python train.py --seed {index}"};
  Status st = CheckArrayTemplate(t, {{"index", "0"}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("argv only"), std::string::npos) << st.message();
  t.command = {"python train.py --seed $ROTA_ARRAY_INDEX"};
  EXPECT_TRUE(CheckArrayTemplate(t, {{"index", "0"}}).ok());
  JobSpec e = Template();
  e.env[kArrayIndexVar] = "1";
  EXPECT_EQ(CheckArrayTemplate(e, {{"index", "0"}}).code(), StatusCode::kInvalidArgument);
}

TEST(HeldByArrayCapTest, AdmitsUpToTheCapLowestIdsFirst) {
  std::vector<ArrayMemberState> m;
  // Array 1, cap 2: one member runs, four wait -> one admitted (id 11), three held.
  m.push_back({10, 1, 2, true, false});
  for (int64_t id : {14, 11, 12, 13}) m.push_back({id, 1, 2, false, true});
  // Array 2, no cap: never held.
  for (int64_t id : {20, 21, 22}) m.push_back({id, 2, 0, false, true});
  // Array 3, cap 1, full with a member being stopped (holds, not schedulable).
  m.push_back({30, 3, 1, true, false});
  m.push_back({31, 3, 1, false, true});
  // Array 4, cap 3, nothing running: all three admitted.
  for (int64_t id : {40, 41, 42}) m.push_back({id, 4, 3, false, true});
  EXPECT_EQ(HeldByArrayCap(m), (std::set<int64_t>{12, 13, 14, 31}));
}

TEST(HeldByArrayCapTest, OverfullArrayHoldsEveryWaitingMember) {
  // More hold than the cap (a restart of the server with an array already over it).
  std::vector<ArrayMemberState> m = {{1, 5, 1, true, false}, {2, 5, 1, true, false}, {3, 5, 1, false, true}};
  EXPECT_EQ(HeldByArrayCap(m), (std::set<int64_t>{3}));
}

}  // namespace
}  // namespace rota::jobs
