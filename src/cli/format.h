#pragma once
// Text formatting for CLI tables.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::cli {

// A table printed with columns padded to their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "79.2GiB", "512MiB", "-" for absent.
std::string Bytes(const api::Json& v);
// "87%" or "-".
std::string Percent(const api::Json& v);
// A metric's value with 6 significant digits ("0.25", "1.23457e+06").
std::string FormatMetric(double v);
// Integer field with a unit suffix ("65C") or "-".
std::string WithUnit(const api::Json& v, const std::string& unit, double scale = 1, int decimals = 0);
// "12s ago" style age of an RFC 3339 time relative to now_ms; "never" for null.
std::string Age(const api::Json& rfc3339, int64_t now_ms);
// The time since an RFC 3339 time, "2m" ("-" when absent): how long something lasted.
std::string Since(const api::Json& rfc3339, int64_t now_ms);
// Text of a string field or "-".
std::string Str(const api::Json& obj, const char* key);
// A time flag's value: "2h" (that long before now_ms) or an RFC 3339 time, as
// RFC 3339. InvalidArgument naming `flag` otherwise.
Result<std::string> CliTime(const std::string& flag, const std::string& text, int64_t now_ms);

}  // namespace rota::cli
