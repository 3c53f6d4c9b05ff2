// PowerLimiter against the simulated NVML (the real provider code path).
#include "agent/power_limiter.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "gpu/gpu_test_util.h"

namespace rota::agent {
namespace {

using api::PowerOutcome;

class PowerLimiterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    const std::string config = dir_.path() + "/sim.json";
    ASSERT_TRUE(WriteFileAtomic(config, R"({"node":"plt-)" + std::to_string(getpid()) + R"(",
      "gpus":[{"model":"A","power_limit_w":400,"min_power_limit_w":100},
              {"model":"B","power_limit_w":300},
              {"model":"C","power_limit_w":300}],
      "faults":{"2:set_power_limit":"not_supported"}})").ok());
    setenv("ROTA_SIM_NVML_CONFIG", config.c_str(), 1);
    setenv("ROTA_SIM_NVML_REFRESH_MS", "0", 1);
    auto p = gpu::OpenNvml(ROTA_SIM_NVML_PATH);
    ASSERT_TRUE(p.ok()) << p.status().message();
    provider_ = std::move(*p);
    auto devices = provider_->Devices();
    ASSERT_TRUE(devices.ok());
    gpus_ = *devices;
    state_ = dir_.path() + "/power-limits.json";
  }
  void TearDown() override {
    // Leave the (process-wide) simulated limits at their defaults for other tests.
    if (provider_) {
      for (const auto& g : gpus_) {
        if (g.power_default_mw) (void)provider_->SetPowerLimit(g.index, *g.power_default_mw);
      }
    }
    unsetenv("ROTA_SIM_NVML_CONFIG");
    unsetenv("ROTA_SIM_NVML_REFRESH_MS");
  }
  uint32_t Current(uint32_t index) { return provider_->GetPowerLimits(index)->current_mw; }

  gpu::testing::TempDir dir_;
  std::unique_ptr<gpu::GpuProvider> provider_;
  std::vector<api::GpuInfo> gpus_;
  std::string state_;
};

TEST_F(PowerLimiterTest, RegistrationCarriesTheRange) {
  ASSERT_EQ(gpus_.size(), 3u);
  EXPECT_EQ(gpus_[0].power_min_mw, 100'000u);
  EXPECT_EQ(gpus_[0].power_max_mw, 400'000u);
  EXPECT_EQ(gpus_[0].power_default_mw, 400'000u);
  EXPECT_EQ(gpus_[1].power_min_mw, 75'000u);  // a quarter of the maximum by default
}

TEST_F(PowerLimiterTest, SetsRestoresAndReportsRefusals) {
  if (geteuid() != 0) GTEST_SKIP() << "setting a limit needs root, as with the real driver";
  PowerLimiter limiter(provider_.get(), gpus_, state_);
  api::PowerLimitsMsg msg;
  msg.gpus = {{0, gpus_[0].uuid, 250'000, ""}, {1, gpus_[1].uuid, std::nullopt, ""},
              {2, gpus_[2].uuid, 200'000, ""}};
  auto report = limiter.Apply(msg);
  ASSERT_EQ(report.gpus.size(), 3u);
  EXPECT_EQ(report.gpus[0].outcome, PowerOutcome::kSet);
  EXPECT_EQ(report.gpus[0].limit_mw, 250'000u);
  EXPECT_EQ(report.gpus[0].previous_mw, 400'000u);
  EXPECT_EQ(Current(0), 250'000u);
  EXPECT_EQ(report.gpus[1].outcome, PowerOutcome::kUnchanged);
  EXPECT_EQ(report.gpus[2].outcome, PowerOutcome::kRefused);
  EXPECT_NE(report.gpus[2].detail.find("does not support it"), std::string::npos) << report.gpus[2].detail;
  EXPECT_EQ(limiter.changed().size(), 1u);
  EXPECT_TRUE(ReadFile(state_).ok()) << "the changed GPU is recorded";

  // Out of range and the wrong GPU: refused / error, nothing changed.
  msg.gpus = {{0, gpus_[0].uuid, 50'000, ""}, {1, "GPU-not-this-one", 200'000, ""}};
  report = limiter.Apply(msg);
  EXPECT_EQ(report.gpus[0].outcome, PowerOutcome::kRefused);
  EXPECT_NE(report.gpus[0].detail.find("100..400 W"), std::string::npos) << report.gpus[0].detail;
  EXPECT_EQ(report.gpus[1].outcome, PowerOutcome::kError);
  EXPECT_NE(report.gpus[1].detail.find("not GPU-not-this-one"), std::string::npos);
  EXPECT_EQ(Current(0), 250'000u);
  EXPECT_EQ(Current(1), 300'000u);

  // A message without GPU 0 gives it its default back.
  report = limiter.Apply(api::PowerLimitsMsg{});
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_EQ(report.gpus[0].outcome, PowerOutcome::kRestored);
  EXPECT_EQ(Current(0), 400'000u);
  EXPECT_TRUE(limiter.changed().empty());
  EXPECT_FALSE(ReadFile(state_).ok()) << "nothing left to restore";
}

TEST_F(PowerLimiterTest, RestoresAtStopAndAfterAnUncleanStop) {
  if (geteuid() != 0) GTEST_SKIP() << "setting a limit needs root, as with the real driver";
  {
    PowerLimiter limiter(provider_.get(), gpus_, state_);
    api::PowerLimitsMsg msg;
    msg.gpus = {{1, gpus_[1].uuid, 150'000, ""}};
    ASSERT_EQ(limiter.Apply(msg).gpus[0].outcome, PowerOutcome::kSet);
    auto stop = limiter.RestoreAll();
    ASSERT_EQ(stop.gpus.size(), 1u);
    EXPECT_EQ(stop.gpus[0].outcome, PowerOutcome::kRestored);
    EXPECT_EQ(Current(1), 300'000u);
  }
  {
    // An agent killed after setting a limit: the next one restores it at start.
    PowerLimiter killed(provider_.get(), gpus_, state_);
    api::PowerLimitsMsg msg;
    msg.gpus = {{1, gpus_[1].uuid, 120'000, ""}};
    ASSERT_EQ(killed.Apply(msg).gpus[0].outcome, PowerOutcome::kSet);
  }
  EXPECT_EQ(Current(1), 120'000u);
  PowerLimiter next(provider_.get(), gpus_, state_);
  auto restored = next.RestoreLeftovers();
  ASSERT_EQ(restored.gpus.size(), 1u);
  EXPECT_EQ(restored.gpus[0].outcome, PowerOutcome::kRestored);
  EXPECT_EQ(Current(1), 300'000u);
}

TEST(PowerLimiterNoGpuTest, AnswersEveryRequestWithAReason) {
  PowerLimiter limiter(nullptr, {}, "");
  api::PowerLimitsMsg msg;
  msg.gpus = {{0, "GPU-x", 100'000, ""}};
  auto report = limiter.Apply(msg);
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_EQ(report.gpus[0].outcome, PowerOutcome::kError);
  EXPECT_NE(report.gpus[0].detail.find("NVML"), std::string::npos);
}

}  // namespace
}  // namespace rota::agent
