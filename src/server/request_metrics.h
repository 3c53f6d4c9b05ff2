#pragma once
// RequestMetrics: HTTP request counts and a latency histogram for /metrics.
// Thread-safe.

#include "common/mutex.h"
#include "server/metrics/prometheus_text.h"
#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace rota::server {

class RequestMetrics {
 public:
  static constexpr std::array<double, 11> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0};
  void Observe(const std::string& method, int status, double seconds);
  // Appends the Prometheus text of these metrics to `out`.
  void AppendText(std::string* out) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, metrics::Histogram> by_method_ ROTA_GUARDED_BY(mu_);
  std::map<std::pair<std::string, int>, uint64_t> by_code_ ROTA_GUARDED_BY(mu_);
};

}  // namespace rota::server
