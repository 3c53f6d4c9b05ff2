#include "server/store/history.h"

#include <array>

namespace rota::store {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kHour = 60 * kMinuteMs;
constexpr int64_t kDay = 24 * kHour;
constexpr std::array<int64_t, 21> kRoundSteps = {
    kSecond,   2 * kSecond,   5 * kSecond,   10 * kSecond,   15 * kSecond,   30 * kSecond,
    kMinuteMs, 2 * kMinuteMs, 5 * kMinuteMs, 10 * kMinuteMs, 15 * kMinuteMs, 30 * kMinuteMs,
    kHour,     2 * kHour,     3 * kHour,     6 * kHour,      12 * kHour,     kDay,
    2 * kDay,  7 * kDay,      30 * kDay};

}  // namespace

int64_t BucketStart(int64_t t_ms, int64_t step_ms) {
  int64_t q = t_ms / step_ms;
  if (t_ms % step_ms != 0 && t_ms < 0) --q;
  return q * step_ms;
}

int64_t BucketCount(int64_t from_ms, int64_t to_ms, int64_t step_ms) {
  return (BucketStart(to_ms - 1, step_ms) - BucketStart(from_ms, step_ms)) / step_ms + 1;
}

Result<int64_t> ResolveStep(int64_t from_ms, int64_t to_ms, int64_t step_ms) {
  if (from_ms < 0) {
    return Status::InvalidArgument("from: must be >= 0 (Unix ms), got " + std::to_string(from_ms));
  }
  if (from_ms >= to_ms) {
    return Status::InvalidArgument("from (" + std::to_string(from_ms) + ") must be before to (" +
                                   std::to_string(to_ms) + ")");
  }
  if (step_ms < 0 || (step_ms > 0 && step_ms < kMinStepMs)) {
    return Status::InvalidArgument("step: must be 0 (auto) or at least " +
                                   std::to_string(kMinStepMs) + " ms, got " +
                                   std::to_string(step_ms));
  }
  if (step_ms == 0) {
    const int64_t span = to_ms - from_ms;
    int64_t want = (span + kAutoHistoryPoints - 1) / kAutoHistoryPoints;
    for (int64_t s : kRoundSteps) {
      if (s >= want) return s;
    }
    return (want + kDay - 1) / kDay * kDay;
  }
  const int64_t points = BucketCount(from_ms, to_ms, step_ms);
  if (points > kMaxHistoryPoints) {
    const int64_t span = to_ms - from_ms;
    return Status::InvalidArgument(
        "step " + std::to_string(step_ms) + " ms over " + std::to_string(span) + " ms gives " +
        std::to_string(points) + " points; at most " + std::to_string(kMaxHistoryPoints) +
        " are allowed (use step >= " + std::to_string(span / (kMaxHistoryPoints - 1) + 1) +
        " ms, or 0 for auto)");
  }
  return step_ms;
}

SeriesBuilder::SeriesBuilder(int64_t step_ms, std::vector<std::string> metrics,
                             std::vector<std::string> counters)
    : step_(step_ms),
      metrics_(std::move(metrics)),
      counters_(std::move(counters)),
      acc_(metrics_.size()),
      last_(counters_.size()) {}

void SeriesBuilder::Row(int64_t t_ms, int64_t samples) {
  const int64_t b = BucketStart(t_ms, step_);
  if (open_ && b != bucket_) Close();
  if (!open_) {
    open_ = true;
    bucket_ = b;
  }
  samples_ += samples;
}

void SeriesBuilder::Metric(size_t i, double sum, int64_t count, std::optional<double> max) {
  Acc& a = acc_[i];
  if (count <= 0) return;
  a.sum += sum;
  a.count += count;
  if (max && (!a.max || *max > *a.max)) a.max = max;
}

void SeriesBuilder::Counter(size_t i, double value, int64_t t_ms) {
  Last& l = last_[i];
  if (!l.value || t_ms >= l.t_ms) {
    l.value = value;
    l.t_ms = t_ms;
  }
}

void SeriesBuilder::Close() {
  SeriesPoint p;
  p.t_ms = bucket_;
  p.samples = samples_;
  for (size_t i = 0; i < acc_.size(); ++i) {
    const Acc& a = acc_[i];
    if (a.count > 0) {
      p.avg.emplace_back(metrics_[i], a.sum / static_cast<double>(a.count));
      if (a.max) p.max.emplace_back(metrics_[i], *a.max);
    }
    acc_[i] = Acc{};
  }
  for (size_t i = 0; i < last_.size(); ++i) {
    if (last_[i].value) p.last.emplace_back(counters_[i], *last_[i].value);
    last_[i] = Last{};
  }
  points_.push_back(std::move(p));
  samples_ = 0;
  open_ = false;
}

std::vector<SeriesPoint> SeriesBuilder::Finish() {
  if (open_) Close();
  std::vector<SeriesPoint> out = std::move(points_);
  points_.clear();
  return out;
}

}  // namespace rota::store
