#include "server/metrics/prometheus_text.h"

#include <cstdio>

namespace rota::server::metrics {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void Family::Add(const std::string& labels, double value) {
  lines_ += name_ + "{" + labels + "} " + Number(value) + "\n";
}

void Family::AddPlain(double value) { lines_ += name_ + " " + Number(value) + "\n"; }

void Family::AppendTo(std::string* out) const {
  *out += "# HELP " + name_ + " " + help_ + "\n# TYPE " + name_ + " " + type_ + "\n" + lines_;
}

void Histogram::Observe(double v) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (v <= bounds_[i]) buckets_[i]++;
  }
  count_++;
  sum_ += v;
}

void Histogram::AppendSamples(const std::string& name, const std::string& labels,
                              std::string* out) const {
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < bounds_.size(); ++i) {
    *out += name + "_bucket{" + labels + sep + "le=\"" + Number(bounds_[i]) + "\"} " +
            std::to_string(buckets_[i]) + "\n";
  }
  *out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count_) + "\n";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  *out += name + "_sum" + braces + " " + Number(sum_) + "\n";
  *out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

}  // namespace rota::server::metrics
