#include "reserve/reservation.h"

#include <gtest/gtest.h>

#include "common/time_util.h"

namespace rota::reserve {
namespace {

using api::Json;

int64_t T(const char* rfc3339) { return *ParseRfc3339(rfc3339); }
const int64_t kNow = T("2026-11-22T10:00:00Z");
const int64_t kHour = 3'600'000;

Json Body() {
  return Json{{"node", "gpu-a"},
              {"gpus", {0, 1}},
              {"start", "2026-11-23T09:00:00Z"},
              {"end", "2026-11-23T11:00:00Z"},
              {"title", "training run"}};
}

TEST(CreateRequestTest, DecodesEachGpuChoice) {
  auto r = CreateRequestFromJson(Body());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->choice, GpuChoice::kIndices);
  EXPECT_EQ(r->gpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(r->start_ms, T("2026-11-23T09:00:00Z"));
  Json b = Body();
  b.erase("gpus");
  b["count"] = 2;
  EXPECT_EQ(CreateRequestFromJson(b)->choice, GpuChoice::kCount);
  b.erase("count");
  b["whole_node"] = true;
  EXPECT_EQ(CreateRequestFromJson(b)->choice, GpuChoice::kWholeNode);
  b.erase("whole_node");
  b["gpu_uuids"] = {"GPU-1"};
  EXPECT_EQ(CreateRequestFromJson(b)->choice, GpuChoice::kUuids);
}

TEST(CreateRequestTest, AcceptsQuotesAndUnicodeInTitles) {
  Json b = Body();
  b["title"] = "\"quoted\" 'single' — Grüße 训练 🚀";
  b["description"] = "line one\nline two\twith tab";
  auto r = CreateRequestFromJson(b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->title, b["title"].get<std::string>());
  b["title"] = std::string(200, 'x');
  EXPECT_TRUE(CreateRequestFromJson(b).ok());
  std::string emoji;
  for (int i = 0; i < 200; ++i) emoji += "🚀";  // 200 code points, 800 bytes
  b["title"] = emoji;
  EXPECT_TRUE(CreateRequestFromJson(b).ok());
}

TEST(CreateRequestTest, RejectsBadInputNamingTheField) {
  struct Case {
    const char* what;
    std::function<void(Json&)> mutate;
    const char* field;
  } cases[] = {
      {"body not an object", [](Json& b) { b = Json::array(); }, "must be a JSON object"},
      {"unknown field", [](Json& b) { b["gpu"] = 1; }, "gpu"},
      {"missing node", [](Json& b) { b.erase("node"); }, "node"},
      {"bad node name", [](Json& b) { b["node"] = "a b"; }, "node"},
      {"no gpu choice", [](Json& b) { b.erase("gpus"); }, "exactly one"},
      {"two gpu choices", [](Json& b) { b["count"] = 1; }, "exactly one"},
      {"empty gpus", [](Json& b) { b["gpus"] = Json::array(); }, "gpus"},
      {"negative gpu", [](Json& b) { b["gpus"] = {-1}; }, "gpus[0]"},
      {"gpu as string", [](Json& b) { b["gpus"] = {"0"}; }, "gpus[0]"},
      {"duplicate gpu", [](Json& b) { b["gpus"] = {1, 1}; }, "gpus"},
      {"zero count", [](Json& b) { b.erase("gpus"); b["count"] = 0; }, "count"},
      {"huge count", [](Json& b) { b.erase("gpus"); b["count"] = 100000; }, "count"},
      {"whole_node not bool", [](Json& b) { b.erase("gpus"); b["whole_node"] = "yes"; }, "whole_node"},
      {"malformed start", [](Json& b) { b["start"] = "tomorrow"; }, "start"},
      {"start as number", [](Json& b) { b["start"] = 1700000000; }, "start"},
      {"missing end", [](Json& b) { b.erase("end"); }, "end"},
      {"malformed end", [](Json& b) { b["end"] = "2026-11-23T25:00:00Z"; }, "end"},
      {"missing title", [](Json& b) { b.erase("title"); }, "title"},
      {"empty title", [](Json& b) { b["title"] = "  "; }, "title"},
      {"title too long", [](Json& b) { b["title"] = std::string(201, 'x'); }, "title"},
      {"title with newline", [](Json& b) { b["title"] = "a\nb"; }, "title"},
      {"title invalid utf8", [](Json& b) { b["title"] = std::string("a\xff" "b"); }, "title"},
      {"description too long", [](Json& b) { b["description"] = std::string(4001, 'x'); }, "description"},
      {"enforcement not object", [](Json& b) { b["enforcement"] = "kill"; }, "enforcement"},
  };
  for (const auto& c : cases) {
    Json b = Body();
    c.mutate(b);
    Result<CreateRequest> r = Status::Internal("unset");
    try {
      r = CreateRequestFromJson(b);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.what << ": threw " << e.what();
      continue;
    }
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos)
        << c.what << ": " << r.status().message();
  }
}

TEST(CheckNewIntervalTest, AcceptsAndClampsWithinGrace) {
  EXPECT_EQ(*CheckNewInterval(kNow + kHour, kNow + 2 * kHour, kNow), kNow + kHour);
  EXPECT_EQ(*CheckNewInterval(kNow - 30'000, kNow + kHour, kNow), kNow);
}

TEST(CheckNewIntervalTest, RejectsBadIntervals) {
  struct Case {
    const char* what;
    int64_t start, end;
    const char* message;
  } cases[] = {
      {"end before start", kNow + 2 * kHour, kNow + kHour, "before start"},
      {"zero length", kNow + kHour, kNow + kHour, "equals start"},
      {"start in the past", kNow - kHour, kNow + kHour, "in the past"},
      {"start year 9999", T("9999-01-01T00:00:00Z"), T("9999-01-02T00:00:00Z"), "ahead"},
      {"two years long", kNow + kHour, kNow + kHour + 2 * 365 * kDayMs, "at most"},
      {"within grace but ends before now", kNow - 50'000, kNow - 10'000, "before start"},
  };
  for (const auto& c : cases) {
    auto r = CheckNewInterval(c.start, c.end, kNow);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.what << ": " << r.status().message();
  }
}

Reservation Res(int64_t start, int64_t end) {
  Reservation r;
  r.id = 17;
  r.owner_id = 1;
  r.owner = "alice";
  r.node = "gpu-a";
  r.gpus = {0};
  r.title = "t";
  r.start_ms = start;
  r.end_ms = end;
  return r;
}

TEST(ApplyPatchTest, EditRules) {
  const Reservation upcoming = Res(kNow + kHour, kNow + 2 * kHour);
  const Reservation running = Res(kNow - kHour, kNow + kHour);
  const Reservation ended = Res(kNow - 2 * kHour, kNow - kHour);
  Reservation cancelled = upcoming;
  cancelled.cancelled_ms = kNow - 1;
  struct Case {
    const char* what;
    const Reservation* cur;
    Patch patch;
    StatusCode want;
  } cases[] = {
      {"move upcoming", &upcoming, Patch{kNow + 3 * kHour, kNow + 4 * kHour}, StatusCode::kOk},
      {"retitle upcoming", &upcoming, Patch{{}, {}, "new"}, StatusCode::kOk},
      {"move upcoming into the past", &upcoming, Patch{kNow - kHour, {}}, StatusCode::kInvalidArgument},
      {"upcoming end before start", &upcoming, Patch{{}, kNow + kHour / 2}, StatusCode::kInvalidArgument},
      {"extend running", &running, Patch{{}, kNow + 5 * kHour}, StatusCode::kOk},
      {"shorten running", &running, Patch{{}, kNow + 1000}, StatusCode::kOk},
      {"end running now", &running, Patch{{}, kNow}, StatusCode::kOk},
      {"same start on running", &running, Patch{kNow - kHour, kNow + 2 * kHour}, StatusCode::kOk},
      {"move start of running", &running, Patch{kNow, {}}, StatusCode::kConflict},
      {"running end in the past", &running, Patch{{}, kNow - 30 * 60'000}, StatusCode::kInvalidArgument},
      {"change ended", &ended, Patch{{}, {}, "new"}, StatusCode::kConflict},
      {"extend ended", &ended, Patch{{}, kNow + kHour}, StatusCode::kConflict},
      {"change cancelled", &cancelled, Patch{{}, {}, "new"}, StatusCode::kConflict},
  };
  for (const auto& c : cases) {
    auto r = ApplyPatch(*c.cur, c.patch, kNow);
    EXPECT_EQ(r.status().code(), c.want) << c.what << ": " << r.status().ToString();
  }
  EXPECT_EQ(ApplyPatch(running, Patch{{}, kNow - 1000}, kNow)->end_ms, kNow);  // clamped
}

TEST(ApplyCancelTest, CancelsUpcomingEndsRunningRefusesPast) {
  auto up = ApplyCancel(Res(kNow + kHour, kNow + 2 * kHour), kNow);
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(up->StateAt(kNow), State::kCancelled);
  auto run = ApplyCancel(Res(kNow - kHour, kNow + kHour), kNow);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->end_ms, kNow);
  EXPECT_EQ(run->StateAt(kNow), State::kEnded);
  EXPECT_EQ(ApplyCancel(Res(kNow - 2 * kHour, kNow - kHour), kNow).status().code(), StatusCode::kConflict);
  EXPECT_EQ(ApplyCancel(*up, kNow).status().code(), StatusCode::kConflict);
}

std::vector<NodeGpu> FourGpus() {
  std::vector<NodeGpu> g;
  for (uint32_t i = 0; i < 4; ++i) g.push_back({i, "GPU-" + std::to_string(i), "NVIDIA A100"});
  return g;
}

CreateRequest Req(GpuChoice choice) {
  CreateRequest r;
  r.node = "gpu-a";
  r.choice = choice;
  r.start_ms = T("2026-11-23T09:00:00Z");
  r.end_ms = T("2026-11-23T11:00:00Z");
  return r;
}

TEST(ChooseGpusTest, PicksLowestFreeForCount) {
  CreateRequest r = Req(GpuChoice::kCount);
  r.count = 2;
  std::vector<Busy> busy = {{0, 17, "alice", r.start_ms, r.end_ms}};
  EXPECT_EQ(*ChooseGpus(r, FourGpus(), busy), (std::vector<uint32_t>{1, 2}));
}

TEST(ChooseGpusTest, ResolvesUuidsAndWholeNode) {
  CreateRequest r = Req(GpuChoice::kUuids);
  r.gpu_uuids = {"GPU-3", "GPU-1"};
  EXPECT_EQ(*ChooseGpus(r, FourGpus(), {}), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(*ChooseGpus(Req(GpuChoice::kWholeNode), FourGpus(), {}), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(ChooseGpusTest, RefusesUnknownBusyAndTooMany) {
  CreateRequest unknown = Req(GpuChoice::kIndices);
  unknown.gpus = {7};
  EXPECT_EQ(ChooseGpus(unknown, FourGpus(), {}).status().code(), StatusCode::kNotFound);
  CreateRequest bad_uuid = Req(GpuChoice::kUuids);
  bad_uuid.gpu_uuids = {"GPU-x"};
  EXPECT_EQ(ChooseGpus(bad_uuid, FourGpus(), {}).status().code(), StatusCode::kNotFound);
  CreateRequest too_many = Req(GpuChoice::kCount);
  too_many.count = 5;
  EXPECT_EQ(ChooseGpus(too_many, FourGpus(), {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseGpus(Req(GpuChoice::kWholeNode), {}, {}).status().code(), StatusCode::kInvalidArgument);

  CreateRequest named = Req(GpuChoice::kIndices);
  named.gpus = {1};
  std::vector<Busy> busy = {{1, 17, "alice", T("2026-11-23T09:00:00Z"), T("2026-11-23T10:00:00Z")}};
  auto r = ChooseGpus(named, FourGpus(), busy);
  ASSERT_EQ(r.status().code(), StatusCode::kConflict);
  EXPECT_EQ(r.status().message(),
            "gpu-a/1 is reserved by alice from 2026-11-23T09:00:00Z to 2026-11-23T10:00:00Z "
            "(reservation 17)");
  EXPECT_EQ(ChooseGpus(Req(GpuChoice::kWholeNode), FourGpus(), busy).status().code(), StatusCode::kConflict);
  CreateRequest four = Req(GpuChoice::kCount);
  four.count = 4;
  EXPECT_EQ(ChooseGpus(four, FourGpus(), busy).status().code(), StatusCode::kConflict);
}

TEST(ReservationJsonTest, CarriesStateAndTimes) {
  Reservation r = Res(kNow - kHour, kNow + kHour);
  Json j = ToJson(r, kNow);
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["start"], "2026-11-22T09:00:00Z");
  EXPECT_EQ(j["owner"], "alice");
  EXPECT_FALSE(j.contains("avg_util_gpu"));
}

TEST(FormatDurationTest, Formats) {
  EXPECT_EQ(FormatDurationMs(2 * kHour), "2h");
  EXPECT_EQ(FormatDurationMs(kDayMs + 4 * kHour), "1d 4h");
  EXPECT_EQ(FormatDurationMs(90'000), "1m 30s");
}

}  // namespace
}  // namespace rota::reserve
