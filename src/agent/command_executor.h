#pragma once
// CommandExecutor: runs the server's enforcement commands (api::CommandMsg) on this
// node, against the real OS (no seam: tests use real processes and ptys).
//
//  - signal: sends SIGTERM or SIGKILL to each listed pid — never to a process group —
//    after checking that the pid is still the process the server saw: its start time
//    (computed like host::HostMonitor's GpuProcess::start_time_ms) within ±1 s of the
//    target's, and its real uid equal to the command's uid. Otherwise "gone" or
//    "mismatch". The process is held by a pidfd while it is checked, so a pid reused
//    between the check and the signal is not hit. pid 1 and the agent are "denied",
//    and so is every process of a uid below min_uid (root and system accounts; the
//    real uid read from /proc): the server never asks for them, and this agent
//    refuses them even if it does.
//  - warn: writes a header line and the message (control characters stripped) to the
//    controlling terminal of each verified target and to the user's login sessions in
//    utmp, like write(1): only character devices that are ttys owned by the command's
//    uid, opened O_WRONLY|O_NOCTTY|O_NONBLOCK; a terminal that would block is skipped.
//    The recipient's "mesg n" is not honoured (this is an administrative message).
//    A uid below min_uid is not warned either (its targets are "denied").
//
// Thread-safe: Execute may run on several threads at once. It does not block on other
// processes (no waiting for the signalled process to exit).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/protocol.h"

namespace rota::agent {

inline constexpr char kDefaultUtmpPath[] = "/var/run/utmp";

class CommandExecutor {
 public:
  // Tolerance between a target's start_time_ms and the one read from /proc.
  static constexpr int64_t kStartTimeToleranceMs = 1000;

  // Reads the boot time once (as HostMonitor does, so both compute the same start
  // times). `utmp_path` is the login record file read for warn; processes of uids
  // below `min_uid` are never signalled or warned (the agent's
  // --enforcement-min-uid).
  explicit CommandExecutor(std::string utmp_path = kDefaultUtmpPath,
                           uint32_t min_uid = api::kDefaultEnforcementMinUid);

  // Runs `cmd` and reports per target. An invalid command (see api::ValidateCommand)
  // is not run: the result carries only its id and `error`.
  api::CommandResultMsg Execute(const api::CommandMsg& cmd) const;

 private:
  api::CommandResultMsg Signal(const api::CommandMsg& cmd) const;
  api::CommandResultMsg Warn(const api::CommandMsg& cmd) const;

  // The targets of `cmd` denied because its uid is below min_uid_, in target order.
  std::vector<api::TargetResult> DenySystemUid(const api::CommandMsg& cmd) const;

  const std::string utmp_path_;
  const uint32_t min_uid_;
  const long ticks_per_s_;
  const std::optional<int64_t> btime_s_;  // nullopt: /proc/stat had none
};

// `text` made safe to write on a terminal: ASCII control characters other than '\n'
// and '\t', DEL, C1 controls (U+0080..U+009F) and bytes that are not valid UTF-8 are
// removed.
std::string TerminalSafeText(std::string_view text);

}  // namespace rota::agent
