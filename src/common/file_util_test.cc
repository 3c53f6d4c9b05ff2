#include "common/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

namespace rota {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/rota_file_util_XXXXXX";
  return mkdtemp(tmpl);
}

TEST(FileUtilTest, WriteAtomicThenReadBack) {
  std::string dir = TempDir();
  ASSERT_TRUE(MakeDirs(dir + "/a/b").ok());
  std::string path = dir + "/a/b/secret";
  ASSERT_TRUE(WriteFileAtomic(path, "hello", 0600).ok());
  EXPECT_EQ(*ReadFile(path), "hello");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(FileUtilTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadFile("/nonexistent/rota").status().code(), StatusCode::kNotFound);
}

TEST(FileUtilTest, RandomHexIsFreshEachTime) {
  std::string a = *RandomHex(16), b = *RandomHex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace rota
