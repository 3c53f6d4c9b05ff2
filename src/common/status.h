#pragma once
// Status and Result<T>: rota's error values. Errors never travel as exceptions
// across module boundaries; third-party exceptions are caught at the call site.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rota {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input from outside (API body, CLI flag, config)
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // create of something that exists
  kConflict,            // state does not allow the operation (e.g. overlap)
  kUnauthenticated,     // missing or wrong credentials
  kPermissionDenied,    // authenticated but not allowed
  kResourceExhausted,   // too large, too many, buffer full
  kUnavailable,         // peer or service not reachable right now
  kIoError,             // file system, database
  kUnimplemented,       // not supported (e.g. an NVML field on this GPU)
  kInternal,            // a bug: an invariant did not hold
  kDeadlineExceeded,    // no answer in time (e.g. an agent command)
};

// Returns a stable lower-case name of the code ("invalid_argument").
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
  // A status with an explicit code (e.g. mapped back from an HTTP status).
  static Status FromCode(StatusCode c, std::string m) { return {c, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "context: message" (same code).
  Status WithContext(const std::string& context) const;
  // "invalid_argument: message", or "ok".
  std::string ToString() const;

  bool operator==(const Status& o) const { return code_ == o.code_ && message_ == o.message_; }

 private:
  Status(StatusCode c, std::string m) : code_(c), message_(std::move(m)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rota

#define ROTA_CONCAT_INNER(a, b) a##b
#define ROTA_CONCAT(a, b) ROTA_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::rota::Status _rota_st = (expr);         \
    if (!_rota_st.ok()) return _rota_st;      \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(ROTA_CONCAT(_rota_res_, __LINE__), lhs, expr)
