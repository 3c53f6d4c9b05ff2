#pragma once
// Job arrays: one submission, many member jobs that differ by an index
// (`rota run --array 0-99%10 -- python train.py --seed {index}`). Pure: the
// index-set grammar, the member specs, and the cap rule the scheduling pass
// applies. See docs/design-jobs.md ("Job arrays").

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobs/spec.h"

namespace rota::jobs {

// Limits on an array from outside.
inline constexpr size_t kMaxArrayMembers = 100'000;
inline constexpr int64_t kMaxArrayIndex = 999'999'999;
inline constexpr size_t kMaxArrayText = 4096;

struct ArraySpec {
  std::vector<int64_t> indices;  // ascending, distinct, 1..kMaxArrayMembers of them
  uint32_t max_running = 0;      // members holding resources at once; 0: no cap
  bool operator==(const ArraySpec&) const = default;
};

// "0-99", "0-99%10", "0,3,7-9", "1-20:5" (step), "0-9%2": comma-separated
// indices and ranges A-B (A <= B, optional :STEP >= 1), each 0..kMaxArrayIndex,
// then an optional %N cap (N >= 1). Duplicates are refused. InvalidArgument
// naming the part that is wrong ("array '5-2': range 5-2 runs backwards").
Result<ArraySpec> ParseArraySpec(const std::string& text);
// The canonical text of `a` ("0-99%10", ranges of consecutive indices joined).
std::string ArraySpecText(const ArraySpec& a);

// Replaces each "{KEY}" in `arg` whose KEY is in `values` by its value; other
// braces are left as they are (JSON, Python format strings). One pass: a value
// containing "{KEY}" is not expanded again.
std::string Substitute(const std::string& arg, const std::map<std::string, std::string>& values);
// True when `arg` holds "{KEY}" for some KEY of `values`.
bool HasPlaceholder(const std::string& arg, const std::map<std::string, std::string>& values);

// Environment variables every member gets.
inline constexpr const char* kArrayIndexVar = "ROTA_ARRAY_INDEX";
inline constexpr const char* kArrayIdVar = "ROTA_ARRAY_ID";
// A sweep trial's parameters, as a JSON object of strings ({"lr": "1e-3"}).
inline constexpr const char* kTrialParamsVar = "ROTA_TRIAL_PARAMS";

// InvalidArgument when `spec` cannot be an array's template: a shell command
// that holds a placeholder of `values` (placeholders are substituted in argv
// only: a shell command reads $ROTA_ARRAY_INDEX instead), or an env that sets
// ROTA_ARRAY_INDEX, ROTA_ARRAY_ID or ROTA_TRIAL_PARAMS itself.
Status CheckArrayTemplate(const JobSpec& spec, const std::map<std::string, std::string>& values);
// The member of the array `array_id` with `values` (at least "index"): its
// command's and groups' commands' argv elements substituted, and
// ROTA_ARRAY_INDEX / ROTA_ARRAY_ID in its env. REQUIRES: CheckArrayTemplate ok.
JobSpec MemberSpec(const JobSpec& spec, int64_t array_id, int64_t index,
                   const std::map<std::string, std::string>& values);

// The cap rule. What the scheduling pass knows of one array member.
struct ArrayMemberState {
  int64_t job_id = 0;
  int64_t array_id = 0;
  uint32_t max_running = 0;  // the array's cap (0: none)
  bool holds = false;        // starting, running or being stopped
  bool schedulable = false;  // pending and not being stopped
};
// The schedulable members the pass leaves out because their array is at its
// cap: per capped array, every schedulable member beyond (cap - holding), the
// lowest job ids admitted first. One walk plus a sort per capped array.
std::set<int64_t> HeldByArrayCap(const std::vector<ArrayMemberState>& members);

}  // namespace rota::jobs
