#include "server/store/gpu_pack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace rota::store {
namespace {

api::GpuSample Full(uint32_t index) {
  api::GpuSample g;
  g.index = index;
  g.util_gpu_pct = 97;
  g.util_memory_pct = 0;  // a zero is a reading, not an absence
  g.memory_used_bytes = uint64_t{80} << 30;
  g.memory_total_bytes = uint64_t{81'559} << 20;
  g.temperature_c = 71;
  g.power_mw = 699'123;
  g.energy_mj = std::numeric_limits<int64_t>::max();  // the largest value a column holds
  g.sm_clock_mhz = 1980;
  g.mem_clock_mhz = 2619;
  g.fan_pct = 100;
  return g;
}

TEST(GpuPackTest, RoundTripsEveryFieldAndKeepsAbsenceAndOrder) {
  api::GpuSample sparse;  // only some fields read
  sparse.index = 63;
  sparse.power_mw = 55'000;
  sparse.energy_mj = 0;
  api::GpuSample failed;
  failed.index = 2;
  failed.failed = true;
  const std::vector<api::GpuSample> in{Full(5), sparse, failed, Full(0)};

  std::string blob = "left over from the last sample";
  PackGpus(in, &blob);
  auto out = UnpackGpus(blob);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 4u);

  const StoredGpu& full = (*out)[0];
  EXPECT_EQ(full.gpu, 5u);
  EXPECT_FALSE(full.failed);
  EXPECT_EQ(full.value[kUtilGpu], 97);
  EXPECT_EQ(full.value[kUtilMem], 0);
  EXPECT_EQ(full.value[kMemUsed], int64_t{80} << 30);
  EXPECT_EQ(full.value[kMemTotal], int64_t{81'559} << 20);
  EXPECT_EQ(full.value[kTemp], 71);
  EXPECT_EQ(full.value[kPowerMw], 699'123);
  EXPECT_EQ(full.value[kEnergyMj], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(full.value[kSmClock], 1980);
  EXPECT_EQ(full.value[kMemClock], 2619);
  EXPECT_EQ(full.value[kFan], 100);

  const StoredGpu& s = (*out)[1];
  EXPECT_EQ(s.gpu, 63u);
  EXPECT_EQ(s.value[kPowerMw], 55'000);
  EXPECT_EQ(s.value[kEnergyMj], 0);
  for (GpuField f : {kUtilGpu, kUtilMem, kMemUsed, kMemTotal, kTemp, kSmClock, kMemClock, kFan}) {
    EXPECT_FALSE(s.value[f].has_value()) << f;
  }
  EXPECT_TRUE((*out)[2].failed);
  EXPECT_EQ((*out)[2].gpu, 2u);
  StoredGpu same_as_first = full;
  same_as_first.gpu = 0;
  EXPECT_EQ((*out)[3], same_as_first);
}

TEST(GpuPackTest, EightFullGpusTakeUnderAThirdOfTheirRowsBytes) {
  std::vector<api::GpuSample> in;
  for (uint32_t i = 0; i < 8; ++i) in.push_back(Full(i));
  std::string blob;
  PackGpus(in, &blob);
  // A gpu_samples row of such a GPU: a 16-column record of 8-byte integers,
  // ~120 bytes with its header, before the B-tree's own overhead.
  EXPECT_LT(blob.size(), 8u * 120 / 3);
  EXPECT_EQ(UnpackGpus(blob)->size(), 8u);
}

TEST(GpuPackTest, NoGpusIsAnEmptyListAndDamageIsAnError) {
  std::string blob;
  PackGpus({}, &blob);
  ASSERT_TRUE(UnpackGpus(blob).ok());
  EXPECT_TRUE(UnpackGpus(blob)->empty());

  PackGpus(std::vector<api::GpuSample>{Full(1)}, &blob);
  ASSERT_TRUE(UnpackGpus(blob).ok());
  // Every truncation of a good blob is refused, none crashes.
  for (size_t n = 0; n < blob.size(); ++n) {
    auto r = UnpackGpus(std::string_view(blob).substr(0, n));
    if (n == 1) {
      EXPECT_TRUE(r.ok());  // the version byte alone: no GPUs
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kIoError) << "truncated to " << n;
    }
  }
  EXPECT_FALSE(UnpackGpus(std::string("\x02", 1)).ok());                // unknown version
  EXPECT_FALSE(UnpackGpus(std::string("\x01\x40\x00", 3)).ok());        // index 64
  EXPECT_FALSE(UnpackGpus(std::string("\x01\x00\x80\x10", 4)).ok());    // mask bit 11
  const std::string overlong = std::string("\x01\x00\x02", 3) + std::string(10, '\xff') + "\x01";
  EXPECT_FALSE(UnpackGpus(overlong).ok());                              // a varint over 64 bits
  const std::string too_big = std::string("\x01\x00\x02", 3) + std::string(9, '\xff') + "\x01";
  EXPECT_FALSE(UnpackGpus(too_big).ok());                               // 2^64 - 1 > INT64_MAX
}

}  // namespace
}  // namespace rota::store
