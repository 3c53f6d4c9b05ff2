#include "cli/log_follow.h"

#include <gtest/gtest.h>

#include <vector>

namespace rota::cli {
namespace {

// A log that grows as the test says, and a job that ends when it says.
struct FakeTask {
  std::string log;
  bool final = false;
  std::vector<std::function<void(FakeTask&)>> on_state_check;  // the i-th state check runs the i-th step
  size_t checks = 0, waits = 0;
  uint64_t max_bytes = 4;
};

LogFollowIo IoFor(FakeTask& t, std::string& out) {
  LogFollowIo io;
  io.read = [&t](uint64_t offset) -> Result<LogChunk> {
    const uint64_t at = std::min<uint64_t>(offset, t.log.size());
    return LogChunk{.data = t.log.substr(at, t.max_bytes), .offset = at, .size = t.log.size()};
  };
  io.job_final = [&t] {
    if (t.checks < t.on_state_check.size()) t.on_state_check[t.checks](t);
    ++t.checks;
    return t.final;
  };
  io.write = [&out](const std::string& d) { out += d; };
  io.wait = [&t] { ++t.waits; };
  return io;
}

TEST(FollowLogTest, WithoutFollowPrintsWhatIsThereInChunks) {
  FakeTask t{.log = "hello world\n"};
  std::string out;
  ASSERT_TRUE(FollowLog(IoFor(t, out), false).ok());
  EXPECT_EQ(out, "hello world\n");
  EXPECT_EQ(t.checks, 0u);
}

// The task writes its last line and ends between the read that caught up and
// the check that sees the job final: that line is still printed.
TEST(FollowLogTest, WhatTheTaskWroteJustBeforeItEndedIsPrinted) {
  FakeTask t{.log = "first\n"};
  t.on_state_check = {
      [](FakeTask&) {},  // still running: wait and read again
      [](FakeTask& f) {
        f.log += "last line, written as the task exits\n";
        f.final = true;
      },
  };
  std::string out;
  ASSERT_TRUE(FollowLog(IoFor(t, out), true).ok());
  EXPECT_EQ(out, "first\nlast line, written as the task exits\n");
  EXPECT_EQ(t.waits, 1u);
}

TEST(FollowLogTest, StopsOnAFailedRead) {
  FakeTask t{.log = "x"};
  std::string out;
  LogFollowIo io = IoFor(t, out);
  io.read = [](uint64_t) -> Result<LogChunk> { return Status::NotFound("job 7 has no task worker-9"); };
  Status s = FollowLog(io, true);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

// A reply that claims more bytes than it sends (a log truncated under it) does
// not spin: it counts as caught up.
TEST(FollowLogTest, AnEmptyChunkShortOfTheSizeDoesNotSpin) {
  FakeTask t{.log = "abc"};
  t.final = true;
  std::string out;
  LogFollowIo io = IoFor(t, out);
  int reads = 0;
  io.read = [&](uint64_t) -> Result<LogChunk> {
    ++reads;
    return LogChunk{.data = "", .offset = 0, .size = 10};
  };
  ASSERT_TRUE(FollowLog(io, true).ok());
  EXPECT_EQ(reads, 2);  // the read, and the one after the job was seen final
}

}  // namespace
}  // namespace rota::cli
