#include "agent/leader_epoch.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/file_util.h"

namespace rota::agent {
namespace {

TEST(LeaderEpoch, OlderLeadersAreRefusedNewerOnesKeptAndOneServerAlwaysAccepted) {
  EXPECT_EQ(JudgeLeaderEpoch(0, 4).accept, true);
  EXPECT_EQ(JudgeLeaderEpoch(0, 4).highest, 4u);
  EXPECT_EQ(JudgeLeaderEpoch(4, 4).accept, true);  // the same leader again (a reconnect)
  EXPECT_EQ(JudgeLeaderEpoch(4, 7).highest, 7u);
  EXPECT_EQ(JudgeLeaderEpoch(7, 6).accept, false);
  EXPECT_EQ(JudgeLeaderEpoch(7, 6).highest, 7u);
  // A server alone on its store (no lease) says 0: accepted, and nothing is forgotten.
  EXPECT_EQ(JudgeLeaderEpoch(7, 0).accept, true);
  EXPECT_EQ(JudgeLeaderEpoch(7, 0).highest, 7u);
}

TEST(LeaderEpoch, KeptOwnerOnlyAndGarbageReadsAsNone) {
  std::string dir = (std::filesystem::temp_directory_path() / "rota-epoch-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/leader-epoch";
  EXPECT_EQ(LoadLeaderEpoch(path), 0u);
  StoreLeaderEpoch(path, 42);
  EXPECT_EQ(LoadLeaderEpoch(path), 42u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const char* bad : {"", "x\n", "-3\n", "12 13\n", "99999999999999999999999\n"}) {
    ASSERT_TRUE(WriteFileAtomic(path, bad, 0600).ok());
    EXPECT_EQ(LoadLeaderEpoch(path), 0u) << bad;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rota::agent
