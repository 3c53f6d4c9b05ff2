#pragma once
// Prometheus text exposition (format 0.0.4): numbers, label values, metric
// families and histograms, for GET /metrics. Values only; callers lock.

#include <cstdint>
#include <string>
#include <vector>

namespace rota::server::metrics {

// A sample value as Prometheus reads it back exactly.
std::string Number(double v);
// A label value with \, " and newlines escaped.
std::string Escape(const std::string& v);

// Collects the samples of one metric family, then prints HELP, TYPE and them.
class Family {
 public:
  Family(const char* name, const char* type, const char* help)
      : name_(name), type_(type), help_(help) {}
  // `labels`: name="value" pairs joined by commas (Escape the values).
  void Add(const std::string& labels, double value);
  void AddPlain(double value);
  void AppendTo(std::string* out) const;

 private:
  std::string name_, type_, help_, lines_;
};

// A histogram's counts: cumulative buckets with the given upper bounds
// (ascending), the sum and the count of observations.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), buckets_(bounds_.size()) {}
  void Observe(double v);
  uint64_t count() const { return count_; }
  // Appends NAME_bucket{labels,le=...}, NAME_sum and NAME_count lines;
  // `labels` may be empty.
  void AppendSamples(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace rota::server::metrics
