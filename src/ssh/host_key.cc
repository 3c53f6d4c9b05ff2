#include "ssh/host_key.h"

#include <sodium.h>

#include <array>
#include <cstdint>

namespace rota::ssh {
namespace {

struct KeyType {
  const char* type;
  const char* name;  // as ssh-keygen -l prints it
  int rank;          // preference when no key is pinned: lower first
  size_t fields;     // SSH strings in its wire format, the type included
};

constexpr std::array<KeyType, 7> kTypes = {{
    {"ssh-ed25519", "ED25519", 0, 2},
    {"ecdsa-sha2-nistp256", "ECDSA", 1, 3},
    {"ecdsa-sha2-nistp384", "ECDSA", 1, 3},
    {"ecdsa-sha2-nistp521", "ECDSA", 1, 3},
    {"ssh-rsa", "RSA", 2, 3},
    {"sk-ssh-ed25519@openssh.com", "ED25519-SK", 3, 3},
    {"sk-ecdsa-sha2-nistp256@openssh.com", "ECDSA-SK", 3, 4},
}};

const KeyType* FindType(std::string_view type) {
  for (const auto& t : kTypes) {
    if (type == t.type) return &t;
  }
  return nullptr;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view b64, int variant) {
  std::string bin(b64.size(), '\0');
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bin.data()), bin.size(), b64.data(),
                        b64.size(), nullptr, &len, &end, variant) != 0 ||
      end != b64.data() + b64.size()) {
    return std::nullopt;
  }
  bin.resize(len);
  return bin;
}

std::string EncodeBase64(std::string_view bin, int variant) {
  std::string out(sodium_base64_ENCODED_LEN(bin.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bin.data()),
                    bin.size(), variant);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

// The SSH "string"s (uint32 length, big-endian, then bytes) that make up a key
// blob; nullopt unless they fill it exactly.
std::optional<std::vector<std::string_view>> Strings(std::string_view blob) {
  std::vector<std::string_view> out;
  while (!blob.empty()) {
    if (blob.size() < 4) return std::nullopt;
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(blob[i]);
    if (n == 0 || n > blob.size() - 4) return std::nullopt;
    out.push_back(blob.substr(4, n));
    blob.remove_prefix(4 + n);
  }
  return out;
}

Result<HostKey> KeyFrom(std::string_view type, std::string_view b64) {
  const std::string shown(type.substr(0, 60));
  if (type.find("-cert-") != std::string_view::npos) {
    return Status::InvalidArgument("'" + shown +
                                   "' is a host certificate; give the host key itself");
  }
  const KeyType* known = FindType(type);
  if (known == nullptr) {
    return Status::InvalidArgument("'" + shown +
                                   "' is not a host key type (ssh-ed25519, ecdsa-sha2-nistp256, "
                                   "-384, -521 or ssh-rsa)");
  }
  if (b64.size() > 16384) return Status::InvalidArgument(shown + " key is too long");
  auto blob = DecodeBase64(b64, sodium_base64_VARIANT_ORIGINAL);
  if (!blob) return Status::InvalidArgument("the " + shown + " key is not valid base64");
  auto fields = Strings(*blob);
  if (!fields || fields->size() != known->fields || (*fields)[0] != type ||
      (type == "ssh-ed25519" && (*fields)[1].size() != crypto_sign_ed25519_PUBLICKEYBYTES)) {
    return Status::InvalidArgument("the " + shown + " key's data is not an " + shown + " key");
  }
  return HostKey{std::string(type), std::move(*blob)};
}

}  // namespace

std::string HostKey::Line() const {
  return type + " " + EncodeBase64(blob, sodium_base64_VARIANT_ORIGINAL);
}

std::string HostKey::Fingerprint() const {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(blob.data()), blob.size());
  return "SHA256:" +
         EncodeBase64(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest),
                      sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
}

std::string HostKey::Describe() const {
  const KeyType* t = FindType(type);
  return Fingerprint() + " (" + (t == nullptr ? type : t->name) + ")";
}

Result<HostKey> ParseHostKey(std::string_view line) {
  auto f = Fields(line);
  if (f.size() >= 3 && FindType(f[0]) == nullptr && FindType(f[1]) != nullptr) {
    return KeyFrom(f[1], f[2]);  // "host type base64"
  }
  if (f.size() < 2) {
    return Status::InvalidArgument(
        "a host key is 'TYPE BASE64' (a line of the node's "
        "/etc/ssh/ssh_host_*_key.pub)");
  }
  return KeyFrom(f[0], f[1]);
}

std::vector<HostKey> ParseKeyscan(std::string_view output) {
  std::vector<HostKey> keys;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    auto f = Fields(line);
    if (f.size() < 3 || f[0][0] == '#') continue;
    if (auto key = KeyFrom(f[1], f[2]); key.ok()) keys.push_back(std::move(*key));
  }
  return keys;
}

bool HostKeyPin::Matches(const HostKey& k) const {
  return key ? *key == k : fingerprint == k.Fingerprint();
}

std::string HostKeyPin::Describe() const { return key ? key->Describe() : fingerprint; }

Result<HostKeyPin> ParseHostKeyPin(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  constexpr std::string_view kSha = "SHA256:";
  if (text.substr(0, kSha.size()) == kSha) {
    std::string_view b64 = text.substr(kSha.size());
    while (!b64.empty() && b64.back() == '=') b64.remove_suffix(1);
    auto digest = DecodeBase64(b64, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
    if (!digest || digest->size() != crypto_hash_sha256_BYTES) {
      return Status::InvalidArgument("'" + std::string(text.substr(0, 80)) +
                                     "' is not a SHA256 fingerprint (SHA256: and 43 base64 "
                                     "characters, as ssh-keygen -lf prints it)");
    }
    return HostKeyPin{std::nullopt, "SHA256:" + std::string(b64)};
  }
  if (text.substr(0, 4) == "MD5:") {
    return Status::InvalidArgument(
        "MD5 fingerprints are not accepted: give the SHA256 one "
        "(ssh-keygen -lf KEY.pub) or the key itself");
  }
  auto key = ParseHostKey(text);
  if (!key.ok()) {
    return Status::InvalidArgument(key.status().message() +
                                   "; a host key is given as an OpenSSH public key line "
                                   "('ssh-ed25519 AAAA...') or its SHA256:... fingerprint");
  }
  std::string fp = key->Fingerprint();
  return HostKeyPin{std::move(*key), std::move(fp)};
}

Result<HostKey> ChooseHostKey(const std::vector<HostKey>& seen, const HostKeyPin* pin,
                              const std::string& where) {
  if (seen.empty()) return Status::Unavailable(where + " presented no host key");
  if (pin != nullptr) {
    for (const auto& k : seen) {
      if (pin->Matches(k)) return k;
    }
    std::string presented;
    for (const auto& k : seen) presented += (presented.empty() ? "" : ", ") + k.Describe();
    return Status::Conflict("host key mismatch: expected " + pin->Describe() + ", " + where +
                            " presents " + presented);
  }
  auto rank = [](const HostKey& k) {
    const KeyType* t = FindType(k.type);
    return t == nullptr ? 99 : t->rank;
  };
  const HostKey* best = &seen.front();
  for (const auto& k : seen) {
    if (rank(k) < rank(*best)) best = &k;
  }
  return *best;
}

std::string KnownHostsLine(const SshTarget& target, const HostKey& key) {
  std::string host =
      target.port == 22 ? target.host : "[" + target.host + "]:" + std::to_string(target.port);
  return host + " " + key.Line();
}

std::vector<std::string> KeyscanArgv(const SshTarget& target, int timeout_s) {
  return {"ssh-keyscan", "-T",       std::to_string(timeout_s), "-p", std::to_string(target.port),
          "--",          target.host};
}

}  // namespace rota::ssh
