#pragma once
// Builders for the enforce tests: samples, processes, reservations.

#include <cstdint>
#include <string>
#include <vector>

#include "api/types.h"
#include "enforce/types.h"

namespace rota::enforce::testing {

// `exe` "" is a process whose executable the agent did not report (an older agent).
inline api::GpuProcess Proc(uint32_t pid, uint32_t uid, const std::string& user,
                            const std::string& command = "python train.py",
                            int64_t start_ms = 1000, const std::string& exe = "") {
  api::GpuProcess p;
  p.pid = pid;
  p.uid = uid;
  p.user = user;
  p.command = command;
  p.exe = exe;
  p.start_time_ms = start_ms;
  return p;
}

// A process of `uid`/`user` running `exe` with `command` as its argv.
inline api::GpuProcess ExeProc(uint32_t pid, uint32_t uid, const std::string& user,
                               const std::string& exe, const std::string& command) {
  return Proc(pid, uid, user, command, 1000, exe);
}

// A sample of `gpus` GPUs (index i, uuid "GPU-i") at `t_ms`.
inline api::NodeSample Sample(int64_t t_ms, int gpus = 4) {
  api::NodeSample s;
  s.time_ms = t_ms;
  for (int i = 0; i < gpus; ++i) {
    api::GpuSample g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = "GPU-" + std::to_string(i);
    s.gpus.push_back(g);
  }
  return s;
}

inline ReservationView Reservation(int64_t id, const std::string& owner, std::vector<uint32_t> gpus,
                                   const std::string& node = "node-a") {
  ReservationView r;
  r.id = id;
  r.owner_id = id * 10;
  r.owner_username = owner;
  r.owner_unix_user = owner;
  r.title = "run " + std::to_string(id);
  r.node = node;
  r.gpus = std::move(gpus);
  r.start_ms = 0;
  r.end_ms = 1'000'000'000;
  return r;
}

}  // namespace rota::enforce::testing
