#include "server/secrets/secret_box.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/file_util.h"
#include "common/log.h"
#include "common/strings.h"

namespace rota::server {
namespace {

constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr int64_t kMaxKeyId = int64_t{1} << 31;

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

std::string Aad(const std::string& name) { return "rota-secret:" + name; }

}  // namespace

SecretBox::SecretBox(std::map<int64_t, std::string> keys) : keys_(std::move(keys)) {}

Result<SecretBox> SecretBox::FromText(std::string_view text) {
  std::map<int64_t, std::string> keys;
  int line_no = 0;
  int64_t last = 0;
  for (std::string_view rest = text; !rest.empty();) {
    size_t nl = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "secret keyring line " + std::to_string(line_no);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) {
      return Status::InvalidArgument(where + ": expected '<key id> <64 hex digits>'");
    }
    int64_t id = 0;
    for (char c : line.substr(0, sp)) {
      if (c < '0' || c > '9' || id > kMaxKeyId) {
        return Status::InvalidArgument(where + ": the key id must be a number 1..2^31");
      }
      id = id * 10 + (c - '0');
    }
    if (id < 1 || id > kMaxKeyId) {
      return Status::InvalidArgument(where + ": the key id must be a number 1..2^31");
    }
    if (id <= last) {
      return Status::InvalidArgument(where + ": key ids must increase (" + std::to_string(id) +
                                     " after " + std::to_string(last) + ")");
    }
    std::string raw;
    std::string_view hex = Trim(line.substr(sp + 1));
    if (hex.size() != kSecretKeyBytes * 2 || !HexDecode(hex, &raw)) {
      return Status::InvalidArgument(where + ": the key must be 64 hex digits");
    }
    keys[id] = std::move(raw);
    last = id;
  }
  if (keys.empty()) return Status::InvalidArgument("the secret keyring holds no key");
  return SecretBox(std::move(keys));
}

Result<std::string> SecretBox::NextKeyLine(std::string_view text) {
  int64_t next = 1;
  if (!Trim(text).empty()) {
    ASSIGN_OR_RETURN(SecretBox box, FromText(text));
    next = box.current_key_id() + 1;
  }
  ASSIGN_OR_RETURN(std::string hex, RandomHex(kSecretKeyBytes));
  return std::to_string(next) + " " + hex + "\n";
}

Result<SecretBox> SecretBox::LoadOrCreate(const std::string& data_dir) {
  const std::string path = data_dir + "/secret-keys";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    ASSIGN_OR_RETURN(std::string line, NextKeyLine(""));
    RETURN_IF_ERROR(WriteFileAtomic(path, line, 0600));
    ROTA_LOG(INFO) << "generated the secret encryption key in " << path;
  } else if ((st.st_mode & 077) != 0) {
    return Status::InvalidArgument(path + " must be readable by its owner only (chmod 600)");
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, 1 << 20));
  auto box = FromText(text);
  if (!box.ok()) return box.status().WithContext(path);
  return box;
}

Result<SealedValue> SecretBox::Seal(const std::string& name, std::string_view plaintext) const {
  const int64_t id = current_key_id();
  const std::string& key = keys_.at(id);
  unsigned char nonce[kNonceBytes];
  if (RAND_bytes(nonce, sizeof nonce) != 1) return Status::Internal("no random nonce (RAND_bytes)");
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return Status::Internal("EVP_CIPHER_CTX_new failed");
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  const std::string aad = Aad(name);
  std::vector<unsigned char> out(kNonceBytes + plaintext.size() + kTagBytes);
  std::copy(nonce, nonce + kNonceBytes, out.begin());
  int len = 0, total = 0;
  bool ok = EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, k, nonce) == 1 &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &len,
                              reinterpret_cast<const unsigned char*>(aad.data()),
                              static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(ctx.get(), out.data() + kNonceBytes, &len,
                              reinterpret_cast<const unsigned char*>(plaintext.data()),
                              static_cast<int>(plaintext.size())) == 1;
  total = len;
  ok = ok && EVP_EncryptFinal_ex(ctx.get(), out.data() + kNonceBytes + total, &len) == 1;
  total += len;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                                 out.data() + kNonceBytes + total) == 1;
  if (!ok) return Status::Internal("AES-256-GCM encryption failed");
  std::string_view bytes(reinterpret_cast<const char*>(out.data()), kNonceBytes + total + kTagBytes);
  return SealedValue{id, HexEncode(bytes)};
}

Result<std::string> SecretBox::Open(const std::string& name, const SealedValue& value) const {
  auto key = keys_.find(value.key_id);
  if (key == keys_.end()) {
    return Status::NotFound("secret '" + name + "' is sealed under key " +
                            std::to_string(value.key_id) + ", which the keyring does not hold");
  }
  std::string raw;
  if (!HexDecode(value.sealed_hex, &raw) || raw.size() < kNonceBytes + kTagBytes) {
    return Status::Internal("secret '" + name + "': the stored value is malformed");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  const size_t ct_len = raw.size() - kNonceBytes - kTagBytes;
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return Status::Internal("EVP_CIPHER_CTX_new failed");
  const std::string aad = Aad(name);
  std::string plain(ct_len, '\0');
  std::vector<unsigned char> tag(bytes + kNonceBytes + ct_len, bytes + raw.size());
  int len = 0;
  const auto* k = reinterpret_cast<const unsigned char*>(key->second.data());
  bool ok = EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, k, bytes) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &len,
                              reinterpret_cast<const unsigned char*>(aad.data()),
                              static_cast<int>(aad.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &len,
                              bytes + kNonceBytes, static_cast<int>(ct_len)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1;
  unsigned char scratch[16];
  ok = ok && EVP_DecryptFinal_ex(ctx.get(), scratch, &len) == 1;
  if (!ok) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return Status::Internal("secret '" + name +
                            "': the stored value does not authenticate (altered, or sealed for "
                            "another secret)");
  }
  return plain;
}

}  // namespace rota::server
