#include "gpu/sim/sim_procs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace rota::gpu::sim {
namespace {

constexpr size_t kMaxEnviron = 4 << 20;

// Parses a decimal number in lo..hi; false on anything else.
bool ParseNumber(std::string_view s, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool TakeValue(std::string_view entry, std::string_view name, std::string_view* value) {
  if (entry.size() <= name.size() || entry[name.size()] != '=' ||
      entry.compare(0, name.size(), name) != 0) {
    return false;
  }
  *value = entry.substr(name.size() + 1);
  return true;
}

}  // namespace

bool ParseEnviron(const char* data, size_t size, ProcEnv* out) {
  *out = ProcEnv{};
  bool has_visible = false;
  std::string sim_node, rota_node;
  std::string_view rest(data, size);
  while (!rest.empty()) {
    size_t end = rest.find('\0');
    std::string_view entry = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    // Cheap filter: every variable we want starts with 'C' or 'R'.
    if (entry.empty() || (entry[0] != 'C' && entry[0] != 'R')) continue;
    std::string_view v;
    uint64_t n = 0;
    if (TakeValue(entry, "CUDA_VISIBLE_DEVICES", &v)) {
      has_visible = true;
      out->visible.assign(v);
    } else if (TakeValue(entry, "ROTA_SIM_NODE", &v)) {
      sim_node.assign(v);
    } else if (TakeValue(entry, "ROTA_NODE", &v)) {  // set for rota's job tasks
      rota_node.assign(v);
    } else if (TakeValue(entry, "ROTA_PREEMPT_NOTICE", &v)) {
      out->notice.assign(v);
    } else if (TakeValue(entry, "ROTA_SIM_GPU_MEM_MIB", &v)) {
      if (ParseNumber(v, 0, 1 << 24, &n)) out->mem_mib = n;
    } else if (TakeValue(entry, "ROTA_SIM_GPU_UTIL", &v)) {
      if (ParseNumber(v, 0, 100, &n)) out->util = static_cast<uint32_t>(n);
    } else if (TakeValue(entry, "ROTA_SIM_GPU_TYPE", &v)) {
      if (v == "graphics") {
        out->compute = false;
        out->graphics = true;
      } else if (v == "both") {
        out->compute = out->graphics = true;
      }
    }
  }
  // ROTA_SIM_NODE names the node; else ROTA_NODE, which rota sets for its tasks.
  out->sim_node = !sim_node.empty();
  out->node = out->sim_node ? sim_node : rota_node;
  out->has_node = !out->node.empty();
  return has_visible;
}

ProcScanner::ProcScanner(std::string proc_root) : root_(std::move(proc_root)), self_(getpid()) {}

ProcScanner::~ProcScanner() {
  if (dir_) closedir(static_cast<DIR*>(dir_));
}

bool ProcScanner::ReadEnviron(pid_t pid) {
  ++environ_reads_;
  char path[512];
  std::snprintf(path, sizeof(path), "%s/%d/environ", root_.c_str(), static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  if (buf_.size() < 16384) buf_.resize(16384);
  size_t used = 0;
  bool ok = true;
  while (true) {
    if (used == buf_.size()) {
      if (buf_.size() >= kMaxEnviron) break;  // keep what we have
      buf_.resize(buf_.size() * 2);
    }
    ssize_t n = read(fd, buf_.data() + used, buf_.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  buf_used_ = used;
  return ok;
}

void ProcScanner::Scan(int64_t now_ms) {
  const bool first_scan = generation_ == 0;
  ++generation_;
  if (!dir_) {
    dir_ = opendir(root_.c_str());
    if (!dir_) {
      cache_.clear();
      gpu_.clear();
      return;
    }
  } else {
    rewinddir(static_cast<DIR*>(dir_));
  }
  while (struct dirent* d = readdir(static_cast<DIR*>(dir_))) {
    const char* name = d->d_name;
    if (name[0] < '1' || name[0] > '9') continue;
    uint64_t v = 0;
    if (!ParseNumber(name, 1, 1u << 30, &v)) continue;
    pid_t pid = static_cast<pid_t>(v);
    if (pid == self_) continue;
    auto [it, inserted] = cache_.try_emplace(pid);
    Entry& e = it->second;
    bool reused = !inserted && e.ino != d->d_ino;
    e.generation = generation_;
    if (inserted || reused) {
      e.ino = d->d_ino;
      // Processes already running when we start are not young: they exec'd long ago.
      e.first_seen_ms = first_scan ? now_ms - kYoungMs : now_ms;
    } else if (e.settled) {
      continue;  // known, settled process: its environ is cached
    }
    e.is_gpu = ReadEnviron(pid) && ParseEnviron(buf_.data(), buf_used_, &e.env);
    // Settled only by a read made kYoungMs after the pid appeared, however late the scans
    // come: a scan that saw the child before its exec must be followed by one after it.
    e.settled = now_ms - e.first_seen_ms >= kYoungMs;
  }
  gpu_.clear();
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (it->second.generation != generation_) {
      it = cache_.erase(it);
      continue;
    }
    if (it->second.is_gpu) gpu_.emplace_back(it->first, &it->second.env);
    ++it;
  }
  std::sort(gpu_.begin(), gpu_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace rota::gpu::sim
