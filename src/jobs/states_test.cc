#include "jobs/states.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace rota::jobs {
namespace {

TEST(StatesTest, NamesRoundTripAndNothingElseParses) {
  std::set<std::string> names;
  for (JobState s : {JobState::kPending, JobState::kStarting, JobState::kRunning,
                     JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(ParseJobState(StateName(s)), s);
    names.insert(StateName(s));
  }
  EXPECT_EQ(names.size(), 6u);
  for (TaskState s : {TaskState::kCreated, TaskState::kRunning, TaskState::kExited,
                      TaskState::kLost, TaskState::kUnstarted}) {
    EXPECT_EQ(ParseTaskState(StateName(s)), s);
  }
  EXPECT_FALSE(ParseJobState("Running"));
  EXPECT_FALSE(ParseJobState(""));
  EXPECT_FALSE(ParseTaskState("pending"));
  EXPECT_TRUE(IsFinal(JobState::kCancelled));
  EXPECT_FALSE(IsFinal(JobState::kStarting));
}

}  // namespace
}  // namespace rota::jobs
