#include "common/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/time_util.h"

namespace rota::log {
namespace {

Level InitialLevel() {
  const char* env = std::getenv("ROTA_LOG_LEVEL");
  Level level = Level::kInfo;
  if (env != nullptr) ParseLevel(env, &level);
  return level;
}

std::atomic<Level>& CurrentLevel() {
  static std::atomic<Level> level{InitialLevel()};
  return level;
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO ";
    case Level::kWarning: return "WARN ";
    case Level::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

void SetLevel(Level level) { CurrentLevel() = level; }
Level GetLevel() { return CurrentLevel(); }

bool ParseLevel(const std::string& text, Level* out) {
  if (text == "debug") *out = Level::kDebug;
  else if (text == "info") *out = Level::kInfo;
  else if (text == "warning" || text == "warn") *out = Level::kWarning;
  else if (text == "error") *out = Level::kError;
  else return false;
  return true;
}

Record::Record(Level level, const char* file, int line) : level_(level) {
  const char* base = std::strrchr(file, '/');
  stream_ << FormatRfc3339Ms(RealClock::Get().NowMs()) << ' ' << LevelName(level_) << ' '
          << (base != nullptr ? base + 1 : file) << ':' << line << "] ";
}

Record::~Record() {
  stream_ << '\n';
  static Mutex mu;
  MutexLock lock(&mu);
  std::string text = stream_.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace rota::log
