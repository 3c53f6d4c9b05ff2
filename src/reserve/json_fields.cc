#include "reserve/json_fields.h"

#include <cmath>
#include <cstdio>

#include "common/time_util.h"
#include "reserve/cli_time.h"

namespace rota::reserve {

Status JsonFields::Only(std::initializer_list<const char*> allowed) const {
  if (!j_.is_object()) {
    return Status::InvalidArgument((path_.empty() ? std::string("body") : path_) +
                                   ": must be a JSON object");
  }
  for (const auto& [key, value] : j_.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return Status::InvalidArgument(Name(key) + ": unknown field (known: " + list + ")");
    }
  }
  return Status::Ok();
}

Status JsonFields::Str(const char* key, std::string* out, bool required, size_t max_bytes) const {
  if (!Has(key)) {
    return required ? Status::InvalidArgument(Name(key) + ": required") : Status::Ok();
  }
  const auto& v = j_[key];
  if (!v.is_string()) return Status::InvalidArgument(Name(key) + ": must be a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return Status::InvalidArgument(Name(key) + ": longer than " + std::to_string(max_bytes) +
                                   " bytes");
  }
  *out = s;
  return Status::Ok();
}

Status JsonFields::Int(const char* key, int64_t* out, int64_t min, int64_t max) const {
  if (!Has(key)) return Status::Ok();
  const auto& v = j_[key];
  if (!v.is_number_integer()) return Status::InvalidArgument(Name(key) + ": must be an integer");
  int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                  ? INT64_MAX
                  : v.get<int64_t>();
  if (x < min || x > max) {
    return Status::InvalidArgument(Name(key) + ": must be between " + std::to_string(min) +
                                   " and " + std::to_string(max));
  }
  *out = x;
  return Status::Ok();
}

Status JsonFields::Number(const char* key, double* out, double min, double max) const {
  if (!Has(key)) return Status::Ok();
  const auto& v = j_[key];
  if (!v.is_number()) return Status::InvalidArgument(Name(key) + ": must be a number");
  double x = v.get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    // "%g": 0 and 1e+06, not 0.000000 and 1000000.000000.
    char range[64];
    std::snprintf(range, sizeof range, "%.12g and %.12g", min, max);
    return Status::InvalidArgument(Name(key) + ": must be between " + range);
  }
  *out = x;
  return Status::Ok();
}

Status JsonFields::Bool(const char* key, bool* out) const {
  if (!Has(key)) return Status::Ok();
  if (!j_[key].is_boolean()) return Status::InvalidArgument(Name(key) + ": must be true or false");
  *out = j_[key].get<bool>();
  return Status::Ok();
}

Status JsonFields::Time(const char* key, int64_t* out, bool required) const {
  std::string text;
  RETURN_IF_ERROR(Str(key, &text, required, 64));
  if (!Has(key)) return Status::Ok();
  auto t = ParseRfc3339(text);
  if (!t.ok()) return t.status().WithContext(Name(key));
  *out = *t;
  return Status::Ok();
}

Status JsonFields::Duration(const char* key, int64_t* out) const {
  std::string text;
  RETURN_IF_ERROR(Str(key, &text, false, 32));
  if (!Has(key)) return Status::Ok();
  auto d = ParseCliDuration(text);
  if (!d.ok()) return d.status().WithContext(Name(key));
  *out = *d;
  return Status::Ok();
}

Status JsonFields::UintArray(const char* key, std::vector<uint32_t>* out, size_t max_items) const {
  if (!Has(key)) return Status::Ok();
  const auto& v = j_[key];
  if (!v.is_array()) return Status::InvalidArgument(Name(key) + ": must be an array of integers");
  if (v.size() > max_items) {
    return Status::InvalidArgument(Name(key) + ": more than " + std::to_string(max_items) +
                                   " items");
  }
  out->clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& e = v[i];
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 1'000'000) {
      return Status::InvalidArgument(Name(key) + "[" + std::to_string(i) +
                                     "]: must be a non-negative integer");
    }
    out->push_back(static_cast<uint32_t>(e.get<int64_t>()));
  }
  return Status::Ok();
}

Status JsonFields::StrArray(const char* key, std::vector<std::string>* out, size_t max_items,
                            size_t max_bytes) const {
  if (!Has(key)) return Status::Ok();
  const auto& v = j_[key];
  if (!v.is_array()) return Status::InvalidArgument(Name(key) + ": must be an array of strings");
  if (v.size() > max_items) {
    return Status::InvalidArgument(Name(key) + ": more than " + std::to_string(max_items) +
                                   " items");
  }
  out->clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& e = v[i];
    if (!e.is_string() || e.get_ref<const std::string&>().empty() ||
        e.get_ref<const std::string&>().size() > max_bytes) {
      return Status::InvalidArgument(Name(key) + "[" + std::to_string(i) +
                                     "]: must be a non-empty string of at most " +
                                     std::to_string(max_bytes) + " bytes");
    }
    out->push_back(e.get<std::string>());
  }
  return Status::Ok();
}

}  // namespace rota::reserve
