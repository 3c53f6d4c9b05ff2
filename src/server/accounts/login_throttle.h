#pragma once
// LoginThrottle: the decisions of login throttling, per source address and per account,
// as a pure value-in, decision-out core: time comes in as `now_ms`, nothing here reads a
// clock, does I/O or locks. The shell (logins.h) holds it under its mutex.
//
// Rule, the same for both scopes with their own policy:
//  - the first `free_failures` failed attempts cost nothing;
//  - the failure that reaches `free_failures`, and every later one, closes the key for
//    base_wait * 2^(failures - free_failures), at most max_wait;
//  - while closed, attempts are refused (429, Retry-After) without checking a password,
//    and a refused attempt does not count (the wait does not grow with the flood);
//  - attempts in flight count against what is left, so that concurrent attempts cannot
//    pass the bound together: once the free attempts are used up, one attempt at a time;
//  - a success clears the account's record; an address keeps its failures (an account
//    of one's own must not buy more guesses at others);
//  - a key with nothing in flight, open, and no failure for `forget_ms` is forgotten.
// Memory is bounded: at most `max_keys` keys per scope; a full table first drops what is
// forgotten, then the key failed least recently.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace rota::server {

struct ThrottlePolicy {
  int free_failures = 5;
  int64_t base_wait_ms = 1'000;
  int64_t max_wait_ms = 15 * 60'000;
  int64_t forget_ms = 60 * 60'000;
  size_t max_keys = 10'000;
};

struct LoginThrottleOptions {
  ThrottlePolicy address;  // per source address (IPv4, or an IPv6 /64)
  ThrottlePolicy account{5, 1'000, 5 * 60'000, 60 * 60'000, 10'000};  // per username
};

enum class ThrottleScope { kAddress, kAccount };
const char* ThrottleScopeName(ThrottleScope scope);  // "address", "account"

class LoginThrottle {
 public:
  explicit LoginThrottle(LoginThrottleOptions options = {}) : options_(options) {}

  struct Decision {
    bool allowed = false;
    // Refused: which key, how long until an attempt may pass (>= 1 ms), and whether this
    // is the first refusal since the key closed (the shell records an audit entry once).
    ThrottleScope scope = ThrottleScope::kAddress;
    int64_t retry_after_ms = 0;
    bool first_refusal = false;
  };
  // Admits an attempt from `address` for `account` at `now_ms`, or refuses it. An admitted
  // attempt is in flight until Failed or Succeeded is called for it (exactly one of them).
  Decision Admit(const std::string& address, const std::string& account, int64_t now_ms);
  // The outcome of an admitted attempt.
  void Failed(const std::string& address, const std::string& account, int64_t now_ms);
  void Succeeded(const std::string& address, const std::string& account, int64_t now_ms);
  // An admitted attempt that was never made (e.g. the hashing queue was full).
  void Abandoned(const std::string& address, const std::string& account);

  size_t tracked(ThrottleScope scope) const;

  // The key of a peer: "a.b.c.d" for "a.b.c.d:port" (and IPv4-mapped IPv6), the /64 prefix
  // for an IPv6 peer ("[2001:db8:1:2::5]:port" -> "2001:db8:1:2::/64").
  static std::string AddressKey(const std::string& remote_addr);

 private:
  struct Entry {
    int failures = 0;
    int in_flight = 0;
    int64_t last_failure_ms = 0;
    int64_t open_at_ms = 0;  // closed until then
    bool refused = false;    // refused since it last closed
  };
  using Table = std::unordered_map<std::string, Entry>;

  // The entry for `key`, made room for and forgotten as the policy says.
  Entry& Get(Table& table, const ThrottlePolicy& policy, const std::string& key, int64_t now_ms);
  static bool Forgettable(const Entry& e, const ThrottlePolicy& policy, int64_t now_ms);
  static void Fail(Entry& e, const ThrottlePolicy& policy, int64_t now_ms);
  // Refusal for `e` at `now_ms`, or allowed.
  static Decision Check(Entry& e, const ThrottlePolicy& policy, ThrottleScope scope, int64_t now_ms);

  const LoginThrottleOptions options_;
  Table addresses_;
  Table accounts_;
};

}  // namespace rota::server
