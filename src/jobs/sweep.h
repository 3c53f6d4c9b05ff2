#pragma once
// Hyperparameter sweeps: an array whose members carry parameters
// (`rota run --sweep lr=1e-3,1e-4 --sweep bs=32,64 -- python train.py --lr {lr}`).
// Pure: the parameter grammar, the trials of a grid or a seeded random search.
// See docs/design-jobs.md ("Sweeps").

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "jobs/early_stop.h"

namespace rota::jobs {

inline constexpr size_t kMaxSweepParams = 32;
inline constexpr size_t kMaxSweepValues = 10'000;  // values of one list

struct SweepParam {
  enum class Kind { kList, kUniform, kLogUniform, kInt };
  std::string name;  // [a-z_][a-z0-9_]{0,31}, not "index"
  Kind kind = Kind::kList;
  std::vector<std::string> values;  // kList: as given, 1..kMaxSweepValues
  double lo = 0, hi = 0;            // ranges: lo <= hi (kLogUniform: 0 < lo; kInt: whole numbers)
  bool operator==(const SweepParam&) const = default;
};

struct SweepSpec {
  enum class Method { kGrid, kRandom };
  Method method = Method::kGrid;
  std::vector<SweepParam> params;  // 1..kMaxSweepParams, distinct names, in order
  uint32_t count = 0;              // random: how many trials (1..kMaxArrayMembers)
  uint64_t seed = 0;               // random: the same seed gives the same trials
  uint32_t max_running = 0;        // trials at once; 0: no cap
  uint32_t max_trials = 0;         // the budget of trials; 0: the whole grid / count
  uint32_t max_failures = 0;       // stop launching after this many failed trials; 0: never
  std::optional<EarlyStopSpec> early_stopping;  // stop running trials that do worse (jobs/early_stop.h)
  bool operator==(const SweepSpec&) const = default;
};

// One --sweep flag: "lr=1e-3,1e-4" (a list), "lr=loguniform:1e-5:1e-1",
// "dropout=uniform:0:0.5", "layers=int:2:8". InvalidArgument naming the flag.
Result<SweepParam> ParseSweepFlag(const std::string& text);

// JSON form (the "sweep" field of POST /api/v1/jobs, and `rota sweep -f`):
// {method?: grid|random, parameters: {NAME: [v, ...] | {uniform|loguniform|int: [lo, hi]}},
//  count?, seed?, max_running?, max_trials?, max_failures?, early_stopping?}. Parameters are
// taken in name order. Unknown keys are refused; the result is checked
// (CheckSweep): a grid of more than kMaxArrayMembers trials is refused unless
// max_trials bounds it.
Result<SweepSpec> SweepSpecFromJson(const api::Json& j);
api::Json ToJson(const SweepSpec& s);
Status CheckSweep(const SweepSpec& s);

// The trials, in order: a grid's cartesian product (the last parameter
// varying fastest), or `count` random draws from `seed` (a list: one of its
// values, uniform; log-uniform; int: lo..hi inclusive); cut at max_trials.
// Numbers drawn are written with 6 significant digits ("0.000316228"). The
// same spec always gives the same trials (its own generator, not the C++
// library's distributions, whose results differ between libraries).
std::vector<std::map<std::string, std::string>> Trials(const SweepSpec& s);

}  // namespace rota::jobs
