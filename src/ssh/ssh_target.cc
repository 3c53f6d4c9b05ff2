#include "ssh/ssh_target.h"

#include <cctype>

namespace rota::ssh {
namespace {

bool SafeName(const std::string& s) {
  if (s.empty() || s.size() > 253 || s[0] == '-' || s[0] == '.') return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool SafeIpv6(const std::string& s) {
  if (s.size() < 2 || s.size() > 45) return false;
  for (unsigned char c : s) {
    if (!std::isxdigit(c) && c != ':' && c != '.') return false;
  }
  return s.find(':') != std::string::npos;
}

std::vector<std::string> CommonOptions(const SshClientOptions& o) {
  // Host keys are only ever checked, never learnt: the known hosts file holds the
  // pinned key, the system's file is not read, and ssh may not add keys to ours.
  std::vector<std::string> argv = {"ssh", "-T",
                                   "-o",  "BatchMode=yes",
                                   "-o",  "StrictHostKeyChecking=yes",
                                   "-o",  "GlobalKnownHostsFile=/dev/null",
                                   "-o",  "CheckHostIP=no",
                                   "-o",  "UpdateHostKeys=no",
                                   "-o",  "LogLevel=ERROR",
                                   "-o",  "ConnectTimeout=" + std::to_string(o.connect_timeout_s),
                                   "-o",  "ServerAliveInterval=5",
                                   "-o",  "ServerAliveCountMax=2"};
  if (!o.identity_file.empty()) {
    argv.insert(argv.end(), {"-i", o.identity_file, "-o", "IdentitiesOnly=yes"});
  }
  if (!o.known_hosts_file.empty()) {
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + o.known_hosts_file});
  }
  if (!o.control_dir.empty()) {
    argv.insert(argv.end(), {"-o", "ControlMaster=auto", "-o", "ControlPath=" + o.control_dir + "/%C",
                             "-o", "ControlPersist=60"});
  }
  return argv;
}

}  // namespace

std::string SshTarget::Address() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::string SshTarget::Url() const { return "ssh://" + user + "@" + Address(); }

Result<SshTarget> ParseSshUrl(const std::string& url) {
  const std::string scheme = "ssh://";
  if (url.compare(0, scheme.size(), scheme) != 0) {
    return Status::InvalidArgument("'" + url + "' is not an ssh:// URL (ssh://user@host[:port])");
  }
  std::string rest = url.substr(scheme.size());
  if (rest.find_first_of("/?#") != std::string::npos) {
    return Status::InvalidArgument("ssh URL '" + url + "' may not have a path or query");
  }
  size_t at = rest.find('@');
  if (at == std::string::npos) {
    return Status::InvalidArgument("ssh URL '" + url + "' names no user (ssh://user@host[:port])");
  }
  SshTarget t;
  t.user = rest.substr(0, at);
  if (!SafeName(t.user) || t.user.size() > 32) {
    return Status::InvalidArgument("ssh URL '" + url + "': invalid user name '" + t.user + "'");
  }
  std::string hostport = rest.substr(at + 1);
  std::string port;
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("ssh URL '" + url + "': unclosed '['");
    t.host = hostport.substr(1, close - 1);
    if (!SafeIpv6(t.host)) return Status::InvalidArgument("ssh URL '" + url + "': invalid IPv6 address");
    std::string after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Status::InvalidArgument("ssh URL '" + url + "': junk after ']'");
      port = after.substr(1);
    }
  } else {
    size_t colon = hostport.find(':');
    t.host = hostport.substr(0, colon);
    if (colon != std::string::npos) port = hostport.substr(colon + 1);
    if (!SafeName(t.host)) {
      return Status::InvalidArgument("ssh URL '" + url + "': invalid host '" + t.host + "'");
    }
  }
  if (!port.empty() || hostport.find(':') != std::string::npos) {
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("ssh URL '" + url + "': invalid port '" + port + "'");
    }
    long p = std::stol(port);
    if (p < 1 || p > 65535) {
      return Status::InvalidArgument("ssh URL '" + url + "': port " + port + " is outside 1..65535");
    }
    t.port = static_cast<uint16_t>(p);
  }
  return t;
}

std::vector<std::string> SshArgv(const SshTarget& target, const SshClientOptions& options,
                                 const std::string& remote_command) {
  std::vector<std::string> argv = CommonOptions(options);
  argv.insert(argv.end(), {"-p", std::to_string(target.port), "-l", target.user, "--", target.host,
                           remote_command});
  return argv;
}

std::vector<std::string> SshCloseArgv(const SshTarget& target, const SshClientOptions& options) {
  std::vector<std::string> argv = CommonOptions(options);
  argv.insert(argv.end(), {"-O", "exit", "-p", std::to_string(target.port), "-l", target.user,
                           "--", target.host});
  return argv;
}

}  // namespace rota::ssh
