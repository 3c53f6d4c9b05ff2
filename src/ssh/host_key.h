#pragma once
// SSH host keys: parsing what an admin gives to pin a node (an OpenSSH public key
// line, or a "SHA256:..." fingerprint as `ssh-keygen -l` prints it), what
// ssh-keyscan prints, fingerprints, and the known_hosts line that holds exactly
// one pinned key. Pure functions: running ssh-keyscan is the caller's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ssh/ssh_target.h"

namespace rota::ssh {

// A host's public key: its algorithm and the key in SSH wire format.
struct HostKey {
  std::string type;  // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...
  std::string blob;  // decoded bytes; its first field names `type`

  // "type base64", as in a .pub file without its comment.
  std::string Line() const;
  // "SHA256:<base64 without padding>" of the blob, as `ssh-keygen -l` prints it.
  std::string Fingerprint() const;
  // "SHA256:... (ED25519)": the fingerprint and ssh-keygen's name for the type.
  std::string Describe() const;
  bool operator==(const HostKey&) const = default;
};

// Parses "type base64 [comment]", or a known_hosts / ssh-keyscan line
// "host type base64". InvalidArgument naming the problem: unknown or
// certificate types, bad base64, data that is not a key of that type.
Result<HostKey> ParseHostKey(std::string_view line);

// The keys in ssh-keyscan's output ("host type base64" lines; '#' comments and
// lines that do not parse are skipped), in the order printed.
std::vector<HostKey> ParseKeyscan(std::string_view output);

// What an admin pins a node to: a whole key, or only its fingerprint.
struct HostKeyPin {
  std::optional<HostKey> key;  // when a key line was given
  std::string fingerprint;     // "SHA256:..." (the key's, when a key was given)

  bool Matches(const HostKey& key) const;
  // "SHA256:..." or "SHA256:... (ED25519)" when the key is known.
  std::string Describe() const;
};

// Parses --host-key: an OpenSSH public key line (as ParseHostKey), or
// "SHA256:" and 43 base64 characters (32 bytes; '=' padding allowed).
// InvalidArgument saying which forms are accepted, for anything else (MD5
// fingerprints included).
Result<HostKeyPin> ParseHostKeyPin(std::string_view text);

// The key to pin among those a scan of `where` found: the one `pin` matches, or
// without a pin the strongest (Ed25519, then ECDSA, then RSA). Unavailable when
// the scan found none; Conflict naming the pin's fingerprint and every one
// seen when none matches.
Result<HostKey> ChooseHostKey(const std::vector<HostKey>& seen, const HostKeyPin* pin,
                              const std::string& where);

// "host type base64" for `target`, as ssh looks it up ("[host]:port" unless
// the port is 22).
std::string KnownHostsLine(const SshTarget& target, const HostKey& key);

// argv for `ssh-keyscan` of `target`'s host keys, every key type, giving up
// after timeout_s.
std::vector<std::string> KeyscanArgv(const SshTarget& target, int timeout_s);

}  // namespace rota::ssh
