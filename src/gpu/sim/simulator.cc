#include "gpu/sim/simulator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "gpu/nvml_abi.h"

namespace rota::gpu::sim {
namespace {

int64_t ClockMs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}
int64_t MonoMs() { return ClockMs(CLOCK_MONOTONIC); }
int64_t WallMs() { return ClockMs(CLOCK_REALTIME); }

bool ReadWholeFile(const std::string& path, std::string* out, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  out->clear();
  char buf[16384];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read " + path + ": " + std::strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > (16u << 20)) {
      *error = path + ": larger than 16 MiB";
      close(fd);
      return false;
    }
  }
  close(fd);
  return true;
}

void Warn(const std::string& message) {
  std::fprintf(stderr, "rota simulated NVML: %s\n", message.c_str());
}

// Whether a process named for this node is not another agent's job task
// (Config::tasks_under).
bool OwnTask(const ProcEnv& env, const std::string& tasks_under) {
  if (env.sim_node || env.notice.empty() || tasks_under.empty()) return true;
  return env.notice.size() > tasks_under.size() && env.notice.compare(0, tasks_under.size(), tasks_under) == 0 &&
         (tasks_under == "/" || env.notice[tasks_under.size()] == '/');
}

}  // namespace

bool Simulator::ReadConfig(Config* out, FileId* id, std::string* error) const {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    *error = "cannot read config " + path_ + ": " + std::strerror(errno);
    return false;
  }
  id->dev = st.st_dev;
  id->ino = st.st_ino;
  id->size = static_cast<uint64_t>(st.st_size);
  id->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id->ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  std::string text, err;
  if (!ReadWholeFile(path_, &text, &err)) {
    *error = "cannot read config: " + err;
    return false;
  }
  if (!ParseConfig(text, out, &err)) {
    *error = "bad config " + path_ + ": " + err;
    return false;
  }
  return true;
}

int Simulator::Init(std::string* message) {
  const char* path = std::getenv(kConfigEnv);
  if (path == nullptr || *path == '\0') {
    *message = std::string("simulated NVML: ") + kConfigEnv +
               " is not set (it must name the JSON config file of the simulated GPUs)";
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  refresh_ms_ = kDefaultRefreshMs;
  if (const char* r = std::getenv(kRefreshEnv); r != nullptr && *r != '\0') {
    char* end = nullptr;
    long v = std::strtol(r, &end, 10);
    if (*end != '\0' || v < 0 || v > 60000) {
      const std::string error = std::string(kRefreshEnv) + "=" + r +
                                ": must be an integer number of milliseconds in 0..60000";
      *message = "simulated NVML: " + error;
      Warn(error);
      return NVML_ERROR_UNKNOWN;
    }
    refresh_ms_ = v;
  }
  path_ = path;
  energy_path_ = path_ + ".energy";
  Config config;
  FileId id;
  std::string error;
  if (!ReadConfig(&config, &id, &error)) {
    *message = "simulated NVML: " + error;
    Warn(error);
    return NVML_ERROR_UNKNOWN;
  }
  file_id_ = id;
  bad_file_id_ = FileId{};
  ApplyConfig(std::move(config));
  LoadEnergy();
  int64_t now = MonoMs();
  energy_updated_ms_ = now;
  energy_saved_ms_ = now;
  refreshed_ = true;  // ApplyConfig just scanned
  last_refresh_ms_ = now;
  return NVML_SUCCESS;
}

void Simulator::Shutdown() {
  Accumulate(MonoMs());
  SaveEnergy();
}

void Simulator::ApplyConfig(Config config) {
  config_ = std::move(config);
  loads_.resize(config_.gpus.size());
  for (const GpuConfig& g : config_.gpus) energy_mj_.try_emplace(g.uuid, 0.0);
  Rescan();
}

void Simulator::MaybeRefresh() {
  int64_t now = MonoMs();
  if (refreshed_ && now - last_refresh_ms_ < refresh_ms_) return;
  refreshed_ = true;
  last_refresh_ms_ = now;
  Accumulate(now);  // at the power of the loads that are about to change
  struct stat st {};
  FileId id;
  if (stat(path_.c_str(), &st) == 0) {
    id = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
  }
  if (!(id == file_id_) && !(id == bad_file_id_)) {
    Config config;
    std::string error;
    if (ReadConfig(&config, &id, &error)) {
      file_id_ = id;
      ApplyConfig(std::move(config));
      return;
    }
    bad_file_id_ = id;
    Warn(error + " (keeping the previous config)");
  }
  Rescan();
}

void Simulator::Rescan() {
  scanner_.Scan(MonoMs());
  for (GpuLoad& l : loads_) {
    l.util = 0;
    l.mem_used = 0;
    l.compute.clear();
    l.graphics.clear();
  }
  for (const auto& [pid, env] : scanner_.GpuProcesses()) {
    bool mine = env->has_node ? env->node == config_.node && OwnTask(*env, config_.tasks_under)
                              : config_.default_node;
    if (!mine) continue;
    ResolveVisibleDevices(env->visible, config_, &visible_);
    const uint64_t bytes = env->mem_mib << 20;
    for (unsigned i : visible_) {
      GpuLoad& l = loads_[i];
      l.util += env->util;
      l.mem_used += bytes;
      ProcUse use{static_cast<unsigned>(pid), bytes};
      if (env->compute) l.compute.push_back(use);
      if (env->graphics) l.graphics.push_back(use);
    }
  }
  for (size_t i = 0; i < loads_.size(); ++i) {
    loads_[i].util = std::min<uint32_t>(loads_[i].util, 100);
    loads_[i].mem_used = std::min<uint64_t>(loads_[i].mem_used, config_.gpus[i].memory_mib << 20);
  }
}

double Simulator::PowerW(unsigned i) const {
  const GpuConfig& g = config_.gpus[i];
  const double demand = g.idle_power_w + (g.power_limit_w - g.idle_power_w) * (loads_[i].util / 100.0);
  const double cap = std::max<double>(LimitMw(i) / 1000.0, g.idle_power_w);
  return std::min(demand, cap);
}

uint32_t Simulator::LimitMw(unsigned i) const {
  auto it = limit_mw_.find(config_.gpus[i].uuid);
  return it != limit_mw_.end() ? it->second : config_.gpus[i].power_limit_w * 1000;
}

void Simulator::SetLimitMw(unsigned i, uint32_t mw) {
  Accumulate(MonoMs());  // energy so far at the old power
  limit_mw_[config_.gpus[i].uuid] = mw;
}

uint32_t Simulator::MemoryUtil(unsigned i) const { return (loads_[i].util * 3 + 2) / 5; }

uint32_t Simulator::PowerMw(unsigned i) const {
  return static_cast<uint32_t>(std::lround(PowerW(i) * 1000));
}

uint32_t Simulator::TemperatureC(unsigned i) const {
  return static_cast<uint32_t>(std::lround(30 + 50 * PowerW(i) / config_.gpus[i].power_limit_w));
}

uint32_t Simulator::SmClockMhz(unsigned i) const {
  uint32_t max = config_.gpus[i].max_sm_clock_mhz;
  return loads_[i].util > 0 ? max : std::min<uint32_t>(210, max);
}

uint32_t Simulator::MemClockMhz(unsigned i) const {
  uint32_t max = config_.gpus[i].max_mem_clock_mhz;
  return loads_[i].util > 0 ? max : std::min<uint32_t>(405, max);
}

uint32_t Simulator::FanPct(unsigned i) const { return 30 + loads_[i].util / 2; }

void Simulator::Accumulate(int64_t now_ms) {
  int64_t dt = now_ms - energy_updated_ms_;
  if (dt <= 0) return;
  energy_updated_ms_ = now_ms;
  for (unsigned i = 0; i < config_.gpus.size(); ++i) {
    energy_mj_[config_.gpus[i].uuid] += PowerW(i) * static_cast<double>(dt);  // W * ms = mJ
  }
}

uint64_t Simulator::EnergyMj(unsigned i) {
  int64_t now = MonoMs();
  Accumulate(now);
  if (now - energy_saved_ms_ >= kPersistMs) SaveEnergy();
  return static_cast<uint64_t>(energy_mj_[config_.gpus[i].uuid]);
}

// The file holds {"v": 1, "time_ms": <Unix ms>, "energy_mj": {"<uuid>": <mJ>}}. Values
// reported after the last save were at most kPersistMs of work at no more than the power
// limit, so adding that bound (and idle power for the rest of the gap) on load keeps the
// counter from going backwards across an unclean restart.
void Simulator::LoadEnergy() {
  std::string text, error;
  if (!ReadWholeFile(energy_path_, &text, &error)) return;  // first run
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    const int64_t gap = std::max<int64_t>(0, WallMs() - j.at("time_ms").get<int64_t>());
    const auto& saved = j.at("energy_mj");
    for (const GpuConfig& g : config_.gpus) {
      auto it = saved.find(g.uuid);
      if (it == saved.end() || !it->is_number()) continue;
      double v = it->get<double>() +
                 g.power_limit_w * static_cast<double>(std::min(gap, kPersistMs)) +
                 g.idle_power_w * static_cast<double>(std::max<int64_t>(0, gap - kPersistMs));
      double& e = energy_mj_[g.uuid];
      e = std::max(e, v);
    }
  } catch (const nlohmann::json::exception& e) {
    Warn("ignoring unreadable energy file " + energy_path_ + ": " + e.what());
  }
}

void Simulator::SaveEnergy() {
  energy_saved_ms_ = MonoMs();
  nlohmann::json j;
  j["v"] = 1;
  j["time_ms"] = WallMs();
  j["energy_mj"] = nlohmann::json::object();
  for (const auto& [uuid, mj] : energy_mj_) j["energy_mj"][uuid] = std::floor(mj);
  const std::string data = j.dump();
  const std::string tmp = energy_path_ + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  if (fd >= 0) ok = close(fd) == 0 && ok;
  ok = ok && rename(tmp.c_str(), energy_path_.c_str()) == 0;
  if (!ok) {
    if (fd >= 0) unlink(tmp.c_str());
    if (!energy_save_failed_) Warn("cannot save " + energy_path_ + ": " + std::strerror(errno));
    energy_save_failed_ = true;
  }
}

}  // namespace rota::gpu::sim
