#pragma once
// ProcScanner: finds the processes that the simulated NVML shows as GPU users, i.e. the
// processes whose environment has CUDA_VISIBLE_DEVICES. Not thread-safe (the library
// calls it under its lock).
//
// Cost: one readdir of /proc per Scan(). A process's environ is read when its pid is first
// seen and re-read at each scan while it is young, to catch the environment a freshly
// forked child gets when it execs. It stays young until one read has been made at least
// kYoungMs after its pid was first seen, so late scans (a loaded machine) cannot settle a
// process on what it was before its exec. The cache is keyed by pid + the inode number of
// /proc/<pid> as returned by readdir (a new process with a reused pid gets a new inode),
// which is free, unlike the start time, which costs a read of /proc/<pid>/stat per pid.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rota::gpu::sim {

// What the simulator needs from a process's environment.
struct ProcEnv {
  bool has_node = false;  // ROTA_SIM_NODE or ROTA_NODE set and non-empty
  bool sim_node = false;  // the node comes from ROTA_SIM_NODE (named by hand)
  std::string node;
  std::string notice;       // ROTA_PREEMPT_NOTICE: set for rota's job tasks, in their task directory
  std::string visible;      // CUDA_VISIBLE_DEVICES
  uint64_t mem_mib = 1024;  // ROTA_SIM_GPU_MEM_MIB
  uint32_t util = 100;      // ROTA_SIM_GPU_UTIL, 0..100
  bool compute = true;      // ROTA_SIM_GPU_TYPE: compute (default), graphics, both
  bool graphics = false;
};

// Parses a NUL-separated environment block. Returns false when it has no
// CUDA_VISIBLE_DEVICES (not a GPU process). Bad numbers fall back to the defaults.
bool ParseEnviron(const char* data, size_t size, ProcEnv* out);

class ProcScanner {
 public:
  static constexpr int64_t kYoungMs = 2000;

  // `proc_root` is "/proc" except in tests.
  explicit ProcScanner(std::string proc_root = "/proc");
  ~ProcScanner();
  ProcScanner(const ProcScanner&) = delete;
  ProcScanner& operator=(const ProcScanner&) = delete;

  // Rescans `proc_root`; `now_ms` is a monotonic time. Skips the calling process and
  // processes whose environ cannot be read.
  void Scan(int64_t now_ms);

  // GPU processes found by the last Scan(), sorted by pid. Pointers are valid until the
  // next Scan().
  const std::vector<std::pair<pid_t, const ProcEnv*>>& GpuProcesses() const { return gpu_; }

  // Number of environ reads so far (for tests of the caching).
  uint64_t environ_reads() const { return environ_reads_; }

 private:
  struct Entry {
    uint64_t ino = 0;
    int64_t first_seen_ms = 0;
    uint64_t generation = 0;
    bool settled = false;  // environ read kYoungMs or more after first seen
    bool is_gpu = false;
    ProcEnv env;
  };

  // Reads /proc/<pid>/environ into buf_; false if unreadable.
  bool ReadEnviron(pid_t pid);

  std::string root_;
  void* dir_ = nullptr;  // DIR*, kept open between scans
  pid_t self_;
  uint64_t generation_ = 0;
  uint64_t environ_reads_ = 0;
  std::unordered_map<pid_t, Entry> cache_;
  std::vector<std::pair<pid_t, const ProcEnv*>> gpu_;
  std::string buf_;
  size_t buf_used_ = 0;
};

}  // namespace rota::gpu::sim
