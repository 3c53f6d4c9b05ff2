#pragma once
// Field readers shared by the JSON decoders: one set of rules (types, ranges,
// required fields, error messages naming the field's path) over any JSON
// document model, through a small value adapter. JsonValue adapts nlohmann's
// DOM (every decoder); api/fast_decode.cc adapts simdjson's (samples messages
// on the server's hot path). An adapter V provides:
//   is_object() is_array() is_string() is_number() is_number_integer()
//   is_number_unsigned() is_boolean() is_null()
//   std::optional<V> find(const char* key)        member of an object
//   std::string_view str()  int64_t i64()  uint64_t u64()  double f64()  bool boolean()
//   size_t size()                                  elements of an array
//   Status each(fn)                                fn(const V& element, size_t i) per element
// Internal to src/api.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/types.h"
#include "common/status.h"

namespace rota::api::detail {

// nlohmann's DOM. Converts to `const Json&` so decoders written against Json
// take its elements as they are.
class JsonValue {
 public:
  JsonValue(const Json& j) : j_(&j) {}  // NOLINT: implicit on purpose
  operator const Json&() const { return *j_; }  // NOLINT
  const Json& json() const { return *j_; }

  bool is_object() const { return j_->is_object(); }
  bool is_array() const { return j_->is_array(); }
  bool is_string() const { return j_->is_string(); }
  bool is_number() const { return j_->is_number(); }
  bool is_number_integer() const { return j_->is_number_integer(); }
  bool is_number_unsigned() const { return j_->is_number_unsigned(); }
  bool is_boolean() const { return j_->is_boolean(); }
  bool is_null() const { return j_->is_null(); }
  std::optional<JsonValue> find(const char* key) const {
    auto it = j_->find(key);
    if (it == j_->end()) return std::nullopt;
    return JsonValue(*it);
  }
  std::string_view str() const { return j_->get_ref<const std::string&>(); }
  int64_t i64() const { return j_->get<int64_t>(); }
  uint64_t u64() const { return j_->get<uint64_t>(); }
  double f64() const { return j_->get<double>(); }
  bool boolean() const { return j_->get<bool>(); }
  size_t size() const { return j_->size(); }
  template <typename Fn>
  Status each(Fn fn) const {
    size_t i = 0;
    for (const Json& e : *j_) RETURN_IF_ERROR(fn(JsonValue(e), i++));
    return Status::Ok();
  }

 private:
  const Json* j_;
};

// Field readers over an object. Each returns InvalidArgument naming `path` on a
// wrong type or range; an absent or null field is "not given".
template <typename V>
class FieldReader {
 public:
  FieldReader(const V& v, std::string path) : v_(v), path_(std::move(path)) {}

  Status CheckObject() const {
    if (!v_.is_object()) return Bad("", "must be an object");
    return Status::Ok();
  }

  bool Has(const char* key) const { return Get(key).has_value(); }

  Status Str(const char* key, std::string* out, bool required, size_t max = kMaxTextLength) const {
    auto v = Get(key);
    if (!v) return required ? Bad(key, "is required") : Status::Ok();
    if (!v->is_string()) return Bad(key, "must be a string");
    std::string_view s = v->str();
    if (s.size() > max) return Bad(key, "is longer than " + std::to_string(max) + " bytes");
    *out = std::string(s);
    return Status::Ok();
  }

  template <typename T>
  Status Int(const char* key, T* out, bool required, int64_t min = 0,
             int64_t max = std::numeric_limits<int64_t>::max()) const {
    auto v = Get(key);
    if (!v) return required ? Bad(key, "is required") : Status::Ok();
    if (!v->is_number_integer()) return Bad(key, "must be an integer");
    int64_t x;
    if (v->is_number_unsigned()) {
      uint64_t u = v->u64();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Bad(key, "is too large");
      x = static_cast<int64_t>(u);
    } else {
      x = v->i64();
    }
    constexpr uint64_t kTypeMax = static_cast<uint64_t>(std::numeric_limits<T>::max());
    constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
    int64_t type_max = kTypeMax > static_cast<uint64_t>(kInt64Max) ? kInt64Max
                                                                   : static_cast<int64_t>(kTypeMax);
    int64_t hi = std::min<int64_t>(max, type_max);
    if (x < min || x > hi) {
      return Bad(key, "must be in [" + std::to_string(min) + ", " + std::to_string(hi) + "]");
    }
    *out = static_cast<T>(x);
    return Status::Ok();
  }

  template <typename T>
  Status OptInt(const char* key, std::optional<T>* out, int64_t min = 0,
                int64_t max = std::numeric_limits<int64_t>::max()) const {
    if (!Has(key)) {
      out->reset();
      return Status::Ok();
    }
    T v{};
    RETURN_IF_ERROR(Int(key, &v, true, min, max));
    *out = v;
    return Status::Ok();
  }

  Status Num(const char* key, double* out, bool required, double min, double max) const {
    auto v = Get(key);
    if (!v) return required ? Bad(key, "is required") : Status::Ok();
    if (!v->is_number()) return Bad(key, "must be a number");
    double x = v->f64();
    if (!std::isfinite(x) || x < min || x > max) {
      return Bad(key, "must be a number in [" + Fmt(min) + ", " + Fmt(max) + "]");
    }
    *out = x;
    return Status::Ok();
  }

  Status OptNum(const char* key, std::optional<double>* out, double min, double max) const {
    if (!Has(key)) return Status::Ok();
    double v;
    RETURN_IF_ERROR(Num(key, &v, true, min, max));
    *out = v;
    return Status::Ok();
  }

  Status Bool(const char* key, bool* out) const {
    auto v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_boolean()) return Bad(key, "must be true or false");
    *out = v->boolean();
    return Status::Ok();
  }

  // Where an element of an array is ("gpus[3]"); the text is built only when an error
  // names it (str()), not for every element decoded.
  class ElementPath {
   public:
    ElementPath(const FieldReader& r, const char* key, size_t i) : r_(r), key_(key), i_(i) {}
    std::string str() const { return r_.Path(key_) + "[" + std::to_string(i_) + "]"; }

   private:
    const FieldReader& r_;
    const char* key_;
    size_t i_;
  };

  // Calls fn(element, const ElementPath&) for each element of array `key`.
  template <typename Fn>
  Status Array(const char* key, size_t max, bool required, Fn fn) const {
    auto v = Get(key);
    if (!v) return required ? Bad(key, "is required") : Status::Ok();
    if (!v->is_array()) return Bad(key, "must be an array");
    if (v->size() > max) return Bad(key, "has more than " + std::to_string(max) + " elements");
    return v->each([&](const V& e, size_t i) -> Status { return fn(e, ElementPath(*this, key, i)); });
  }

  // Appends decode(element) (a Result<T>) to *out for each element of array `key`; an
  // element's error is returned with its path as context.
  template <typename T, typename Decode>
  Status ArrayOf(const char* key, size_t max, bool required, std::vector<T>* out,
                 Decode decode) const {
    return Array(key, max, required, [&](const V& e, const ElementPath& at) -> Status {
      auto x = decode(e);
      if (!x.ok()) return x.status().WithContext(at.str());
      out->push_back(std::move(*x));
      return Status::Ok();
    });
  }

  // REQUIRES: Has(key).
  V at(const char* key) const { return *Get(key); }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  std::optional<V> Get(const char* key) const {
    auto v = v_.find(key);
    if (v && v->is_null()) return std::nullopt;
    return v;
  }
  static std::string Fmt(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  Status Bad(const char* key, const std::string& what) const {
    std::string where = key[0] != '\0' ? Path(key) : (path_.empty() ? "body" : path_);
    return Status::InvalidArgument(where + " " + what);
  }

  V v_;
  std::string path_;
};

}  // namespace rota::api::detail
