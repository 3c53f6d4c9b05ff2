// The loop behind `rota logs [--follow]`, apart from HTTP so it can be tested.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace rota::cli {

// One read of a task's log: the bytes from the offset asked, and the log's size
// when it was read.
struct LogChunk {
  std::string data;
  uint64_t offset = 0;  // where `data` starts
  uint64_t size = 0;    // the whole log's size at the read
};

struct LogFollowIo {
  std::function<Result<LogChunk>(uint64_t offset)> read;  // a chunk from offset
  std::function<bool()> job_final;                         // the job has ended
  std::function<void(const std::string&)> write;           // print what was read
  std::function<void()> wait;                              // between polls
};

// Prints the log from offset 0 to its end. With `follow`, keeps polling until
// the job has ended and then reads once more to the end: what a task wrote
// just before it exited (after the read that preceded the job's end was seen)
// is never lost. Returns the first failed read's status.
Status FollowLog(const LogFollowIo& io, bool follow);

}  // namespace rota::cli
