#include "server/leadership/forwarded_client.h"

#include <sodium.h>

#include <array>

namespace rota::server::leadership {
namespace {

// HMAC-SHA-256 of what is signed, hex. The domain string keeps these MACs apart from the
// tokens' (same key).
std::string Sign(const std::string& key, const std::string& client, const net::HttpRequest& req) {
  const std::string msg = "rota forwarded client\n" + client + "\n" + req.method + " " + req.target;
  std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(msg.data()), msg.size());
  crypto_auth_hmacsha256_final(&st, mac.data());
  std::string hex(mac.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), mac.data(), mac.size());
  hex.pop_back();
  return hex;
}

// An IPv4 or IPv6 literal's characters only (what remote_addr holds before its port).
bool PlausibleAddress(const std::string& a) {
  if (a.empty() || a.size() > 64) return false;
  for (char c : a) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' ||
                    c == ':' || c == '[' || c == ']';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> SignedClientHeaders(const std::string& key, const net::HttpRequest& req,
                                             const std::string& client) {
  return {std::string(kClientHeader) + ": " + client, std::string(kClientSigHeader) + ": " + Sign(key, client, req)};
}

bool AdoptForwardedClient(const std::string& key, net::HttpRequest* req) {
  if (key.empty()) return false;
  const std::string client = req->Header("x-rota-client");
  const std::string sig = req->Header("x-rota-client-sig");
  if (client.empty() || sig.empty() || !PlausibleAddress(client)) return false;
  const std::string want = Sign(key, client, *req);
  if (sig.size() != want.size() || sodium_memcmp(sig.data(), want.data(), want.size()) != 0) return false;
  req->remote_addr = client + ":0";
  return true;
}

}  // namespace rota::server::leadership
