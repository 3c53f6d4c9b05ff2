#include "server/accounts/login_throttle.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace rota::server {

const char* ThrottleScopeName(ThrottleScope scope) {
  return scope == ThrottleScope::kAddress ? "address" : "account";
}

std::string LoginThrottle::AddressKey(const std::string& remote_addr) {
  std::string host = remote_addr;
  if (!host.empty() && host.front() == '[') {
    const size_t end = host.find(']');
    host = host.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  } else if (const size_t colon = host.rfind(':');
             colon != std::string::npos && host.find(':') == colon) {
    host = host.substr(0, colon);  // "a.b.c.d:port"
  }
  unsigned char v6[16];
  if (::inet_pton(AF_INET6, host.c_str(), v6) != 1) return host;  // IPv4 (or unknown) as is
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(v6, kMapped, sizeof kMapped) == 0) {
    ::inet_ntop(AF_INET, v6 + 12, text, sizeof text);
    return text;
  }
  std::memset(v6 + 8, 0, 8);  // one site's /64 is one key
  ::inet_ntop(AF_INET6, v6, text, sizeof text);
  return std::string(text) + "/64";
}

bool LoginThrottle::Forgettable(const Entry& e, const ThrottlePolicy& policy, int64_t now_ms) {
  return e.in_flight == 0 && now_ms >= e.open_at_ms && now_ms - e.last_failure_ms >= policy.forget_ms;
}

LoginThrottle::Entry& LoginThrottle::Get(Table& table, const ThrottlePolicy& policy,
                                         const std::string& key, int64_t now_ms) {
  auto it = table.find(key);
  if (it != table.end()) {
    if (Forgettable(it->second, policy, now_ms)) it->second = Entry{};
    return it->second;
  }
  if (table.size() >= std::max<size_t>(policy.max_keys, 1)) {
    std::erase_if(table, [&](const auto& kv) { return Forgettable(kv.second, policy, now_ms); });
  }
  if (table.size() >= std::max<size_t>(policy.max_keys, 1)) {
    // Still full: the key that failed least recently goes (one with nothing in flight
    // when there is one, so that an outcome still finds its entry).
    auto victim = table.end();
    for (auto i = table.begin(); i != table.end(); ++i) {
      const bool better =
          victim == table.end() ||
          (i->second.in_flight == 0 && victim->second.in_flight != 0) ||
          ((i->second.in_flight == 0) == (victim->second.in_flight == 0) &&
           i->second.last_failure_ms < victim->second.last_failure_ms);
      if (better) victim = i;
    }
    table.erase(victim);
  }
  return table[key];
}

LoginThrottle::Decision LoginThrottle::Check(Entry& e, const ThrottlePolicy& policy,
                                             ThrottleScope scope, int64_t now_ms) {
  Decision d;
  d.scope = scope;
  if (now_ms < e.open_at_ms) {
    d.retry_after_ms = e.open_at_ms - now_ms;
  } else if (e.in_flight >= std::max(1, policy.free_failures - e.failures)) {
    // As many attempts are being checked as may still fail freely: wait for their outcome.
    d.retry_after_ms = policy.base_wait_ms;
  } else {
    d.allowed = true;
    return d;
  }
  d.retry_after_ms = std::max<int64_t>(d.retry_after_ms, 1);
  d.first_refusal = !e.refused;
  e.refused = true;
  return d;
}

void LoginThrottle::Fail(Entry& e, const ThrottlePolicy& policy, int64_t now_ms) {
  e.in_flight = std::max(0, e.in_flight - 1);
  ++e.failures;
  e.last_failure_ms = now_ms;
  const int over = e.failures - policy.free_failures;
  if (over < 0) return;
  int64_t wait = policy.base_wait_ms;
  for (int i = 0; i < over && wait < policy.max_wait_ms; ++i) wait *= 2;
  e.open_at_ms = std::max(e.open_at_ms, now_ms + std::min(wait, policy.max_wait_ms));
  e.refused = false;
}

LoginThrottle::Decision LoginThrottle::Admit(const std::string& address, const std::string& account,
                                             int64_t now_ms) {
  Entry& a = Get(addresses_, options_.address, address, now_ms);
  Decision d = Check(a, options_.address, ThrottleScope::kAddress, now_ms);
  if (!d.allowed) return d;
  Entry& u = Get(accounts_, options_.account, account, now_ms);
  d = Check(u, options_.account, ThrottleScope::kAccount, now_ms);
  if (!d.allowed) return d;
  ++a.in_flight;
  ++u.in_flight;
  return d;
}

void LoginThrottle::Failed(const std::string& address, const std::string& account, int64_t now_ms) {
  Fail(Get(addresses_, options_.address, address, now_ms), options_.address, now_ms);
  Fail(Get(accounts_, options_.account, account, now_ms), options_.account, now_ms);
}

void LoginThrottle::Succeeded(const std::string& address, const std::string& account,
                              int64_t /*now_ms*/) {
  if (auto it = addresses_.find(address); it != addresses_.end()) {
    it->second.in_flight = std::max(0, it->second.in_flight - 1);
  }
  if (auto it = accounts_.find(account); it != accounts_.end()) {
    const int in_flight = std::max(0, it->second.in_flight - 1);
    it->second = Entry{};
    it->second.in_flight = in_flight;
  }
}

void LoginThrottle::Abandoned(const std::string& address, const std::string& account) {
  for (auto* t : {&addresses_, &accounts_}) {
    auto it = t->find(t == &addresses_ ? address : account);
    if (it != t->end()) it->second.in_flight = std::max(0, it->second.in_flight - 1);
  }
}

size_t LoginThrottle::tracked(ThrottleScope scope) const {
  return scope == ThrottleScope::kAddress ? addresses_.size() : accounts_.size();
}

}  // namespace rota::server
