#pragma once
// JsonFields: validated reads of one JSON object's fields, errors naming the
// field ("policy.windows.allow[1].from: ..."). Used by rota_reserve and rota_jobs.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::reserve {

class JsonFields {
 public:
  // `j` must outlive this; `path` prefixes field names in messages ("" for none).
  JsonFields(const api::Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  // InvalidArgument unless `j` is an object whose keys are all in `allowed`.
  Status Only(std::initializer_list<const char*> allowed) const;
  bool Has(const char* key) const { return j_.is_object() && j_.contains(key) && !j_[key].is_null(); }
  std::string Name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // Each leaves *out unchanged when the field is absent (and not required).
  Status Str(const char* key, std::string* out, bool required, size_t max_bytes) const;
  Status Int(const char* key, int64_t* out, int64_t min, int64_t max) const;
  Status Number(const char* key, double* out, double min, double max) const;
  Status Bool(const char* key, bool* out) const;
  Status Time(const char* key, int64_t* out, bool required) const;       // RFC 3339
  Status Duration(const char* key, int64_t* out) const;                  // "8h", "14d"
  Status UintArray(const char* key, std::vector<uint32_t>* out, size_t max_items) const;
  Status StrArray(const char* key, std::vector<std::string>* out, size_t max_items,
                  size_t max_bytes) const;

 private:
  const api::Json& j_;
  std::string path_;
};

}  // namespace rota::reserve
