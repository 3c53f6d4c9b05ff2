#include "common/run_command.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>

namespace rota {
namespace {

TEST(RunCommandTest, FeedsStdinAndCapturesBothStreams) {
  RunOptions o;
  o.input = "line one\nline 'two' $(x)\n";
  auto r = RunCommand({"sh", "-c", "cat; echo oops >&2; exit 3"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_EQ(r->out, o.input);
  EXPECT_EQ(r->err, "oops\n");
}

TEST(RunCommandTest, LargeInputAndOutputDoNotDeadlock) {
  RunOptions o;
  o.input.assign(3 << 20, 'x');  // larger than any pipe buffer, both ways
  auto r = RunCommand({"cat"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out.size(), o.input.size());
}

TEST(RunCommandTest, OutputBeyondTheLimitIsDropped) {
  RunOptions o;
  o.max_output = 10;
  auto r = RunCommand({"sh", "-c", "printf 0123456789abcdef"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "0123456789");
}

TEST(RunCommandTest, ReaderThatLeavesEarlyIsNotAnError) {
  RunOptions o;
  o.input.assign(1 << 20, 'y');  // `true` never reads it: the write meets EPIPE
  auto r = RunCommand({"true"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0);
}

TEST(RunCommandTest, SignalIsReported) {
  auto r = RunCommand({"sh", "-c", "kill -TERM $$"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->signal, SIGTERM);
}

TEST(RunCommandTest, TimeoutKillsTheWholeGroup) {
  RunOptions o;
  o.timeout_ms = 300;
  auto start = std::chrono::steady_clock::now();
  // The grandchild keeps stdout open: only killing the group ends the wait.
  auto r = RunCommand({"sh", "-c", "sleep 30 & sleep 30"}, o);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(RunCommandTest, MissingProgramIsUnavailable) {
  auto r = RunCommand({"/nonexistent/rota-no-such-program"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(RunCommand({}, {}).ok());
}

}  // namespace
}  // namespace rota
