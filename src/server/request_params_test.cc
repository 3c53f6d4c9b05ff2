#include "server/request_params.h"

#include <gtest/gtest.h>

namespace rota::server {
namespace {

TEST(RequestParamsTest, PositiveIdsAreReadAndEverythingElseIsRefusedSayingWhatAnIdIs) {
  EXPECT_EQ(*ParsePositiveId("job", "42"), 42);
  EXPECT_EQ(*ParsePositiveId("job", "999999999999999999"), 999999999999999999);
  for (const char* bad : {"", "0", "-1", "+1", "1e3", " 1", "1 ", "0x10", "abc",
                          "1234567890123456789", "99999999999999999999999"}) {
    auto id = ParsePositiveId("job", bad);
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(id.status().message(),
              "job id '" + std::string(bad) + "' must be a positive integer of at most 18 digits");
  }
}

TEST(RequestParamsTest, UintParamsTakeWholeNumbersUpToTheirMaximum) {
  net::HttpRequest req;
  req.query = {{"limit", "50"}, {"big", "1001"}, {"neg", "-1"}, {"word", "ten"}};
  EXPECT_EQ(*UintParam(req, "limit", 7, 1000), 50u);
  EXPECT_EQ(*UintParam(req, "absent", 7, 1000), 7u);
  for (const char* bad : {"big", "neg", "word"}) {
    auto v = UintParam(req, bad, 7, 1000);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find(bad), std::string::npos) << v.status().message();
  }
  EXPECT_TRUE(OnlyQueryParams(req, {"limit", "big", "neg", "word"}).ok());
  EXPECT_EQ(OnlyQueryParams(req, {"limit"}).message().find("unknown query parameter"), 0u);
}

}  // namespace
}  // namespace rota::server
