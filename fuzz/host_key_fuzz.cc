// SSH host keys as an admin or a node hands them to rota (ssh/host_key.h): a key line or
// fingerprint for `rota ssh-node add/pin --host-key`, and what ssh-keyscan prints. Beyond
// "never crashes":
//  - a key that parses prints (Line) a line that parses back to the same key, and its
//    fingerprint is "SHA256:" and 43 base64 characters;
//  - that fingerprint, given as a pin, parses and matches the key (and only keys with that
//    fingerprint); the key line as a pin matches it too;
//  - every key ParseKeyscan returns round-trips the same way, and ChooseHostKey without a
//    pin returns one of them (or Unavailable when there is none).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ssh/host_key.h"

namespace {

using rota::ssh::HostKey;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "host_key_fuzz: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

void CheckKey(const HostKey& key) {
  const std::string line = key.Line();
  auto back = rota::ssh::ParseHostKey(line);
  if (!back.ok()) Fail("a parsed key's line does not parse", line, back.status().ToString());
  if (!(*back == key)) Fail("a parsed key's line reads as another key", line, back->Line());
  const std::string fp = key.Fingerprint();
  if (fp.size() != 7 + 43 || fp.rfind("SHA256:", 0) != 0) Fail("malformed fingerprint", line, fp);
  auto by_fp = rota::ssh::ParseHostKeyPin(fp);
  if (!by_fp.ok()) Fail("a key's fingerprint is refused as a pin", fp, by_fp.status().ToString());
  if (!by_fp->Matches(key)) Fail("a key's fingerprint pin does not match it", line, fp);
  auto by_line = rota::ssh::ParseHostKeyPin(line);
  if (!by_line.ok()) Fail("a key's line is refused as a pin", line, by_line.status().ToString());
  if (!by_line->Matches(key)) Fail("a key's line pin does not match it", line, by_line->Describe());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto key = rota::ssh::ParseHostKey(text); key.ok()) CheckKey(*key);
  if (auto pin = rota::ssh::ParseHostKeyPin(text); pin.ok()) {
    if (pin->fingerprint.size() != 7 + 43) Fail("a pin's fingerprint is malformed", text, pin->fingerprint);
    (void)pin->Describe();
  }
  const std::vector<HostKey> seen = rota::ssh::ParseKeyscan(text);
  for (const HostKey& k : seen) CheckKey(k);
  auto chosen = rota::ssh::ChooseHostKey(seen, nullptr, "fuzz");
  if (seen.empty() == chosen.ok()) Fail("ChooseHostKey without a pin", text, chosen.ok() ? chosen->Line() : "");
  if (chosen.ok()) {
    bool among = false;
    for (const HostKey& k : seen) among = among || k == *chosen;
    if (!among) Fail("ChooseHostKey chose a key not scanned", text, chosen->Line());
  }
  return 0;
}
