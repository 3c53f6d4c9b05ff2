#include "cli/log_follow.h"

namespace rota::cli {

Status FollowLog(const LogFollowIo& io, bool follow) {
  uint64_t offset = 0;
  bool ended = false;  // the job was seen final; this pass reads to the end and stops
  while (true) {
    auto chunk = io.read(offset);
    if (!chunk.ok()) return chunk.status();
    io.write(chunk->data);
    offset = chunk->offset + chunk->data.size();
    if (!chunk->data.empty() && offset < chunk->size) continue;  // more right now
    if (!follow || ended) return Status::Ok();
    if (io.job_final()) {
      ended = true;  // one more read: the task may have written since the last one
      continue;
    }
    io.wait();
  }
}

}  // namespace rota::cli
