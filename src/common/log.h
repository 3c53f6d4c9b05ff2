#pragma once
// A small thread-safe logger writing one line per record to stderr:
//   2026-11-22T10:00:00.123Z INFO  agent.cc:42] message
// Usage: ROTA_LOG(INFO) << "node " << name << " registered";

#include <sstream>
#include <string>

namespace rota::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Records below `level` are dropped. Default: kInfo (ROTA_LOG_LEVEL=debug overrides).
void SetLevel(Level level);
Level GetLevel();
// Parses "debug", "info", "warning"/"warn", "error". Returns false on junk.
bool ParseLevel(const std::string& text, Level* out);

class Record {
 public:
  Record(Level level, const char* file, int line);
  ~Record();
  std::ostream& stream() { return stream_; }

 private:
  Level level_;
  std::ostringstream stream_;
};

}  // namespace rota::log

#define ROTA_LOG_LEVEL_DEBUG ::rota::log::Level::kDebug
#define ROTA_LOG_LEVEL_INFO ::rota::log::Level::kInfo
#define ROTA_LOG_LEVEL_WARNING ::rota::log::Level::kWarning
#define ROTA_LOG_LEVEL_ERROR ::rota::log::Level::kError

// A for-loop rather than if/else, so `if (x) ROTA_LOG(INFO) << ...; else ...` parses as meant.
#define ROTA_LOG(severity)                                                          \
  for (bool _rota_log_once = ROTA_LOG_LEVEL_##severity >= ::rota::log::GetLevel(); \
       _rota_log_once; _rota_log_once = false)                                      \
  ::rota::log::Record(ROTA_LOG_LEVEL_##severity, __FILE__, __LINE__).stream()
