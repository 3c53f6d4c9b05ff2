// The trace reader of `rota simulate` (sim/trace.h) on any CSV. Beyond "never crashes":
// every job it returns is one the replay can take (1..4096 GPUs, a duration in 0..366 d,
// a submit time in 1970..9999), sorted by submit time, and skipping bad rows never turns a
// trace it reads into one it refuses.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/trace.h"

namespace {

[[noreturn]] void Fail(const char* what, size_t line) {
  std::fprintf(stderr, "trace_fuzz: %s (line %zu)\n", what, line);
  std::abort();
}

void Check(const rota::sim::Trace& t) {
  int64_t last = INT64_MIN;
  for (const auto& j : t.jobs) {
    if (j.gpus < 1 || j.gpus > 4096) Fail("GPU count out of range", j.line);
    if (j.duration_ms < 0 || j.duration_ms > 366LL * 86'400'000) Fail("duration out of range", j.line);
    if (j.submit_ms < 0 || j.submit_ms >= 253402300800000LL) Fail("submit time out of range", j.line);
    if (j.submit_ms < last) Fail("jobs not sorted by submit time", j.line);
    if (j.user.empty()) Fail("a job without a user", j.line);
    last = j.submit_ms;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string csv(reinterpret_cast<const char*>(data), size);
  auto strict = rota::sim::ParseTrace(csv);
  if (strict.ok()) Check(*strict);
  rota::sim::TraceReadOptions skip;
  skip.skip_bad_rows = true;
  auto lenient = rota::sim::ParseTrace(csv, skip);
  if (lenient.ok()) {
    Check(*lenient);
    if (lenient->warnings.size() > skip.max_warnings) Fail("more warnings kept than asked", 0);
  }
  if (strict.ok() && (!lenient.ok() || lenient->jobs.size() != strict->jobs.size())) {
    Fail("skipping bad rows changed a trace without any", 0);
  }
  return 0;
}
