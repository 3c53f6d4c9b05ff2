#pragma once
// SecretBox: authenticated encryption of secret values at rest (AES-256-GCM,
// OpenSSL EVP) under a keyring read from the data directory.
//
// The keyring file (DATA_DIR/secret-keys, mode 0600) holds one key a line:
//   "<key id> <64 lower-case hex digits>"   ids 1..2^31, strictly increasing
// The last line's key seals new values; every listed key opens values sealed
// under it, so a key is rotated by appending a line (docs/design-secrets.md).
//
// A sealed value is hex(nonce[12] || ciphertext || tag[16]) with its key id beside
// it; the associated data binds it to the secret's name, so a row copied onto
// another secret's name does not open.
//
// Thread-safe after construction (const methods only).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rota::server {

inline constexpr size_t kSecretKeyBytes = 32;

struct SealedValue {
  int64_t key_id = 0;
  std::string sealed_hex;
};

class SecretBox {
 public:
  // `keys`: id -> 32 raw bytes. REQUIRES: non-empty, every key 32 bytes.
  explicit SecretBox(std::map<int64_t, std::string> keys);

  // The parsed keyring text. InvalidArgument naming the line for a bad one.
  static Result<SecretBox> FromText(std::string_view text);
  // Reads DATA_DIR/secret-keys, creating it (mode 0600, key id 1, from the
  // kernel's random source) when it does not exist. InvalidArgument when the
  // file is readable by others than its owner or malformed.
  static Result<SecretBox> LoadOrCreate(const std::string& data_dir);
  // A new key line for `text` (the current keyring): "<max id + 1> <hex>\n".
  static Result<std::string> NextKeyLine(std::string_view text);

  int64_t current_key_id() const { return keys_.rbegin()->first; }

  // Seals `plaintext` for the secret `name` under the current key.
  Result<SealedValue> Seal(const std::string& name, std::string_view plaintext) const;
  // Opens a sealed value. NotFound when its key is not in the ring; Internal
  // when the value was altered, sealed for another name or under another key.
  Result<std::string> Open(const std::string& name, const SealedValue& value) const;

 private:
  std::map<int64_t, std::string> keys_;
};

}  // namespace rota::server
