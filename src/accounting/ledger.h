#pragma once
// Ledger: turns GPU samples into usage and energy, attributed to jobs, users,
// groups, reservations and nodes, in time buckets (an hour by default). Pure:
// no clock, no store, no locks (its owner serialises calls); time comes in the
// samples.
//
// Each GPU's interval between two consecutive samples (prev, cur] is measured
// once (meter.h) and then cut at every boundary inside it (bucket edges, a
// holding's or a reservation's start and end); each piece gets the energy
// pro rata to its length and is attributed to:
//  - the job holding the GPU then (its owner is the user), else
//  - the rota users of the processes on the GPU in `cur` (by their Unix user;
//    an unknown one as "unix:<name>"), split evenly, else
//  - the owner of the reservation covering the GPU then: a reserved GPU is its
//    owner's time even when left idle (allocated GPU-hours), else
//  - nobody (user ""): the GPU was idle;
//  - the user's primary group; the reservation covering the GPU then (0: none).
// busy: the GPU had a process in `cur`. util: cur's utilisation over the piece.
// A sample not newer than the GPU's previous one (a replay) is ignored, so the
// same sample counted twice counts once. An interval longer than
// max_interval_ms is not accounted (the meter restarts there).
//
// CPU package energy (RAPL), per node, from samples whose host carries
// cpu_energy_mj: between two consecutive such samples, the counter's delta is
// split by CPU time (cpu_energy.h) between the tasks present at both ends (the
// delta of each one's cgroup CPU time; a task whose counter went back gets
// nothing that interval) and "other" (idle power, processes outside tasks,
// rounding). A task's share goes to its job (the job's holding names the user;
// a job not in the holdings counts as other); other goes to the node with no job
// and no user. The interval is cut at bucket edges like a GPU's, pro rata to
// time. A counter that went back (the agent restarted) or advanced faster than
// max_cpu_watts adds nothing: the meter restarts there. Samples without
// cpu_energy_mj change nothing.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accounting/meter.h"
#include "api/types.h"

namespace rota::accounting {

// A job's claim on GPUs of one node: [start_ms, end_ms), end_ms 0 while held.
struct Holding {
  int64_t job_id = 0;
  std::string user;
  std::vector<uint32_t> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

// A reservation of GPUs of one node: [start_ms, end_ms).
struct ReservedSpan {
  int64_t id = 0;
  std::string owner;
  std::vector<uint32_t> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

// What the server knows of one node around a sample's time.
struct NodeFacts {
  std::vector<Holding> holdings;
  std::vector<ReservedSpan> reservations;
  int64_t max_gap_ms = 0;  // longest interval integrated from power (0: the ledger's default)
};

// Who is who: rota user by Unix user name, primary group by rota user.
struct People {
  std::map<std::string, std::string> user_of_unix;
  std::map<std::string, std::string> group_of_user;
};

// user_of_unix from (rota user, Unix user) pairs: a Unix account several rota
// users share is left out (its processes count as "unix:<name>": which of them
// ran one is unknown).
std::map<std::string, std::string> UsersOfUnixAccounts(
    const std::vector<std::pair<std::string, std::string>>& user_and_unix);

struct Key {
  int64_t bucket_ms = 0;  // start of the bucket
  std::string node;
  int64_t job_id = 0;         // 0: not a rota job
  std::string user;           // "" : idle
  std::string group;          // "" : none
  int64_t reservation_id = 0; // 0: not reserved
  auto operator<=>(const Key&) const = default;
};

// Sums over GPU time. *_ms are GPU-milliseconds; energy in millijoules.
struct Amounts {
  double gpu_ms = 0;         // time
  double busy_ms = 0;        // ... with a process on the GPU
  double util_ms = 0;        // ... weighted by GPU utilisation (time actually used)
  double energy_mj = 0;      // all energy
  double counter_mj = 0;     // ... of it from the energy counter
  double estimated_mj = 0;   // ... estimated across a gap
  double unmeasured_ms = 0;  // time with no energy reading
  double idle_mj = 0;        // energy while no process was on the GPU
  double cpu_mj = 0;         // CPU package energy (RAPL), not part of energy_mj
  Amounts& operator+=(const Amounts& o);
};

// Where a node's CPU meter stands: the CPU readings of its last sample.
struct CpuMeterState {
  int64_t time_ms = 0;
  uint64_t energy_mj = 0;                      // the agent's package energy counter
  std::optional<uint64_t> busy_usec;           // the node's busy CPU time since boot
  std::map<std::string, uint64_t> task_usec;   // task id -> its cgroup's CPU time
  bool operator==(const CpuMeterState&) const = default;
};

// Where a GPU's meter, or a node's CPU meter, stands (stored with the amounts it
// led to, so a restart continues from it).
struct MeterState {
  std::string uuid;
  Reading last;
  std::optional<CpuMeterState> cpu;  // set for MeterKey{node, kCpuMeter} only
};
using MeterKey = std::pair<std::string, uint32_t>;  // node, GPU index or kCpuMeter
// The MeterKey index of a node's CPU meter (GPU indices are below api::kMaxGpusPerNode).
inline constexpr uint32_t kCpuMeter = 0xFFFFFFFF;

struct LedgerOptions {
  int64_t bucket_ms = 3'600'000;
  int64_t max_gap_ms = 60'000;  // longest interval integrated from power
  // A longer interval (a node off for days, a clock set wrong) is not accounted:
  // the meter starts again from the later sample.
  int64_t max_interval_ms = 86'400'000;
  // A node's CPU package energy counter advancing faster than this (watts, all its
  // packages) has been reset or replaced: the interval adds nothing.
  double max_cpu_watts = 20'000;
};

class Ledger {
 public:
  explicit Ledger(LedgerOptions options = {}) : options_(options) {}

  // Continues a GPU's meter, or a node's CPU meter (key {node, kCpuMeter}, with
  // state.cpu set), from a stored state (at start).
  void Restore(const MeterKey& key, const MeterState& state);

  // Accounts every GPU of `sample` of `node`, and the node's CPU energy, since its
  // previous sample.
  void Add(const std::string& node, const api::NodeSample& sample, const NodeFacts& facts,
           const People& people);

  // Amounts added since the last Take, and the meters they lead to; the caller
  // stores both in one transaction. Give them back with PutBack when that fails.
  struct Pending {
    std::map<Key, Amounts> rows;
    std::map<MeterKey, MeterState> meters;
    bool empty() const { return rows.empty() && meters.empty(); }
  };
  Pending Take();
  void PutBack(Pending pending);

  // Totals since this ledger was created (Prometheus counters).
  const std::map<std::string, Amounts>& TotalsByUser() const { return by_user_; }
  const std::map<std::string, Amounts>& TotalsByGroup() const { return by_group_; }
  const std::map<std::string, Amounts>& TotalsByNode() const { return by_node_; }

 private:
  // A node's GPU meters by GPU index; `dirty`: changed since the last Take.
  struct GpuMeter {
    std::optional<MeterState> state;
    bool dirty = false;
  };
  using NodeMeters = std::vector<GpuMeter>;

  void AddGpu(const std::string& node, NodeMeters& meters, const api::GpuSample& gpu,
              int64_t time_ms, const NodeFacts& facts, const People& people);
  void AddCpu(const std::string& node, const api::HostSample& host, int64_t time_ms,
              const NodeFacts& facts, const People& people);
  // Adds to the credits of the sample being accounted (merged by key: a node's
  // idle GPUs are one credit, not eight); Add passes them to Credit at its end.
  void Collect(const Key& key, const Amounts& a);
  void Credit(const Key& key, const Amounts& a);

  LedgerOptions options_;
  std::unordered_map<std::string, NodeMeters> meters_;  // by node
  std::map<std::string, CpuMeterState> cpu_meters_;     // by node
  Pending pending_;  // rows and CPU meters; GPU meters are the dirty ones, copied by Take
  std::vector<std::pair<Key, Amounts>> collected_;  // see Collect
  std::vector<int64_t> cuts_;                       // AddGpu's scratch
  std::map<std::string, Amounts> by_user_, by_group_, by_node_;
};

}  // namespace rota::accounting
