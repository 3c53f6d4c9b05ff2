#include "agent/leader_epoch.h"

#include <cerrno>
#include <charconv>

#include "common/file_util.h"
#include "common/log.h"
#include "common/strings.h"

namespace rota::agent {

EpochVerdict JudgeLeaderEpoch(uint64_t highest, uint64_t epoch) {
  if (epoch == 0) return {true, highest};
  if (epoch < highest) return {false, highest};
  return {true, epoch};
}

uint64_t LoadLeaderEpoch(const std::string& path) {
  auto text = ReadFile(path, 64);
  if (!text.ok()) return 0;  // none yet
  const std::string_view digits = Trim(*text);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    ROTA_LOG(WARNING) << "ignoring " << path << ": not a leader epoch";
    return 0;
  }
  return v;
}

void StoreLeaderEpoch(const std::string& path, uint64_t epoch) {
  if (Status st = WriteFileAtomic(path, std::to_string(epoch) + "\n", 0600); !st.ok()) {
    ROTA_LOG(WARNING) << "cannot keep the leader epoch in " << path << ": " << st.message();
  }
}

}  // namespace rota::agent
